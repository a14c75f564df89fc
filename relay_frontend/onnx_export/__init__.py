"""ONNX export: a captured Relax module (high-level ops, before legalization) -> an ONNX model.

One module per op family registers converters keyed by Relax op name; :func:`to_onnx` walks the
function's bindings in order and calls them. Parameters become initializers under their MindSpore
names, data inputs keep the names of ``construct``'s arguments.
"""
from . import activation, conv, create, elementwise, image, index, linalg, norm, pool, reduce, shape  # noqa: F401
from .context import CONVERTERS, OnnxExportError, UnsupportedOnnxOpError
from .driver import DEFAULT_OPSET, to_onnx


def supported_ops() -> list[str]:
    """The Relax ops the exporter translates."""
    return sorted(CONVERTERS)


__all__ = ["to_onnx", "supported_ops", "OnnxExportError", "UnsupportedOnnxOpError", "DEFAULT_OPSET"]
