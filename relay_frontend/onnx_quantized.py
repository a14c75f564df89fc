"""Converters of ONNX's quantized operators (QOperator format) into aotnn's integer graph.

QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger, QuantizeLinear, DequantizeLinear,
DynamicQuantizeLinear, and onnxruntime's com.microsoft QGemm, QLinearAdd and QLinearGlobalAveragePool
become the ``int8_conv2d`` / ``int8_dense`` products with int32 accumulators, the ``int8_requantize``
epilogue and the ``int8_add`` / ``int8_quantize`` / ``int8_dequantize`` rules
(``relay_frontend/ops/int8*.py``).

Requantization follows onnxruntime: the float32 multiplier ``x_scale * w_scale / y_scale`` (that order,
one per output channel), the int32 bias and the input zero-point terms folded into one int32 bias,
``round_half_even(float32(acc + bias) * multiplier) + y_zero_point`` clipped to the output dtype.

Agreement with onnxruntime (tests/relay_frontend/test_onnx_quantized.py, tools/onnx_qoperator.py): QLinearConv,
QLinearMatMul, QGemm, QLinearGlobalAveragePool, QuantizeLinear and the integer products are bit-exact (the
same formula; onnxruntime's non-VNNI uint8 x int8 kernels saturate in int16 with full-range weights, 7-bit
weights never do). QLinearAdd is within 1 step: onnxruntime's vector kernel rounds about 5 in a million
elements differently (ties of its own evaluation order), which later layers can carry on.

Scales and zero points must be constants (aotnn compiles the grids into the kernels), except the
input zero point of MatMulInteger (DynamicQuantizeLinear's output in dynamically quantized models).
Errors name the input at fault; ``onnx_import`` prefixes the node.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax

_op = relax.op
_RANGES = {"int8": (-128, 127), "uint8": (0, 255)}

# the positions of scales and zero points per op: initializers there become constants at import
QPARAM_INPUTS: dict[str, tuple[int, ...]] = {
    "QLinearConv": (1, 2, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 4, 5, 6, 7), "QGemm": (1, 2, 4, 5, 6, 7, 8),
    "QLinearAdd": (1, 2, 4, 5, 6, 7), "QLinearGlobalAveragePool": (1, 2, 3, 4), "MatMulInteger": (1, 2, 3),
    "ConvInteger": (1, 2, 3), "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2),
}
# the input names of each op (ONNX's and onnxruntime's specs) and the positions that are required
INPUT_NAMES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "QLinearConv": (("x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point",
                     "B"), tuple(range(8))),
    "QLinearMatMul": (("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"),
                      tuple(range(8))),
    "QGemm": (("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "C", "y_scale", "y_zero_point"),
              tuple(range(6))),
    "QLinearAdd": (("A", "A_scale", "A_zero_point", "B", "B_scale", "B_zero_point", "C_scale", "C_zero_point"),
                   (0, 1, 3, 4, 6)),
    "QLinearGlobalAveragePool": (("X", "x_scale", "x_zero_point", "y_scale", "y_zero_point"), tuple(range(5))),
    "MatMulInteger": (("A", "B", "a_zero_point", "b_zero_point"), (0, 1)),
    "ConvInteger": (("x", "w", "x_zero_point", "w_zero_point"), (0, 1)),
    "QuantizeLinear": (("x", "y_scale", "y_zero_point"), (0, 1)),
    "DequantizeLinear": (("x", "x_scale", "x_zero_point"), (0, 1)),
}
# onnxruntime's contrib ops taken from the com.microsoft domain
MICROSOFT_OPS = ("QGemm", "QLinearAdd", "QLinearGlobalAveragePool")


def missing_input(node: Any) -> str:
    """``input 'name' (position i) is missing`` for the first required input ``node`` leaves empty, else ''."""
    names, required = INPUT_NAMES.get(node.op_type, ((), ()))
    for index in required:
        if index >= len(node.input) or not node.input[index]:
            return f"input {names[index]!r} (position {index}) is missing"
    return ""


def _error(message: str) -> Exception:
    from .onnx_converters import ConverterError
    return ConverterError(message)


def _input(inputs: Sequence[Any], index: int, name: str, required: bool = True) -> Any:
    value = inputs[index] if index < len(inputs) else None
    if value is None and required:
        raise _error(f"input {name!r} (position {index}) is missing")
    return value


def _dtype(value: relax.Expr) -> str:
    return str(value.ty.dtype)


def _shape(value: relax.Expr) -> tuple[int, ...]:
    return tuple(int(d) for d in value.ty.shape.values)


def _constant(inputs: Sequence[Any], index: int, name: str, dtypes: Sequence[str]) -> np.ndarray:
    """The value of a constant input of one of ``dtypes``."""
    value = _input(inputs, index, name)
    if not isinstance(value, tvm.ir.expr.Constant):
        raise _error(f"input {name!r} must be a constant (an initializer or a Constant node): aotnn compiles "
                     f"quantization scales and zero points into the kernels")
    array = np.asarray(value.value.numpy())
    if str(array.dtype) not in dtypes:
        raise _error(f"input {name!r}: expected {' or '.join(dtypes)}, got {array.dtype}")
    return array


def _scale(inputs: Sequence[Any], index: int, name: str, channels: int | None = None) -> np.ndarray:
    """A positive finite float scale as float32, shape (1,) or (``channels``,)."""
    array = _constant(inputs, index, name, ("float32", "float16", "float64")).astype(np.float32).reshape(-1)
    allowed = (1,) if channels is None else (1, channels)
    if array.size not in allowed:
        raise _error(f"input {name!r}: expected {' or '.join(map(str, allowed))} values, got shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):
        raise _error(f"input {name!r}: expected finite positive scales, got {array.tolist()[:4]}")
    return array


def _zero_point(inputs: Sequence[Any], index: int, name: str, dtype: str, channels: int | None = None,
                required: bool = False) -> np.ndarray:
    """A zero point of ``dtype`` (that of the tensor it belongs to) as int64, shape (1,) or (``channels``,)."""
    if _input(inputs, index, name, required) is None:
        return np.zeros(1, np.int64)
    array = _constant(inputs, index, name, (dtype,)).astype(np.int64).reshape(-1)
    allowed = (1,) if channels is None else (1, channels)
    if array.size not in allowed:
        raise _error(f"input {name!r}: expected {' or '.join(map(str, allowed))} values, got shape {array.shape}")
    return array


def _narrow(inputs: Sequence[Any], index: int, name: str) -> relax.Expr:
    value = _input(inputs, index, name)
    if not isinstance(value.ty, relax.TensorType) or _dtype(value) not in _RANGES:
        raise _error(f"input {name!r}: expected an int8 or uint8 tensor, got {value.ty}")
    return value


def _signed_weight(weight: np.ndarray, zero: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """uint8 weights as int8 (w - 128 with the zero point moved alike: w - zw is unchanged)."""
    if weight.dtype == np.uint8:
        return (weight.astype(np.int16) - 128).astype(np.int8), zero - 128
    return weight, zero


def _weight_zero(zero: np.ndarray, channels: int) -> relax.Expr | None:
    if not np.any(zero):
        return None
    return relax.const(np.broadcast_to(zero, (channels,)).astype(np.int32), "int32")


def _int32(values: np.ndarray, name: str) -> np.ndarray:
    if values.size and (values.min() < -2 ** 31 or values.max() >= 2 ** 31):
        raise _error(f"input {name!r}: the bias with the zero-point terms folded in overflows int32")
    return values.astype(np.int32)


def _multiplier(x_scale: np.ndarray, w_scale: np.ndarray, y_scale: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """onnxruntime's float32 output scale, ``x_scale * w_scale / y_scale`` evaluated in that order."""
    product = x_scale * w_scale
    if alpha != 1.0:
        product = product * np.float32(alpha)
    return (product / y_scale).astype(np.float32)


def _requantize(bb: relax.BlockBuilder, acc: relax.Expr, bias: np.ndarray, multiplier: np.ndarray, zero: int,
                dtype: str, axis: int) -> relax.Expr:
    from .ops.int8 import int8_requantize
    low, high = _RANGES[dtype]
    return int8_requantize(acc, relax.const(bias, "int32"), relax.const(multiplier, "float32"), zero_point=zero,
                           qmin=low, qmax=high, out_dtype=dtype, axis=axis)


# -- convolutions -----------------------------------------------------------------------------------
def _conv_pads(attrs: dict, x_shape: tuple[int, ...], kernel: tuple[int, ...], strides, dilations) -> tuple:
    """MindSpore-order padding (top, bottom, left, right) from ONNX's pads or auto_pad."""
    auto_pad = attrs.get("auto_pad", "NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad in ("NOTSET", ""):
        pads = [int(p) for p in attrs.get("pads", [0, 0, 0, 0])]
        if len(pads) != 4:
            raise _error(f"attribute 'pads': expected 4 values of a 2-D convolution, got {pads}")
        return pads[0], pads[2], pads[1], pads[3]
    if auto_pad == "VALID":
        return 0, 0, 0, 0
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise _error(f"attribute 'auto_pad': expected NOTSET, VALID, SAME_UPPER or SAME_LOWER, got {auto_pad}")
    result = []
    for size, k, s, d in zip(x_shape[2:], kernel, strides, dilations):
        out = -(-size // s)
        need = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = need // 2, need - need // 2
        result += [small, large] if auto_pad == "SAME_UPPER" else [large, small]
    return tuple(result)


def _conv_product(x: relax.Expr, attrs: dict, x_zero: int, w_zero: np.ndarray, weight: np.ndarray,
                  fold: bool) -> relax.Expr:
    """int8_conv2d of the node's input ``x`` and its constant weight (int32 accumulators, NCHW)."""
    from .ops.int8 import int8_conv2d
    if len(_shape(x)) != 4 or weight.ndim != 4:
        raise _error(f"inputs 'x' and 'w': expected a 2-D convolution (4-D tensors), got {_shape(x)} and "
                     f"{weight.shape}")
    strides = tuple(int(s) for s in attrs.get("strides", [1, 1]))
    dilations = tuple(int(d) for d in attrs.get("dilations", [1, 1]))
    kernel = tuple(int(k) for k in attrs.get("kernel_shape", weight.shape[2:]))
    if kernel != weight.shape[2:]:
        raise _error(f"attribute 'kernel_shape': {kernel} differs from the weight's {weight.shape[2:]}")
    groups = int(attrs.get("group", 1))
    padding = _conv_pads(attrs, _shape(x), kernel, strides, dilations)
    return int8_conv2d(x, relax.const(weight, "int8"), x_zero, _weight_zero(w_zero, weight.shape[0]), strides,
                       "pad", padding, dilations, groups, fold)


def _folded_bias(bias: np.ndarray, weight: np.ndarray, w_zero: np.ndarray, x_zero: int, axes: tuple) -> np.ndarray:
    """``bias - x_zero * sum(w - w_zero)`` per output channel (int64), the term int8_conv2d/int8_dense then skip."""
    zero = np.broadcast_to(w_zero, (weight.shape[0],)).reshape((-1,) + (1,) * (weight.ndim - 1))
    return bias.astype(np.int64) - x_zero * (weight.astype(np.int64) - zero).sum(axis=axes)


def qlinear_conv(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """QLinearConv: int8 convolution, bias and zero-point terms in one int32 bias, requantized."""
    x = _narrow(inputs, 0, "x")
    x_scale = _scale(inputs, 1, "x_scale")
    x_zero = int(_zero_point(inputs, 2, "x_zero_point", _dtype(x), required=True)[0])
    weight = _constant(inputs, 3, "w", ("int8", "uint8"))
    channels = weight.shape[0]
    w_scale = _scale(inputs, 4, "w_scale", channels)
    w_zero = _zero_point(inputs, 5, "w_zero_point", str(weight.dtype), channels, required=True)
    y_scale = _scale(inputs, 6, "y_scale")
    y_dtype = str(_constant(inputs, 7, "y_zero_point", tuple(_RANGES)).dtype)
    y_zero = int(_zero_point(inputs, 7, "y_zero_point", y_dtype, required=True)[0])
    bias = np.zeros(channels, np.int64)
    if _input(inputs, 8, "B", required=False) is not None:
        bias = _constant(inputs, 8, "B", ("int32",)).astype(np.int64).reshape(-1)
        if bias.size != channels:
            raise _error(f"input 'B': expected {channels} values (one per output channel), got {bias.size}")
    weight, w_zero = _signed_weight(weight, w_zero)
    acc = bb.emit(_conv_product(x, attrs, x_zero, w_zero, weight, True))
    folded = _int32(_folded_bias(bias, weight, w_zero, x_zero, (1, 2, 3)), "B")
    multiplier = np.broadcast_to(_multiplier(x_scale, w_scale, y_scale), (channels,)).copy()
    return _requantize(bb, acc, folded, multiplier, y_zero, y_dtype, 1)


def _computed_zero_point(inputs, index: int, name: str, data):
    """The zero point of ``data`` at ``inputs[index]`` when computed at run time (dynamic quantization),
    checked to be one value of ``data``'s dtype; None when absent or constant."""
    zero_input = _input(inputs, index, name, required=False)
    if zero_input is None or isinstance(zero_input, tvm.ir.expr.Constant):
        return None
    if _dtype(zero_input) != _dtype(data) or int(np.prod(_shape(zero_input), dtype=np.int64)) != 1:
        raise _error(f"input '{name}': expected one {_dtype(data)} value, got {zero_input.ty}")
    return zero_input


def conv_integer(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """ConvInteger: the int32 ``sum((x - x_zero_point) * (w - w_zero_point))`` of a constant weight.

    A computed ``x_zero_point`` (DynamicQuantizeLinear's, in dynamically quantized models) is subtracted
    before an int32 convolution, so that the padding holds real zero."""
    x = _narrow(inputs, 0, "x")
    weight = _constant(inputs, 1, "w", ("int8", "uint8"))
    w_zero = _zero_point(inputs, 3, "w_zero_point", str(weight.dtype), weight.shape[0])
    weight, w_zero = _signed_weight(weight, w_zero)
    zero_input = _computed_zero_point(inputs, 2, "x_zero_point", x)
    if zero_input is None:
        x_zero = int(_zero_point(inputs, 2, "x_zero_point", _dtype(x))[0])
        return _conv_product(x, attrs, x_zero, w_zero, weight, False)
    centered = bb.emit(_op.subtract(bb.emit(_op.astype(x, "int32")),
                                    bb.emit(_op.astype(bb.emit(_op.reshape(zero_input, ())), "int32"))))
    zero = np.broadcast_to(w_zero, (weight.shape[0],)).reshape(-1, 1, 1, 1)
    kernel = (weight.astype(np.int64) - zero).astype(np.int32)
    strides = tuple(int(s) for s in attrs.get("strides", [1, 1]))
    dilations = tuple(int(d) for d in attrs.get("dilations", [1, 1]))
    top, bottom, left, right = _conv_pads(attrs, _shape(x), kernel.shape[2:], strides, dilations)
    return _op.nn.conv2d(centered, relax.const(kernel, "int32"), strides=strides, padding=(top, left, bottom, right),
                         dilation=dilations, groups=int(attrs.get("group", 1)), out_dtype="int32")


# -- matrix products --------------------------------------------------------------------------------
def _dense(bb: relax.BlockBuilder, a: relax.Expr, weight_t: np.ndarray, a_zero: int, w_zero: np.ndarray,
           fold: bool) -> relax.Expr:
    """int8_dense of ``a`` (..., K) with a constant (K, N) weight: int32 (..., N), leading axes flattened."""
    from .ops.int8 import int8_dense
    shape = _shape(a)
    if len(shape) < 1 or weight_t.ndim != 2 or shape[-1] != weight_t.shape[0]:
        raise _error(f"inputs 'a' and 'b': expected (..., K) and a constant (K, N), got {shape} and {weight_t.shape}")
    rows = int(np.prod(shape[:-1], dtype=np.int64)) if len(shape) > 1 else 1
    flat = a if len(shape) == 2 else bb.emit(_op.reshape(a, (rows, shape[-1])))
    weight = np.ascontiguousarray(weight_t.T)
    acc = bb.emit(int8_dense(flat, relax.const(weight, "int8"), a_zero, _weight_zero(w_zero, weight.shape[0]), fold))
    if len(shape) == 2:
        return acc
    return bb.emit(_op.reshape(acc, tuple(shape[:-1]) + (weight.shape[0],)))


def _matmul_weight(inputs: Sequence[Any], index: int, name: str, zero_index: int, zero_name: str,
                   batched: bool = False):
    """A constant (K, N) weight (or (B, K, N) where ``batched``) as int8 with its zero point per column."""
    weight = _constant(inputs, index, name, ("int8", "uint8"))
    if weight.ndim != 2 and not (batched and weight.ndim == 3):
        raise _error(f"input {name!r}: expected a {'2-D or 3-D' if batched else '2-D'} constant (..., K, N), "
                     f"got shape {weight.shape}")
    zero = _zero_point(inputs, zero_index, zero_name, str(weight.dtype), weight.shape[-1])
    if weight.dtype == np.uint8:
        return (weight.astype(np.int16) - 128).astype(np.int8), zero - 128
    return weight, zero


def matmul_integer(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr | None:
    """MatMulInteger of a constant B: int8_dense; a computed ``a_zero_point`` (dynamic quantization)
    subtracts ``a_zero_point * sum(B - b_zero_point)``. None (TVM's converter) when B is computed."""
    a = _narrow(inputs, 0, "A")
    if not isinstance(_input(inputs, 1, "B"), tvm.ir.expr.Constant):
        return None
    weight, w_zero = _matmul_weight(inputs, 1, "B", 3, "b_zero_point")
    zero_input = _computed_zero_point(inputs, 2, "a_zero_point", a)
    if zero_input is None:
        a_zero = int(_zero_point(inputs, 2, "a_zero_point", _dtype(a))[0])
        return _dense(bb, a, weight, a_zero, w_zero, False)
    acc = _dense(bb, a, weight, 0, w_zero, False)
    sums = (weight.astype(np.int64) - np.broadcast_to(w_zero, (weight.shape[1],))).sum(axis=0).astype(np.int32)
    zero = bb.emit(_op.reshape(bb.emit(_op.astype(zero_input, "int32")), (1,)))
    return _op.subtract(acc, bb.emit(_op.multiply(zero, relax.const(sums, "int32"))))


def _qmatmul(bb: relax.BlockBuilder, inputs: Sequence[Any], names: tuple[str, ...], positions: tuple[int, ...],
             weight: np.ndarray, w_zero: np.ndarray, bias: np.ndarray, alpha: float = 1.0,
             a: relax.Expr | None = None) -> relax.Expr:
    """The requantized int8 product shared by QLinearMatMul and QGemm (``a``: the node's, or a slice of it)."""
    a_index, a_scale_index, a_zero_index, w_scale_index, y_scale_index, y_zero_index = positions
    data = _narrow(inputs, a_index, names[0])
    a = data if a is None else a
    a_scale = _scale(inputs, a_scale_index, names[1])
    a_zero = int(_zero_point(inputs, a_zero_index, names[2], _dtype(data))[0])
    columns = weight.shape[1]
    w_scale = _scale(inputs, w_scale_index, names[3], columns)
    y_scale = _scale(inputs, y_scale_index, names[4])
    y_dtype = "uint8"
    if _input(inputs, y_zero_index, names[5], required=False) is not None:
        y_dtype = str(_constant(inputs, y_zero_index, names[5], tuple(_RANGES)).dtype)
    y_zero = int(_zero_point(inputs, y_zero_index, names[5], y_dtype)[0])
    acc = _dense(bb, a, weight, a_zero, w_zero, True)
    weight_rows = np.ascontiguousarray(weight.T)
    folded = _int32(_folded_bias(bias, weight_rows, w_zero, a_zero, (1,)), "bias")
    multiplier = np.broadcast_to(_multiplier(a_scale, w_scale, y_scale, alpha), (columns,)).copy()
    return _requantize(bb, acc, folded, multiplier, y_zero, y_dtype, len(_shape(a)) - 1)


def qlinear_matmul(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """QLinearMatMul of a constant b: int8_dense, requantized per output column; a (B, K, N) b takes
    one product per batch of a (B, M, K)."""
    weight, w_zero = _matmul_weight(inputs, 3, "b", 5, "b_zero_point", batched=True)
    names = ("a", "a_scale", "a_zero_point", "b_scale", "y_scale", "y_zero_point")
    positions = (0, 1, 2, 4, 6, 7)
    bias = np.zeros(weight.shape[-1], np.int64)
    if weight.ndim == 2:
        return _qmatmul(bb, inputs, names, positions, weight, w_zero, bias)
    a = _narrow(inputs, 0, "a")
    shape = _shape(a)
    if len(shape) != 3 or shape[0] != weight.shape[0]:
        raise _error(f"inputs 'a' and 'b': expected (B, M, K) with b's batch {weight.shape[0]}, got {shape}")
    parts = []
    for batch in range(shape[0]):
        rows = bb.emit(_op.reshape(bb.emit(_op.strided_slice(a, [0], [batch], [batch + 1])), shape[1:]))
        product = bb.emit(_qmatmul(bb, inputs, names, positions, weight[batch], w_zero, bias, a=rows))
        parts.append(bb.emit(_op.expand_dims(product, 0)))
    return _op.concat(parts, axis=0)


def qgemm(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """com.microsoft QGemm with a quantized output: ``alpha * A @ B (+ C)`` requantized (transA = 0)."""
    if int(attrs.get("transA", 0)):
        raise _error("attribute 'transA': expected 0, got 1")
    if _input(inputs, 7, "y_scale", required=False) is None:
        raise _error("input 'y_scale' is missing: only QGemm with a quantized output is supported")
    weight = _constant(inputs, 3, "B", ("int8", "uint8"))
    if weight.ndim != 2:
        raise _error(f"input 'B': expected a 2-D constant, got shape {weight.shape}")
    if int(attrs.get("transB", 0)):
        weight = np.ascontiguousarray(weight.T)
    w_zero = _zero_point(inputs, 5, "b_zero_point", str(weight.dtype), weight.shape[1])
    weight, w_zero = _signed_weight(weight, w_zero)
    bias = np.zeros(weight.shape[1], np.int64)
    if _input(inputs, 6, "C", required=False) is not None:
        bias = _constant(inputs, 6, "C", ("int32",)).astype(np.int64).reshape(-1)
        if bias.size not in (1, weight.shape[1]):
            raise _error(f"input 'C': expected 1 or {weight.shape[1]} values, got {bias.size}")
        bias = np.broadcast_to(bias, (weight.shape[1],))
    return _qmatmul(bb, inputs, ("A", "a_scale", "a_zero_point", "b_scale", "y_scale", "y_zero_point"),
                    (0, 1, 2, 4, 7, 8), weight, w_zero, bias, float(attrs.get("alpha", 1.0)))


# -- quantize / dequantize --------------------------------------------------------------------------
def _axis_scale(inputs: Sequence[Any], x: relax.Expr, attrs: dict) -> tuple[np.ndarray, int]:
    """(float32 scales, the axis they run along); the axis only matters for more than one scale."""
    if int(attrs.get("block_size", 0)):
        raise _error("attribute 'block_size': blocked quantization is not supported")
    rank = len(_shape(x))
    scale = _constant(inputs, 1, "scale", ("float32", "float16", "float64"))
    if scale.size == 1:
        return _scale(inputs, 1, "scale"), 0
    axis = int(attrs.get("axis", 1))
    if not -rank <= axis < rank:
        raise _error(f"attribute 'axis': expected a value in [{-rank}, {rank}), got {axis}")
    axis %= rank
    if scale.ndim != 1 or scale.size != _shape(x)[axis]:
        raise _error(f"input 'scale': expected one value or one per element of axis {axis} "
                     f"({_shape(x)[axis]}), got shape {scale.shape}")
    return _scale(inputs, 1, "scale", scale.size), axis


def quantize_linear(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr | None:
    """QuantizeLinear to int8/uint8 through ``int8_quantize`` (round half to even, saturated); other
    forms (16-bit, a zero point per channel) to TVM's converter (None)."""
    from .ops.int8 import int8_quantize
    x = _input(inputs, 0, "x")
    zero_input = _input(inputs, 2, "y_zero_point", required=False)
    dtype = "uint8"
    if zero_input is not None:
        dtype = str(_constant(inputs, 2, "y_zero_point", ("int8", "uint8", "int16", "uint16")).dtype)
    scale, axis = _axis_scale(inputs, x, attrs)
    zero = _zero_point(inputs, 2, "y_zero_point", dtype, scale.size)
    if dtype not in _RANGES or np.unique(zero).size > 1 or int(attrs.get("output_dtype", 0)):
        return None  # 16-bit grids, zero points per channel: TVM's converter
    low, high = _RANGES[dtype]
    squeeze = not _shape(x)
    if squeeze:
        x = bb.emit(_op.reshape(x, (1,)))
    y = int8_quantize(x, relax.const(scale, "float32"), int(zero[0]), low, high, dtype, axis)
    return _op.reshape(bb.emit(y), ()) if squeeze else y


def dequantize_linear(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """DequantizeLinear of 8-, 16- or 32-bit integers: ``float32(x - x_zero_point) * x_scale`` per ``axis``."""
    x = _input(inputs, 0, "x")
    if _dtype(x) not in ("int8", "uint8", "int16", "uint16", "int32"):
        raise _error(f"input 'x': expected int8, uint8, int16, uint16 or int32, got {_dtype(x)}")
    scale, axis = _axis_scale(inputs, x, attrs)
    zero = _zero_point(inputs, 2, "x_zero_point", _dtype(x), scale.size)
    rank = len(_shape(x))
    shape = [1] * rank
    if rank and scale.size > 1:
        shape[axis] = scale.size
    value = bb.emit(_op.astype(x, "int32"))
    if np.any(zero):
        value = bb.emit(_op.subtract(value, relax.const(zero.astype(np.int32).reshape(shape), "int32")))
    return _op.multiply(bb.emit(_op.astype(value, "float32")), relax.const(scale.reshape(shape), "float32"))


def dynamic_quantize_linear(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """DynamicQuantizeLinear: uint8 grid of [min(0, min x), max(0, max x)], its scale and zero point."""
    x = _input(inputs, 0, "x")
    if _dtype(x) != "float32":
        raise _error(f"input 'x': expected float32, got {_dtype(x)}")
    zero_f = relax.const(np.float32(0), "float32")
    low = bb.emit(_op.minimum(bb.emit(_op.min(x)), zero_f))
    high = bb.emit(_op.maximum(bb.emit(_op.max(x)), zero_f))
    scale = bb.emit(_op.divide(bb.emit(_op.subtract(high, low)), relax.const(np.float32(255), "float32")))
    zero = bb.emit(_op.clip(bb.emit(_op.round(bb.emit(_op.subtract(zero_f, bb.emit(_op.divide(low, scale)))))),
                            0.0, 255.0))
    y = bb.emit(_op.add(bb.emit(_op.round(bb.emit(_op.divide(x, scale)))), zero))
    y = bb.emit(_op.astype(bb.emit(_op.clip(y, 0.0, 255.0)), "uint8"))
    return relax.Tuple([y, scale, bb.emit(_op.astype(zero, "uint8"))])


# -- onnxruntime's element-wise and pooling ops -----------------------------------------------------
def qlinear_add(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict, opset: int) -> relax.Expr:
    """com.microsoft QLinearAdd through ``int8_add`` (multipliers ``a_scale / c_scale``, ``b_scale / c_scale``)."""
    from .ops.int8_elementwise import int8_add
    a, b = _narrow(inputs, 0, "A"), _narrow(inputs, 3, "B")
    a_scale, b_scale = _scale(inputs, 1, "A_scale"), _scale(inputs, 4, "B_scale")
    a_zero = int(_zero_point(inputs, 2, "A_zero_point", _dtype(a))[0])
    b_zero = int(_zero_point(inputs, 5, "B_zero_point", _dtype(b))[0])
    c_scale = _scale(inputs, 6, "C_scale")
    c_zero = int(_zero_point(inputs, 7, "C_zero_point", _dtype(a))[0])
    low, high = _RANGES[_dtype(a)]
    return int8_add(a, b, float((a_scale / c_scale)[0]), float((b_scale / c_scale)[0]), a_zero, b_zero, c_zero,
                    low, high, _dtype(a))


def qlinear_global_average_pool(bb: relax.BlockBuilder, inputs: Sequence[Any], attrs: dict,
                                opset: int) -> relax.Expr:
    """com.microsoft QLinearGlobalAveragePool: int32 window sums requantized by ``x_scale / (y_scale * N)``."""
    x = _narrow(inputs, 0, "X")
    shape = _shape(x)
    if len(shape) < 3:
        raise _error(f"input 'X': expected N, C and spatial axes, got shape {shape}")
    channels_last = bool(int(attrs.get("channels_last", 0)))
    spatial = list(range(1, len(shape) - 1)) if channels_last else list(range(2, len(shape)))
    count = int(np.prod([shape[i] for i in spatial], dtype=np.int64))
    x_scale, y_scale = _scale(inputs, 1, "x_scale"), _scale(inputs, 3, "y_scale")
    x_zero = int(_zero_point(inputs, 2, "x_zero_point", _dtype(x))[0])
    y_zero = int(_zero_point(inputs, 4, "y_zero_point", _dtype(x))[0])
    sums = bb.emit(_op.sum(bb.emit(_op.astype(x, "int32")), spatial, keepdims=True))
    axis = len(shape) - 1 if channels_last else 1
    channels = shape[axis]
    multiplier = (x_scale / (y_scale * np.float32(count))).astype(np.float32)
    bias = np.full(channels, -x_zero * count, np.int32)
    return _requantize(bb, sums, bias, np.broadcast_to(multiplier, (channels,)).copy(), y_zero, _dtype(x), axis)


QUANTIZED_CONVERTERS = {
    "QLinearConv": qlinear_conv, "ConvInteger": conv_integer, "QLinearMatMul": qlinear_matmul,
    "MatMulInteger": matmul_integer, "QGemm": qgemm, "QuantizeLinear": quantize_linear,
    "DequantizeLinear": dequantize_linear, "DynamicQuantizeLinear": dynamic_quantize_linear,
    "QLinearAdd": qlinear_add, "QLinearGlobalAveragePool": qlinear_global_average_pool,
}
