"""Lowering rules for integer inference: quantize, dequantize, int8 convolution and dense, requantize.

The arithmetic (affine quantization, ``real = scale * (q - zero_point)``):

- ``int8_quantize``: ``q = clip(round(x / scale) + zero_point, qmin, qmax)``, round half to even.
- ``int8_conv2d`` / ``int8_dense``: uint8 or int8 activations times int8 weights, accumulated in
  int32: ``acc = sum((x - zx) * (w - zw))``. ``zx`` is a static int, so padding uses ``zx`` (real
  zero); the kernel multiplies the stored 8-bit values and subtracts the zero-point terms
  (``zx * sum(w)``, and with a weight zero point ``zw * window_sum(x)`` and ``K * zx * zw``).
- ``int8_requantize``: ``y = clip(round(float32(acc + bias) * multiplier) + zy, qmin, qmax)`` with
  a float32 multiplier per output channel (``sx * sw / sy``), round half to even.
- ``int8_dequantize``: ``float32(q - zero_point) * scale``.

Scales are float32 tensors ((1,) or one per channel of ``axis``); zero points of weights are int32
tensors; activation zero points are Python ints.
"""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import cast, emit, normalize_axis
from .conv import as_tuple, window_pads
from .registry import rule

_op = relax.op
_INT_OUT = ("int8", "uint8", "int16", "int32")


def _per_axis(value: relax.Expr, axis: int, rank: int) -> relax.Expr:
    """A (C,) or (1,) tensor reshaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    shape = [1] * rank
    shape[axis] = static_shape(value)[0] if static_shape(value) else 1
    return emit(_op.reshape(value, shape))


def _check_qparam(what: str, value, channels: int, dtype: str) -> None:
    shape = static_shape(value)
    if dtype_of(value) != dtype:
        raise CaptureError(f"{what}: expected a {dtype} tensor, got {dtype_of(value)}")
    if len(shape) > 1 or (shape and shape[0] not in (1, channels)):
        raise CaptureError(f"{what}: expected shape (1,) or ({channels},), got {shape}")


def _range(qmin: int, qmax: int, out_dtype: str) -> None:
    if out_dtype not in _INT_OUT:
        raise CaptureError(f"out_dtype: expected one of {_INT_OUT}, got {out_dtype!r}")
    if not qmin < qmax:
        raise CaptureError(f"qmin, qmax: expected qmin < qmax, got {qmin}, {qmax}")


@rule("int8_quantize")
def int8_quantize(x, scale, zero_point: int = 0, qmin: int = -128, qmax: int = 127, out_dtype: str = "int8",
                  axis: int = 1):
    """Float ``x`` to integers: ``clip(round(x / scale) + zero_point, qmin, qmax)``; ``scale`` per ``axis``."""
    _range(qmin, qmax, out_dtype)
    if dtype_of(x) != "float32":
        x = cast(x, "float32")
    rank = len(static_shape(x))
    axis = normalize_axis(axis, rank)
    _check_qparam("scale", scale, static_shape(x)[axis], "float32")
    q = emit(_op.round(emit(_op.divide(x, _per_axis(scale, axis, rank)))))
    if zero_point:
        q = emit(_op.add(q, relax.const(float(zero_point), "float32")))
    return _op.astype(emit(_op.clip(q, float(qmin), float(qmax))), out_dtype)


@rule("int8_dequantize")
def int8_dequantize(q, scale, zero_point: int = 0, axis: int = 1):
    """Integers to float32: ``float32(q - zero_point) * scale``; ``scale`` per ``axis``."""
    rank = len(static_shape(q))
    axis = normalize_axis(axis, rank)
    _check_qparam("scale", scale, static_shape(q)[axis], "float32")
    value = cast(q, "int32")
    if zero_point:
        value = emit(_op.subtract(value, relax.const(int(zero_point), "int32")))
    return _op.multiply(cast(value, "float32"), _per_axis(scale, axis, rank))


@rule("int8_dynamic_scale")
def int8_dynamic_scale(x, qmax: int = 127):
    """The symmetric per-tensor scale of ``x``, ``max(|x|) / qmax`` (a (1,) float32 tensor, > 0)."""
    peak = emit(_op.max(emit(_op.abs(cast(x, "float32")))))
    peak = emit(_op.maximum(peak, relax.const(1e-12, "float32")))
    return _op.reshape(_op.divide(peak, relax.const(float(qmax), "float32")), (1,))


@rule("int8_requantize")
def int8_requantize(acc, bias, multiplier, zero_point: int = 0, qmin: int = -128, qmax: int = 127,
                    out_dtype: str = "int8", axis: int = 1):
    """int32 ``acc`` (+ int32 ``bias`` per ``axis``) to ``clip(round(float32(acc) * multiplier) + zero_point)``."""
    _range(qmin, qmax, out_dtype)
    if dtype_of(acc) != "int32":
        raise CaptureError(f"acc: expected an int32 tensor, got {dtype_of(acc)}")
    rank = len(static_shape(acc))
    axis = normalize_axis(axis, rank)
    channels = static_shape(acc)[axis]
    _check_qparam("multiplier", multiplier, channels, "float32")
    if bias is not None:
        _check_qparam("bias", bias, channels, "int32")
        acc = emit(_op.add(acc, _per_axis(bias, axis, rank)))
    y = emit(_op.round(emit(_op.multiply(cast(acc, "float32"), _per_axis(multiplier, axis, rank)))))
    if zero_point:
        y = emit(_op.add(y, relax.const(float(zero_point), "float32")))
    return _op.astype(emit(_op.clip(y, float(qmin), float(qmax))), out_dtype)


def _check_operands(what: str, x, w, x_zero_point: int) -> None:
    if dtype_of(x) not in ("int8", "uint8"):
        raise CaptureError(f"{what}: expected an int8 or uint8 input, got {dtype_of(x)}")
    if dtype_of(w) != "int8":
        raise CaptureError(f"{what}: expected an int8 weight, got {dtype_of(w)}")
    low, high = (0, 255) if dtype_of(x) == "uint8" else (-128, 127)
    if not low <= x_zero_point <= high:
        raise CaptureError(f"x_zero_point: expected a value in [{low}, {high}] for {dtype_of(x)}, got {x_zero_point}")


def _bound(expr: relax.Expr) -> relax.Expr:
    """``expr`` as a variable: emitted unless it already is one."""
    return expr if isinstance(expr, relax.Var) else emit(expr)


def _weight_sums(w, axes: list[int]) -> relax.Expr:
    return emit(_op.sum(cast(w, "int32"), axis=axes))


@rule("int8_conv2d")
def int8_conv2d(x, weight, x_zero_point: int = 0, w_zero_point=None, stride=1, pad_mode="valid", padding=0,
                dilation=1, groups=1, weight_sums_folded: bool = False):
    """NCHW int8/uint8 ``x`` with OIHW int8 ``weight``, int32 ``sum((x - zx) * (w - zw))`` (N, O, OH, OW).

    ``w_zero_point`` is None (symmetric weights) or an int32 (O,) tensor. ``weight_sums_folded``: the
    caller has folded ``-zx * sum(w - zw)`` into its int32 bias (the result then lacks those terms).
    """
    _check_operands("int8_conv2d", x, weight, int(x_zero_point))
    x_shape, w_shape = static_shape(x), static_shape(weight)
    if len(x_shape) != 4 or len(w_shape) != 4:
        raise CaptureError(f"int8_conv2d: input and weight must be 4-D, got {x_shape} and {w_shape}")
    if x_shape[1] != w_shape[1] * groups or w_shape[0] % groups:
        raise CaptureError(f"int8_conv2d: input has {x_shape[1]} channels, the weight {w_shape} with group {groups}")
    stride, dilation = as_tuple(stride, 2, "stride"), as_tuple(dilation, 2, "dilation")
    pads = window_pads(x_shape[2:], w_shape[2:], stride, dilation, str(pad_mode).lower(), padding)
    if any(p for pair in pads for p in pair):
        # padding holds the zero point (real zero), so the zero-point terms below stay exact at borders
        widths = (0, 0, 0, 0) + tuple(p for pair in pads for p in pair)
        x = emit(_op.nn.pad(x, widths, pad_value=float(x_zero_point)))
    # the result stays an unbound expression: returning a bound variable would leave an alias binding,
    # which stops FuseOps from fusing the requantization epilogue into the convolution
    acc = _op.nn.conv2d(x, weight, strides=stride, dilation=dilation, groups=int(groups), out_dtype="int32")
    out_channels = w_shape[0]
    if x_zero_point and not weight_sums_folded:
        wsum = _weight_sums(weight, [1, 2, 3])
        acc = _op.subtract(_bound(acc), emit(_op.reshape(
            _op.multiply(wsum, relax.const(int(x_zero_point), "int32")), (1, out_channels, 1, 1))))
    if w_zero_point is not None:
        _check_qparam("w_zero_point", w_zero_point, out_channels, "int32")
        zw = _per_axis(w_zero_point, 1, 4)
        ones = relax.const(1, "int8")
        box = emit(_op.nn.conv2d(x, emit(_op.full((groups, w_shape[1], w_shape[2], w_shape[3]), ones, "int8")),
                                 strides=stride, dilation=dilation, groups=int(groups), out_dtype="int32"))
        if groups > 1:
            box = emit(_op.repeat(box, out_channels // groups, axis=1))
        taps = w_shape[1] * w_shape[2] * w_shape[3]
        acc = _op.subtract(_bound(acc), emit(_op.multiply(box, zw)))
        if x_zero_point and not weight_sums_folded:
            acc = _op.add(_bound(acc), emit(_op.multiply(zw, relax.const(taps * int(x_zero_point), "int32"))))
    return acc


@rule("int8_dense")
def int8_dense(x, weight, x_zero_point: int = 0, w_zero_point=None, weight_sums_folded: bool = False):
    """(N, K) int8/uint8 ``x`` with (O, K) int8 ``weight``: int32 ``sum((x - zx) * (w - zw))`` of shape (N, O).

    ``weight_sums_folded`` as :func:`int8_conv2d`.
    """
    _check_operands("int8_dense", x, weight, int(x_zero_point))
    x_shape, w_shape = static_shape(x), static_shape(weight)
    if len(x_shape) != 2 or len(w_shape) != 2 or x_shape[1] != w_shape[1]:
        raise CaptureError(f"int8_dense: expected (N, K) and (O, K), got {x_shape} and {w_shape}")
    acc = _op.matmul(x, emit(_op.permute_dims(weight, [1, 0])), out_dtype="int32")  # unbound: see int8_conv2d
    if x_zero_point and not weight_sums_folded:
        wsum = _weight_sums(weight, [1])
        acc = _op.subtract(_bound(acc), emit(_op.reshape(
            _op.multiply(wsum, relax.const(int(x_zero_point), "int32")), (1, w_shape[0]))))
    if w_zero_point is not None:
        _check_qparam("w_zero_point", w_zero_point, w_shape[0], "int32")
        zw = _per_axis(w_zero_point, 1, 2)
        rows = emit(_op.sum(cast(x, "int32"), axis=[1], keepdims=True))
        acc = _op.subtract(_bound(acc), emit(_op.multiply(rows, zw)))
        if x_zero_point and not weight_sums_folded:
            acc = _op.add(_bound(acc), emit(_op.multiply(zw, relax.const(w_shape[1] * int(x_zero_point), "int32"))))
    return acc
