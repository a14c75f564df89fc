"""An ONNX model as a Cell of ``nn`` layers, so that post-training quantization can rewrite its layers.

:func:`aotnn.load_onnx` imports a model as one graph (no sub-cells). :class:`OnnxLayers` instead
builds one ``nn.Conv2d`` / ``nn.BatchNorm2d`` / ``nn.Dense`` / ``nn.ReLU`` / ``nn.ReLU6`` /
``nn.MaxPool2d`` cell per ONNX node of those kinds (weights from the initializers) and runs the nodes
in the graph's order; ``Add``, ``GlobalAveragePool``, ``Flatten`` and ``Reshape`` run as ops. This is
the op set of convolutional classifiers as PyTorch exports them (ResNet, MobileNetV2, LeNet).

A QDQ model (onnxruntime's ``quantize_static`` with ``QuantFormat.QDQ``: ``DequantizeLinear`` on int8
weights and int32 biases, ``QuantizeLinear``/``DequantizeLinear`` pairs on activations) becomes the
quantization-aware form :func:`convert_to_int8` deploys: its layers are ``Conv2dQuant`` /
``DenseQuant`` whose weight ranges reproduce the model's weight scales (symmetric int8), each pair a
fake quant of the pair's scale and zero point (an ``ActQuant`` when it quantizes a layer's output,
so that it fuses into the layer); a pair repeating the grid of the pair before a max-pool or a
flatten is dropped.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ...common.tensor import Tensor
from ...nn.cell import Cell
from ... import ops
from .ptq import _set_range

__all__ = ["OnnxLayers"]

_AS_OPS = ("Add", "GlobalAveragePool", "Flatten", "Reshape", "Identity", "Dropout")


def _activation_config():
    """The quant config of post-training quantization: symmetric int8 weights, asymmetric per-tensor activations."""
    from . import create_quant_config

    return create_quant_config(per_channel=(True, False), symmetric=(True, False), narrow_range=(True, False))


def _dequantize(node, constants: dict) -> tuple[np.ndarray, np.ndarray]:
    """(float32 values, scales) of a DequantizeLinear of constants: ``(q - zero_point) * scale`` along its axis."""
    from onnx import helper

    q = constants[node.input[0]].astype(np.float64)
    scale = np.asarray(constants[node.input[1]], np.float64)
    zero = np.asarray(constants[node.input[2]], np.float64) if len(node.input) > 2 and node.input[2] else 0.0
    axis = {a.name: helper.get_attribute_value(a) for a in node.attribute}.get("axis", 1)
    if scale.ndim == 1 and scale.size > 1:
        shape = [1] * q.ndim
        shape[axis] = -1
        scale, zero = scale.reshape(shape), np.broadcast_to(zero, scale.shape).reshape(shape)
    return ((q - zero) * scale).astype(np.float32), np.asarray(constants[node.input[1]], np.float64).reshape(-1)


def _attributes(node) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


class OnnxLayers(Cell):
    """A single-input, single-output ONNX classifier as ``nn`` layers run in the graph's node order.

    Args:
        model (Union[str, bytes, onnx.ModelProto]): the model, or the path of its file.

    Raises:
        TypeError: ``model`` is none of those.
        ValueError: a node of an unsupported kind or form (its name, kind and what is expected are
            named), a weight that is not an initializer, or not exactly one graph input and output.
    """

    def __init__(self, model: Any):
        super().__init__()
        import onnx
        from onnx import numpy_helper

        if isinstance(model, (str, os.PathLike)):
            model = onnx.load(os.fspath(model))
        elif isinstance(model, bytes):
            model = onnx.load_from_string(model)
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"model: expected a path, bytes or onnx.ModelProto, got {type(model).__name__}")
        graph = model.graph
        constants = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
        object.__setattr__(self, "_weight_scales", {})  # dequantized int8 weight -> its scales
        skipped: set[str] = set()  # QuantizeLinear outputs whose DequantizeLinear is part of a fake quant step
        folded = set()  # Constant nodes, and Identity / Cast / DequantizeLinear nodes of constants: computed here
        for index, node in enumerate(graph.node):
            if node.op_type == "Constant":
                constants[node.output[0]] = numpy_helper.to_array(_attributes(node)["value"])
            elif node.op_type == "DequantizeLinear" and node.input[0] in constants:
                constants[node.output[0]], scale = _dequantize(node, constants)
                if constants[node.input[0]].dtype == np.int8:
                    self._weight_scales[node.output[0]] = scale
            elif node.op_type in ("Identity", "Cast") and node.input[0] in constants:
                value = constants[node.input[0]]
                if node.op_type == "Cast":
                    value = value.astype(onnx.helper.tensor_dtype_to_np_dtype(_attributes(node)["to"]))
                constants[node.output[0]] = value
            else:
                continue
            folded.add(index)
        inputs = [i.name for i in graph.input if i.name not in constants]
        if len(inputs) != 1 or len(graph.output) != 1:
            raise ValueError(f"model: expected one input and one output, got inputs {inputs} and "
                             f"{len(graph.output)} outputs")
        self.input_name, self.output_name = inputs[0], graph.output[0].name
        self.steps: list[tuple[str, str, list[str], str, Any]] = []  # (kind, cell, inputs, output, extra)
        consumers: dict[str, list] = {}
        for node in graph.node:
            for name in node.input:
                consumers.setdefault(name, []).append(node)
        grids: dict[str, tuple] = {}  # tensor -> the (scale, zero point) of the QDQ pair that produced it
        producers: dict[str, Any] = {}
        for index, node in enumerate(graph.node):
            if index in folded or node.op_type == "DequantizeLinear" and node.input[0] in skipped:
                continue
            if node.op_type == "QuantizeLinear":
                self._add_qdq(index, node, consumers, constants, grids, producers, skipped)
                continue
            self._add_step(index, node, constants)
            producers[node.output[0]] = node

    def _add_step(self, index: int, node, constants: dict[str, np.ndarray]) -> None:
        from ... import nn

        kind, attrs, where = node.op_type, _attributes(node), f"node {node.name or index} ({node.op_type})"

        def constant(position: int) -> np.ndarray:
            if position >= len(node.input) or node.input[position] not in constants:
                raise ValueError(f"model: {where}: input {position} must be an initializer or Constant")
            return constants[node.input[position]]

        cell_name, extra, data = f"node{index}_{kind.lower()}", None, [node.input[0]]
        if kind == "Conv":
            weight = constant(1)
            bias = constant(2) if len(node.input) > 2 and node.input[2] else None
            pads = list(attrs.get("pads", [0, 0, 0, 0]))
            if len(weight.shape) != 4 or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
                raise ValueError(f"model: {where}: expected a 2-D convolution with explicit pads")
            cell = nn.Conv2d(weight.shape[1] * int(attrs.get("group", 1)), weight.shape[0], tuple(weight.shape[2:]),
                             stride=tuple(attrs.get("strides", [1, 1])), pad_mode="pad",
                             padding=(pads[0], pads[2], pads[1], pads[3]), dilation=tuple(attrs.get("dilations", [1, 1])),
                             group=int(attrs.get("group", 1)), has_bias=bias is not None)
            cell.weight.set_data(Tensor(weight.astype(np.float32)))
            if bias is not None:
                cell.bias.set_data(Tensor(bias.astype(np.float32)))
            cell = self._quantized(cell, node.input[1])
        elif kind == "BatchNormalization":
            gamma, beta, mean, var = (constant(i) for i in range(1, 5))
            cell = nn.BatchNorm2d(len(gamma), eps=float(attrs.get("epsilon", 1e-5)))
            for name, value in (("gamma", gamma), ("beta", beta), ("moving_mean", mean), ("moving_variance", var)):
                getattr(cell, name).set_data(Tensor(value.astype(np.float32)))
        elif kind == "Relu":
            cell = nn.ReLU()
        elif kind == "Clip":
            low = float(constant(1)) if len(node.input) > 1 and node.input[1] else attrs.get("min", None)
            high = float(constant(2)) if len(node.input) > 2 and node.input[2] else attrs.get("max", None)
            if (low, high) != (0.0, 6.0):
                raise ValueError(f"model: {where}: expected Clip(0, 6) (ReLU6), got Clip({low}, {high})")
            cell = nn.ReLU6()
        elif kind == "MaxPool":
            pads = list(attrs.get("pads", [0, 0, 0, 0]))
            if pads[:2] != pads[2:] or attrs.get("ceil_mode", 0):
                raise ValueError(f"model: {where}: expected symmetric pads and ceil_mode 0, got pads {pads}")
            cell = nn.MaxPool2d(tuple(attrs["kernel_shape"]), tuple(attrs.get("strides", [1, 1])),
                                pad_mode="pad", padding=tuple(pads[:2]))
        elif kind == "Gemm":
            weight, bias = constant(1), constant(2) if len(node.input) > 2 else None
            if not attrs.get("transB", 0) or attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 \
                    or attrs.get("beta", 1.0) != 1.0:
                raise ValueError(f"model: {where}: expected Gemm(transB=1, alpha=1, beta=1)")
            cell = nn.Dense(weight.shape[1], weight.shape[0], has_bias=bias is not None)
            cell.weight.set_data(Tensor(weight.astype(np.float32)))
            if bias is not None:
                cell.bias.set_data(Tensor(bias.reshape(-1).astype(np.float32)))
            cell = self._quantized(cell, node.input[1])
        elif kind in _AS_OPS:
            cell, cell_name = None, ""
            if kind == "Add":
                data = list(node.input[:2])
                if any(name in constants for name in data):
                    raise ValueError(f"model: {where}: expected an addition of two computed tensors")
            elif kind == "Flatten":
                extra = int(attrs.get("axis", 1))
            elif kind == "Reshape":
                extra = tuple(int(v) for v in constant(1))
        else:
            raise ValueError(f"model: {where}: expected one of Conv, BatchNormalization, Relu, Clip, MaxPool, "
                             f"Gemm, {', '.join(_AS_OPS)}, got {kind}")
        if cell is not None:
            setattr(self, cell_name, cell)
        self.steps.append((kind, cell_name, data, node.output[0], extra))

    def _quantized(self, cell: Cell, weight_name: str) -> Cell:
        """The quantization-aware layer of a float ``cell`` whose weight a QDQ model gives with int8 scales."""
        scale = self._weight_scales.get(weight_name)
        if scale is None:
            return cell
        from .ptq import PostTrainingQuantization

        channels = cell.weight.shape[0]
        per_channel = np.size(scale) > 1
        quant = PostTrainingQuantization(per_channel=(per_channel, False))._quant_layer(cell, None)
        peak = 127.0 * np.broadcast_to(np.asarray(scale, np.float64).reshape(-1), (channels if per_channel else 1,))
        _set_range(quant.fake_quant_weight, -peak, peak)
        return quant

    def _add_qdq(self, index: int, node, consumers: dict, constants: dict, grids: dict, producers: dict,
                 skipped: set) -> None:
        """A QuantizeLinear / DequantizeLinear pair on a computed tensor: one fake quant step."""
        from ... import nn

        where = f"node {node.name or index} (QuantizeLinear)"
        pair = consumers.get(node.output[0], [])
        if len(pair) != 1 or pair[0].op_type != "DequantizeLinear":
            raise ValueError(f"model: {where}: expected its output to feed one DequantizeLinear")
        scale = np.asarray(constants[node.input[1]], np.float64).reshape(-1)
        zero = constants[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros((), np.uint8)
        if scale.size != 1:
            raise ValueError(f"model: {where}: expected a per-tensor activation scale, got {scale.size} scales")
        qmin, qmax = (0, 255) if zero.dtype == np.uint8 else (-128, 127)
        grid = (float(scale[0]), int(zero.reshape(-1)[0]), qmin)
        skipped.add(node.output[0])
        source = producers.get(node.input[0])
        if source is not None and source.op_type in ("MaxPool", "Flatten", "Reshape") \
                and grids.get(source.input[0]) == grid:  # the same grid again: values are on it already
            self.steps.append(("Identity", "", [node.input[0]], pair[0].output[0], None))
            grids[pair[0].output[0]] = grid
            return
        after_layer = source is not None and source.op_type in ("Conv", "Gemm")
        config = _activation_config()
        cell = nn.ActQuant(nn.Identity(), quant_config=config) if after_layer else config.activation()
        fake_quant = cell.fake_quant_act if after_layer else cell
        _set_range(fake_quant, np.array([grid[0] * (qmin - grid[1])]), np.array([grid[0] * (qmax - grid[1])]))
        cell_name = f"node{index}_qdq"
        setattr(self, cell_name, cell)
        self.steps.append(("QDQ", cell_name, [node.input[0]], pair[0].output[0], None))
        grids[pair[0].output[0]] = grid

    def construct(self, x):
        values = {self.input_name: x}
        for kind, cell_name, data, output, extra in self.steps:
            args = [values[name] for name in data]
            if cell_name:
                values[output] = getattr(self, cell_name)(args[0])
            elif kind == "Add":
                values[output] = ops.add(args[0], args[1])
            elif kind == "GlobalAveragePool":
                values[output] = ops.mean(args[0], (2, 3), True)
            elif kind == "Flatten":
                shape = args[0].shape
                values[output] = ops.reshape(args[0], (int(np.prod(shape[:extra])), -1))
            elif kind == "Reshape":
                shape = tuple(args[0].shape[i] if size == 0 else size for i, size in enumerate(extra))
                values[output] = ops.reshape(args[0], shape)
            else:  # Identity, Dropout (inference)
                values[output] = args[0]
        return values[self.output_name]
