"""aotnn's converters for ONNX ops that TVM's Relax frontend lacks or imports wrongly, and the importer
that prefers them.

Each converter takes the importer's block builder, the node's inputs (None where omitted), its attributes
(as TVM's importer parses them) and the opset, and returns a Relax expression or a Tuple of them (one per
node output). Errors are :class:`ConverterError`; ``onnx_import`` prefixes the node's name and type.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tvm import relax
from tvm.relax.frontend.onnx.onnx_frontend import ONNXGraphImporter, _get_convert_map

from .errors import CaptureError
from .onnx_recurrent import RecurrentImportError, convert_recurrent

Converter = Callable[[relax.BlockBuilder, Sequence[Any], dict, int], relax.Expr]


class ConverterError(CaptureError, ValueError):
    """An aotnn converter cannot import the node (the message names the attribute or input)."""


def _recurrent(op_type: str) -> Converter:
    def convert(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
        try:
            return convert_recurrent(bb, op_type, inputs, attrs)
        except RecurrentImportError as err:
            raise ConverterError(str(err)) from None
    return convert


CONVERTERS: dict[str, Converter] = {
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU"),
    "RNN": _recurrent("RNN"),
}


def supported_ops() -> set[str]:
    """Every op type the import takes: TVM's converters and aotnn's."""
    return set(_get_convert_map()) | set(CONVERTERS) | {"Constant"}


class AotnnOnnxImporter(ONNXGraphImporter):
    """TVM's ONNX graph importer with aotnn's converters (:data:`CONVERTERS`) taking precedence."""

    def _check_for_unsupported_ops(self, graph) -> None:  # noqa: D102
        missing = {node.op_type for node in graph.node if node.op_type not in supported_ops() and node.op_type != "If"}
        if missing:
            raise ConverterError(f"the following operators are not supported: {', '.join(sorted(missing))}")

    def _convert_operator(self, op_name: str, inputs: list, attrs: dict, opset: int) -> relax.Expr:  # noqa: D102
        converter = CONVERTERS.get(op_name)
        if converter is None:
            return super()._convert_operator(op_name, inputs, attrs, opset)
        result = converter(self.bb, list(inputs), attrs, opset)
        return self.bb.normalize(result) if isinstance(result, relax.Expr) else result
