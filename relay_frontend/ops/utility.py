"""Lowering rules for one-hot encoding, rolling, triangular masks and constant ranges."""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit, normalize_axis
from .registry import rule

_op = relax.op


@rule("one_hot")
def one_hot(indices, depth: int, on_value, off_value, axis: int = -1, dtype: str = "float32"):
    """``on_value`` where ``indices`` equals the position along the new axis ``axis``, else ``off_value``.

    Indices outside [0, depth) (negative ones included) give a row of ``off_value``.
    """
    if np.dtype(dtype_of(indices)).kind not in "iu":
        raise CaptureError(f"one_hot: indices must be an integer tensor, got {dtype_of(indices)}")
    rank = len(static_shape(indices))
    axis = normalize_axis(axis, rank + 1)
    positions_shape = [1] * (rank + 1)
    positions_shape[axis] = int(depth)
    positions = relax.const(np.arange(int(depth)).reshape(positions_shape).astype(dtype_of(indices)))
    hit = _op.equal(_op.expand_dims(indices, axis), positions)
    return _op.where(hit, relax.const(on_value, dtype), relax.const(off_value, dtype))


def _roll_axis(x, shift: int, axis: int):
    size = static_shape(x)[axis]
    if size == 0 or shift % size == 0:
        return x
    source = (np.arange(size) - shift) % size  # output i reads input i - shift
    return emit(_op.take(x, relax.const(source.astype("int64")), axis=axis, mode="clip"))


@rule("roll")
def roll(x, shifts, axes=None):
    """Elements shifted by ``shifts`` along ``axes`` with wrap-around; ``axes=None`` rolls the flattened tensor."""
    shape = static_shape(x)
    shifts = [int(s) for s in (shifts if isinstance(shifts, (tuple, list)) else [shifts])]
    if axes is None:
        if len(shifts) != 1:
            raise CaptureError(f"roll: without axes, shifts must be one int, got {shifts}")
        flat = emit(_op.reshape(x, [-1]))
        return _op.reshape(_roll_axis(flat, shifts[0], 0), list(shape))
    axes = [int(a) for a in (axes if isinstance(axes, (tuple, list)) else [axes])]
    if len(axes) != len(shifts):
        raise CaptureError(f"roll: shifts and axes must have one length, got {len(shifts)} and {len(axes)}")
    out = x
    for shift, axis in zip(shifts, axes):
        out = _roll_axis(out, shift, normalize_axis(axis, len(shape)))
    return out


def _triangle(x, k: int, lower: bool):
    shape = static_shape(x)
    if len(shape) < 2:
        raise CaptureError(f"{'tril' if lower else 'triu'}: input must have at least 2 dimensions, got {shape}")
    rows, cols = shape[-2:]
    mask = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return _op.where(relax.const(mask), x, relax.const(0, dtype_of(x)))


@rule("tril")
def tril(x, k: int = 0):
    """Zeros above the ``k``-th diagonal of the last two axes."""
    return _triangle(x, int(k), lower=True)


@rule("triu")
def triu(x, k: int = 0):
    """Zeros below the ``k``-th diagonal of the last two axes."""
    return _triangle(x, int(k), lower=False)


@rule("range")
def arange(start, limit, delta, dtype: str):
    """The constant ``[start, start + delta, ...)`` below ``limit`` (values known when the graph is built)."""
    values = np.arange(start, limit, delta).astype(dtype)
    if values.size == 0:
        raise CaptureError(f"range: [{start}, {limit}) with step {delta} is empty")
    return relax.const(values)
