"""Fake quantization (quantization-aware training): MindSpore's FakeQuantPerLayer / FakeQuantPerChannel
and the MinMaxUpdate observers.

The nudged range follows MindSpore's kernels: ``scale = (max - min) / (q_max - q_min)``, the zero point
``q_min - min / scale`` clamped to ``[q_min, q_max]`` and rounded half up, ``nudged_min = (q_min - zp) *
scale``, ``nudged_max = (q_max - zp) * scale``; the output is ``floor((clamp(x) - nudged_min) / scale +
0.5) * scale + nudged_min``. The gradient is the straight-through estimator of FakeQuantPerLayerGrad:
the incoming gradient where ``nudged_min <= x <= nudged_max``, zero outside; min and max get none (the
observer updates them).
"""
from __future__ import annotations

from tvm import relax

from .common import cast, dtype_of, emit, normalize_axis, static_shape
from .registry import rule

_op = relax.op


def _const(value: float, dtype: str) -> relax.Expr:
    return relax.const(value, dtype)


def _per_channel_shape(ndim: int, axis: int | None, channels: int) -> list[int]:
    shape = [1] * ndim
    if axis is not None:
        shape[axis] = channels
    return shape


def _nudge(min_val, max_val, quant_min: float, quant_max: float, symmetric: bool):
    """(nudged_min, nudged_max, scale) from float32 min/max tensors (MindSpore's Nudge)."""
    f32 = "float32"
    if symmetric:  # as the kernels: the range becomes [-m, m] with m = max(|min|, max)
        max_val = emit(_op.where(_op.less(_op.abs(min_val), max_val), max_val, _op.negative(min_val)))
        min_val = emit(_op.where(_op.less(_op.abs(min_val), max_val), _op.negative(max_val), min_val))
    span = emit(_op.subtract(max_val, min_val))
    degenerate = emit(_op.equal(span, _const(0.0, f32)))
    scale = emit(_op.where(degenerate, _const(0.0, f32), _op.divide(span, _const(quant_max - quant_min, f32))))
    safe = emit(_op.where(degenerate, _const(1.0, f32), scale))
    zp_from_min = emit(_op.where(degenerate, _const(0.0, f32),
                                 _op.subtract(_const(quant_min, f32), _op.divide(min_val, safe))))
    rounded = _op.floor(_op.add(zp_from_min, _const(0.5, f32)))
    zp = emit(_op.where(_op.less_equal(zp_from_min, _const(quant_min, f32)), _const(quant_min, f32),
                        _op.where(_op.greater_equal(zp_from_min, _const(quant_max, f32)),
                                  _const(quant_max, f32), rounded)))
    nudged_min = emit(_op.multiply(_op.subtract(_const(quant_min, f32), zp), scale))
    nudged_max = emit(_op.multiply(_op.subtract(_const(quant_max, f32), zp), scale))
    return nudged_min, nudged_max, scale


@rule("fake_quant")
def fake_quant(x, minq, maxq, step=None, quant_min: float = -128.0, quant_max: float = 127.0,
               symmetric: bool = False, channel_axis: int | None = None, quant_delay: int = 0):
    """Fake-quantize ``x`` with the range ``[minq, maxq]`` (shape (1,), or (C,) along ``channel_axis``).

    ``step`` (int32 (1,)) enables the quant delay: while ``step < quant_delay`` the input passes unchanged.
    """
    dtype = dtype_of(x)
    shape = static_shape(x)
    axis = None if channel_axis is None else normalize_axis(channel_axis, len(shape), "channel_axis")
    channels = static_shape(minq)[0]
    view = _per_channel_shape(len(shape), axis, channels) if shape else []
    mins = cast(emit(_op.grad.no_grad(minq)), "float32")
    maxs = cast(emit(_op.grad.no_grad(maxq)), "float32")
    nudged_min, nudged_max, scale = _nudge(mins, maxs, float(quant_min), float(quant_max), symmetric)
    nudged_min, nudged_max, scale = (cast(emit(_op.reshape(t, view)), dtype) for t in (nudged_min, nudged_max, scale))
    safe = emit(_op.where(_op.equal(scale, _const(0.0, dtype)), _const(1.0, dtype), scale))
    clamped = emit(_op.minimum(_op.maximum(x, nudged_min), nudged_max))
    levels = emit(_op.floor(_op.add(_op.divide(_op.subtract(clamped, nudged_min), safe), _const(0.5, dtype))))
    value = emit(_op.add(_op.multiply(levels, scale), nudged_min))
    # a product of masks rather than logical_and, which has no gradient rule (autodiff visits every op)
    inside = emit(_op.multiply(_op.astype(_op.greater_equal(x, nudged_min), dtype),
                               _op.astype(_op.less_equal(x, nudged_max), dtype)))
    if step is not None and quant_delay > 0:
        active = emit(_op.greater_equal(_op.reshape(step, [1] * max(len(shape), 1) if shape else []),
                                        relax.const(int(quant_delay), dtype_of(step))))
        value = emit(_op.where(active, value, x))
        inside = emit(_op.where(active, inside, _const(1.0, dtype)))
    inside = emit(_op.grad.no_grad(inside))
    passed = emit(_op.multiply(x, inside))
    # value exactly, with d(out)/dx = inside (x * inside - itself is 0 but carries the gradient)
    return _op.add(emit(_op.grad.no_grad(value)), _op.subtract(passed, emit(_op.grad.no_grad(passed))))


@rule("minmax_update")
def minmax_update(x, minq, maxq, ema: bool = False, ema_decay: float = 0.999, channel_axis: int | None = None):
    """MindSpore's MinMaxUpdatePerLayer / PerChannel: the batch min/max (per channel along ``channel_axis``),
    averaged into ``minq``/``maxq`` with ``ema_decay`` when ``ema``, then widened to include 0."""
    shape = static_shape(x)
    data = cast(emit(_op.grad.no_grad(x)), "float32")
    if channel_axis is None:
        axes = None
    else:
        axis = normalize_axis(channel_axis, len(shape), "channel_axis")
        axes = [i for i in range(len(shape)) if i != axis]
    target = static_shape(minq)
    batch_min = emit(_op.reshape(_op.min(data, axis=axes), target))
    batch_max = emit(_op.reshape(_op.max(data, axis=axes), target))
    old_min = cast(emit(_op.grad.no_grad(minq)), "float32")
    old_max = cast(emit(_op.grad.no_grad(maxq)), "float32")
    if ema:
        keep, take = _const(float(ema_decay), "float32"), _const(1.0 - float(ema_decay), "float32")
        batch_min = emit(_op.add(_op.multiply(keep, old_min), _op.multiply(take, batch_min)))
        batch_max = emit(_op.add(_op.multiply(keep, old_max), _op.multiply(take, batch_max)))
    zero = _const(0.0, "float32")
    new_min = cast(emit(_op.minimum(batch_min, zero)), dtype_of(minq))
    new_max = cast(emit(_op.maximum(batch_max, zero)), dtype_of(maxq))
    return relax.Tuple([new_min, new_max])
