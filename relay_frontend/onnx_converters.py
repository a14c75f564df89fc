"""aotnn's converters for ONNX ops that TVM's Relax frontend lacks or imports wrongly, and the importer
that prefers them.

Each converter takes the importer's block builder, the node's inputs (None where omitted), its attributes
(as TVM's importer parses them) and the opset, and returns a Relax expression or a Tuple of them (one per
node output), or None to leave the node to TVM's converter. Errors are :class:`ConverterError`; ``onnx_import`` prefixes the node's name and type.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax
from tvm.relax.frontend.onnx.onnx_frontend import ONNXGraphImporter, _get_convert_map

from .errors import CaptureError
from .onnx_quantized import QUANTIZED_CONVERTERS
from .onnx_recurrent import RecurrentImportError, convert_recurrent
from .ops.norm import softmax_on_last_axis

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


def _optional(inputs: Sequence[Any], index: int) -> Any:
    return inputs[index] if index < len(inputs) else None


def _rank(value: relax.Expr, what: str) -> int:
    if not isinstance(value.ty, relax.TensorType) or value.ty.ndim < 0:
        raise ConverterError(f"input {what!r} must have a known rank, got {value.ty}")
    return int(value.ty.ndim)


def layer_normalization(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """LayerNormalization with its Mean and InvStdDev outputs (TVM's converter returns scalar zeros for
    them): the statistics over the axes from ``axis`` on, kept as unit axes, in the stash type."""
    x, scale, bias = inputs[0], inputs[1], _optional(inputs, 2)
    ndim = _rank(x, "X")
    axis = int(attrs.get("axis", -1))
    if not -ndim <= axis < ndim:
        raise ConverterError(f"attribute 'axis': expected a value in [{-ndim}, {ndim}), got {axis}")
    axes = list(range(axis % ndim, ndim))
    epsilon = float(attrs.get("epsilon", 1e-5))
    stash_type = int(attrs.get("stash_type", 1))
    dtype = str(x.ty.dtype)
    if bias is None:
        bias = relax.const(np.zeros([int(d) for d in scale.ty.shape.values], str(scale.ty.dtype)), str(scale.ty.dtype))
    y = bb.emit(relax.op.nn.layer_norm(x, scale, bias, axes, epsilon))
    stash = {1: "float32", 11: "float64", 10: "float16", 16: "bfloat16"}.get(stash_type, dtype)
    data = bb.emit(relax.op.astype(x, stash)) if stash != dtype else x
    mean = bb.emit(relax.op.mean(data, axes, keepdims=True))
    centered = bb.emit(relax.op.subtract(data, mean))
    variance = bb.emit(relax.op.mean(bb.emit(relax.op.multiply(centered, centered)), axes, keepdims=True))
    inv_std = bb.emit(relax.op.rsqrt(bb.emit(relax.op.add(variance, relax.const(epsilon, stash)))))
    return relax.Tuple([y, mean, inv_std])


def _constant(value: Any, what: str) -> np.ndarray:
    """The value of a constant input; the error says it must be one (aotnn compiles static shapes)."""
    if isinstance(value, tvm.ir.expr.Constant):
        return np.asarray(value.value.numpy())
    raise ConverterError(f"input {what!r} must be a constant (an initializer or a Constant node): aotnn "
                         f"compiles static shapes")


def _axis(value: int, ndim: int, what: str) -> int:
    if not -ndim <= value < max(ndim, 1):
        raise ConverterError(f"{what}: expected a value in [{-ndim}, {ndim}), got {value}")
    return value % max(ndim, 1)


def top_k(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """TopK through aotnn's ``topk`` rule (plain loop kernels; Relax's topk lowers to a packed function
    the runtime does not have). Ties keep the lower index first, as ONNX asks."""
    from .ops.utility import topk
    x = inputs[0]
    ndim = _rank(x, "X")
    if opset < 10:
        k = int(attrs.get("k", 1))
    else:
        k_value = _constant(inputs[1], "K")
        if k_value.size != 1:
            raise ConverterError(f"input 'K': expected one value, got shape {k_value.shape}")
        k = int(k_value.reshape(-1)[0])
    axis = _axis(int(attrs.get("axis", -1)), ndim, "attribute 'axis'")
    length = int(x.ty.shape.values[axis])
    if not 0 <= k <= length:
        raise ConverterError(f"input 'K': expected a value in [0, {length}] (the length of axis {axis}), got {k}")
    values, indices = topk(x, k, axis, bool(attrs.get("largest", 1))).fields
    return relax.Tuple([values, bb.emit(relax.op.astype(indices, "int64"))])


def cumulative_sum(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """CumSum through aotnn's ``cumsum`` rule (Relax's cumsum has no kernel the planner can place);
    ``reverse`` flips around it, ``exclusive`` shifts the sums by one step."""
    from .ops.shape import cumsum
    x = inputs[0]
    ndim = _rank(x, "x")
    axis_value = _constant(inputs[1], "axis")
    if axis_value.size != 1:
        raise ConverterError(f"input 'axis': expected one value, got shape {axis_value.shape}")
    axis = _axis(int(axis_value.reshape(-1)[0]), ndim, "input 'axis'")
    reverse, exclusive = bool(attrs.get("reverse", 0)), bool(attrs.get("exclusive", 0))
    if reverse:
        x = bb.emit(relax.op.flip(x, axis))
    summed = bb.emit(cumsum(x, axis))
    if exclusive:
        length = int(x.ty.shape.values[axis])
        shape = [int(d) for d in x.ty.shape.values]
        shape[axis] = 1
        zeros = relax.const(np.zeros(shape, str(x.ty.dtype)), str(x.ty.dtype))
        head = bb.emit(relax.op.strided_slice(summed, axes=[axis], begin=[0], end=[length - 1]))
        summed = bb.emit(relax.op.concat([zeros, head], axis=axis))
    if reverse:
        summed = bb.emit(relax.op.flip(summed, axis))
    return summed


def _scalar(value: float, like: relax.Expr) -> relax.Expr:
    dtype = str(like.ty.dtype)
    return relax.const(np.array(value, dtype), dtype)


def celu(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """Celu (missing in TVM's frontend): max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = inputs[0]
    alpha = float(attrs.get("alpha", 1.0))
    if alpha == 0:
        raise ConverterError("attribute 'alpha': must not be 0")
    op = relax.op
    negative = bb.emit(op.multiply(_scalar(alpha, x), bb.emit(op.subtract(
        bb.emit(op.exp(bb.emit(op.divide(x, _scalar(alpha, x))))), _scalar(1.0, x)))))
    return op.add(bb.emit(op.maximum(x, _scalar(0.0, x))), bb.emit(op.minimum(negative, _scalar(0.0, x))))


def lp_normalization(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """LpNormalization (missing in TVM's frontend): x divided by its L1 or L2 norm along ``axis``; a zero
    norm (all of x zero there) gives zeros, as ONNX's reference."""
    x = inputs[0]
    axis = _axis(int(attrs.get("axis", -1)), _rank(x, "input"), "attribute 'axis'")
    p = int(attrs.get("p", 2))
    op = relax.op
    if p == 1:
        norm = bb.emit(op.sum(bb.emit(op.abs(x)), [axis], keepdims=True))
    elif p == 2:
        norm = bb.emit(op.sqrt(bb.emit(op.sum(bb.emit(op.multiply(x, x)), [axis], keepdims=True))))
    else:
        raise ConverterError(f"attribute 'p': expected 1 or 2, got {p}")
    zero = bb.emit(op.equal(norm, _scalar(0.0, x)))
    return op.divide(x, bb.emit(op.where(zero, _scalar(1.0, x), norm)))


def is_inf(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """IsInf with its ``detect_negative``/``detect_positive`` attributes (TVM's converter ignores them)."""
    x = inputs[0]
    negative, positive = bool(attrs.get("detect_negative", 1)), bool(attrs.get("detect_positive", 1))
    infinite = bb.emit(relax.op.isinf(x))
    if negative and positive:
        return infinite
    if not negative and not positive:
        return relax.op.zeros_like(infinite)
    sign = relax.op.greater(x, _scalar(0.0, x)) if positive else relax.op.less(x, _scalar(0.0, x))
    return relax.op.logical_and(infinite, bb.emit(sign))


def power(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr | None:
    """Pow whose exponent has another dtype than the base, or of integers (TVM's converter refuses both):
    computed in float64 and cast to the base's dtype, as ONNX's reference does. None (TVM's converter)
    for a floating-point base and exponent of one dtype."""
    base, exponent = inputs[0], inputs[1]
    base_dtype, exponent_dtype = str(base.ty.dtype), str(exponent.ty.dtype)
    if base_dtype == exponent_dtype and base_dtype.startswith(("float", "bfloat")):
        return None
    if base_dtype.startswith(("float", "bfloat")):
        return relax.op.power(base, bb.emit(relax.op.astype(exponent, base_dtype)))
    wide = [bb.emit(relax.op.astype(v, "float64")) for v in (base, exponent)]
    return relax.op.astype(bb.emit(relax.op.power(*wide)), base_dtype)


def one_hot(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """OneHot of any depth and values dtype (TVM's converter takes integer ones only): indices (cast to
    int64, negative ones counted from the end) compared with 0..depth-1 on a new ``axis``; indices
    outside [-depth, depth) give all off values."""
    indices = inputs[0]
    depth_value = _constant(inputs[1], "depth")
    values = _constant(inputs[2], "values")
    if depth_value.size != 1 or values.size != 2:
        raise ConverterError(f"inputs 'depth' and 'values': expected one and two values, got shapes "
                             f"{depth_value.shape} and {values.shape}")
    depth = int(depth_value.reshape(-1)[0])
    ndim = _rank(indices, "indices")
    axis = _axis(int(attrs.get("axis", -1)), ndim + 1, "attribute 'axis'")
    op = relax.op
    index = bb.emit(op.astype(indices, "int64"))
    depth_const = relax.const(np.array(depth, np.int64), "int64")
    negative = bb.emit(op.less(index, relax.const(np.array(0, np.int64), "int64")))
    index = bb.emit(op.expand_dims(bb.emit(op.where(negative, bb.emit(op.add(index, depth_const)), index)), axis))
    positions = np.arange(depth, dtype=np.int64).reshape([depth] + [1] * (ndim - axis))
    hit = bb.emit(op.equal(index, relax.const(positions, "int64")))
    dtype = str(values.dtype)
    off, on = (relax.const(np.array(v, dtype), dtype) for v in values.reshape(-1))
    return op.where(hit, on, off)


def _softmax_family(fn) -> Converter:
    def convert(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr | None:
        """Opset 13's Softmax/LogSoftmax along an inner axis on the last axis (see
        ``ops.norm.softmax_on_last_axis``); opsets before 13 flatten to 2-D, which TVM's converter does."""
        ndim = _rank(inputs[0], "input")
        axis = int(attrs.get("axis", -1))
        if opset < 13 or ndim == 0:
            return None
        return softmax_on_last_axis(fn, inputs[0], _axis(axis, ndim, "axis"), ndim, bb.emit)
    return convert


CONVERTERS: dict[str, Converter] = {
    "Softmax": _softmax_family(relax.op.nn.softmax),
    "LogSoftmax": _softmax_family(relax.op.nn.log_softmax),
    "OneHot": one_hot,
    "Celu": celu,
    "LpNormalization": lp_normalization,
    "IsInf": is_inf,
    "Pow": power,
    "TopK": top_k,
    "CumSum": cumulative_sum,
    "LayerNormalization": layer_normalization,
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU"),
    "RNN": _recurrent("RNN"),
    **QUANTIZED_CONVERTERS,
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
        if result is None:  # the converter leaves this form to TVM's
            return super()._convert_operator(op_name, inputs, attrs, opset)
        return self.bb.normalize(result) if isinstance(result, relax.Expr) else result
