"""ONNX in and out: ``aotnn.export(..., file_format='ONNX')`` writes a network as ONNX, :func:`load_onnx`
imports an ONNX model as a Cell compiled like any other."""
from __future__ import annotations

import inspect
import keyword
import os
from typing import Any

from aotnn_runtime.weights import atomic_write

from .common.parameter import Parameter
from .common.tensor import Tensor
from .nn.cell import Cell


def _as_tensor(value: Any, where: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return Tensor(value)
    raise TypeError(f"{where}: expected a Tensor or numpy array, got {type(value).__name__}")


def _flatten_inputs(names: list[str], inputs: tuple) -> tuple[list[tuple[str, Tensor]], list[Any]]:
    """The graph inputs (one per tensor, nested tuples named ``hx_0``, ``hx_1``...) and a template that
    rebuilds ``construct``'s arguments from them."""
    flat: list[tuple[str, Tensor]] = []

    def walk(value: Any, name: str, where: str) -> Any:
        if isinstance(value, (tuple, list)):
            return type(value)(walk(v, f"{name}_{i}", f"{where}[{i}]") for i, v in enumerate(value))
        flat.append((name, _as_tensor(value, where)))
        return ("__input__", len(flat) - 1)

    template = [walk(value, name, f"inputs[{i}]") for i, (name, value) in enumerate(zip(names, inputs))]
    return flat, template


def _rebuild(template: Any, symbolic: tuple) -> Any:
    if isinstance(template, tuple) and len(template) == 2 and template[0] == "__input__":
        return symbolic[template[1]]
    if isinstance(template, (tuple, list)):
        return type(template)(_rebuild(t, symbolic) for t in template)
    return template


def to_onnx_model(net, *inputs: Any, opset: int | None = None):
    """Capture ``net`` on ``inputs``' shapes and dtypes and translate the graph to an ONNX model.

    Args:
        net: the Cell to export (its current training flag decides the graph, as for a call).
        inputs: example Tensors or numpy arrays fixing the input signature (tuples of them for
            arguments such as LSTM's ``hx``: their graph inputs are named ``hx_0``, ``hx_1``).
        opset: ONNX opset (default 17).
    Returns:
        onnx.ModelProto, checked with ``onnx.checker``.
    Raises:
        ValueError: no inputs.
        TypeError: an input that is not a Tensor or numpy array.
        relay_frontend.onnx_export.UnsupportedOnnxOpError: an op ONNX cannot express (named).
    """
    from relay_frontend import onnx_export
    from .jit.cell_call import _input_names
    from .jit.compiled import capture_function

    if not inputs:
        raise ValueError("inputs: export needs at least one example input")
    flat, template = _flatten_inputs(_input_names(net, len(inputs)), inputs)
    specs = [(name, t.shape, t.dtype.name) for name, t in flat]
    mod, capture, _, num_outputs = capture_function(
        lambda *xs: net._construct_with_precision(tuple(_rebuild(template, xs)), {}), specs)
    weights = {name: param.asnumpy() for name, param in zip(capture.param_names, capture.param_keys)}
    random = set(capture.input_names[len(specs):])
    return onnx_export.to_onnx(mod, capture.input_names, capture.param_names, weights, num_outputs=num_outputs,
                               random_inputs=random, opset=opset or onnx_export.DEFAULT_OPSET,
                               graph_name=type(net).__name__)


def export_onnx(net, *inputs: Any, file_name: str, opset: int | None = None) -> str:
    """Write ``net`` as an ONNX file (MindSpore's ``export(..., file_format='ONNX')``).

    Args:
        net: the Cell to export.
        inputs: example Tensors or numpy arrays fixing the input signature.
        file_name: output path; '.onnx' is appended if missing.
        opset: ONNX opset (default 17).
    Returns:
        the path written.
    Raises:
        IsADirectoryError: the path is a directory.
    """
    path = os.fspath(file_name)
    if not path.endswith(".onnx"):
        path += ".onnx"
    return write_onnx(to_onnx_model(net, *inputs, opset=opset), path)


def write_onnx(model: Any, path: str) -> str:
    """Write an ONNX ``model`` to exactly ``path`` (atomically, replacing a file there); returns ``path``.

    Raises:
        IsADirectoryError: ``path`` is a directory.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    atomic_write(path, lambda stream: stream.write(model.SerializeToString()))
    return path


def _identifier(name: str, taken: set[str]) -> str:
    ident = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "input"
    if not (ident[0].isalpha() or ident[0] == "_"):
        ident = "input_" + ident
    base, count = ident, 0
    while ident in taken or keyword.iskeyword(ident):
        count += 1
        ident = f"{base}_{count}"
    taken.add(ident)
    return ident


class OnnxCell(Cell):
    """A Cell running an imported ONNX graph; its parameters are the model's floating-point
    initializers, under their ONNX names (MindSpore names for models aotnn exported).

    Args:
        graph: the imported graph (``relay_frontend.onnx_import.OnnxGraph``).
    """

    def __init__(self, graph):
        super().__init__()
        object.__setattr__(self, "_graph", graph)
        for name in graph.param_names:
            self.insert_param_to_cell(name, Parameter(Tensor(graph.weights[name]), name=name),
                                      check_name_contain_dot=False)
        taken: set[str] = set()
        arg_names = [_identifier(name, taken) for name in graph.input_names]
        run = self._run

        def construct(*inputs):
            return run(*inputs)
        construct.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in arg_names])
        object.__setattr__(self, "construct", construct)

    @property
    def graph(self):
        """The imported graph (input and output specs, op counts, opset)."""
        return self._graph

    def _run(self, *inputs: Any) -> Any:
        from .ops._dispatch import apply

        graph = self._graph
        if len(inputs) != len(graph.input_names):
            raise TypeError(f"{type(self).__name__}: expected {len(graph.input_names)} inputs "
                            f"({', '.join(graph.input_names)}), got {len(inputs)}")
        for name, value, (shape, dtype) in zip(graph.input_names, inputs, graph.input_specs):
            if not isinstance(value, Tensor):
                raise TypeError(f"input {name!r}: expected a Tensor, got {type(value).__name__}")
            if tuple(value.shape) != tuple(shape) or value.dtype.name != dtype:
                raise ValueError(f"input {name!r}: the model was imported for {dtype}{list(shape)}, got "
                                 f"{value.dtype.name}{list(value.shape)} (load_onnx(..., shape_dict=...) "
                                 f"imports it for other shapes)")
        params = [self._params[name] for name in graph.param_names]
        outputs = apply("onnx_graph", *inputs, *params, graph=graph)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def extend_repr(self) -> str:
        graph = self._graph
        inputs = ", ".join(f"{n}: {d}{list(s)}" for n, (s, d) in zip(graph.input_names, graph.input_specs))
        return f"inputs=[{inputs}], nodes={graph.node_count}, opset={graph.opset}"


def load_onnx(path: str | os.PathLike | bytes, shape_dict: dict[str, Any] | None = None) -> OnnxCell:
    """Import an ONNX model as a Cell that compiles and runs like any network.

    The model is validated with ``onnx.checker`` and imported by TVM's Relax ONNX frontend (with aotnn's
    converters for the ops it lacks or gets wrong: LSTM/GRU/RNN, TopK, CumSum, ...). Quantized models in
    onnxruntime's QOperator format (QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger,
    (Dynamic)QuantizeLinear, DequantizeLinear and com.microsoft's QGemm, QLinearAdd and
    QLinearGlobalAveragePool) import into aotnn's integer graph (int8 kernels, int32 accumulators,
    requantization as onnxruntime computes it); their scales and zero points must be constants. Calling
    the Cell compiles it through the same pipeline as a captured network, ``aotnn.export`` writes
    it as an artifact, a bundle or ONNX again, and ``aotnn.load_checkpoint`` loads weights into it
    by initializer name.

    Args:
        path: the .onnx file (or its bytes, or an ``onnx.ModelProto``).
        shape_dict: static shapes by input name, for inputs with dynamic dimensions or to import for
            other shapes. Default: the shapes the model declares.
    Returns:
        an :class:`OnnxCell` taking the model's inputs in order.
    Raises:
        FileNotFoundError: no such file.
        relay_frontend.onnx_import.OnnxImportError (a ValueError): a malformed or truncated file, an op
            TVM cannot import, or a conversion failure: the message names the node (name and op type).

    Examples:
        >>> net = aotnn.load_onnx("resnet18.onnx")
        >>> y = net(Tensor(np.ones((1, 3, 224, 224), np.float32)))
    """
    from relay_frontend.onnx_import import import_onnx

    return OnnxCell(import_onnx(path, shape_dict=shape_dict))
