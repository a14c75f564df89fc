"""Lowering rules for one-hot encoding, rolling, triangular masks, constant ranges, sorting and
stop-gradient."""
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
    # the last ``shift`` elements, then the rest: two slices joined (a take with a constant index
    # loaded the index per element, one lane at a time - Swin's shifted windows took 4 ms a roll)
    cut = size - shift % size
    tail = emit(_op.strided_slice(x, axes=[axis], begin=[cut], end=[size]))
    head = emit(_op.strided_slice(x, axes=[axis], begin=[0], end=[cut]))
    return emit(_op.concat([tail, head], axis=axis))


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


@rule("stop_gradient")
def stop_gradient(x):
    """``x`` itself, as a constant to automatic differentiation (no gradient flows back through it)."""
    return _op.grad.no_grad(x)


def _sorted_along_last(x, descending: bool):
    """(values, int32 indices) of ``x`` sorted stably along its last axis, by ranking: an element's rank is the
    number of elements before it in the order (smaller, or equal and earlier), and output position r takes
    the element of rank r. Quadratic in the axis length (Relax's argsort is not legalised to a kernel here)."""
    n = static_shape(x)[-1]
    column = _op.expand_dims(x, -1)  # x_i on axis -2 ... compared with
    row = _op.expand_dims(x, -2)     # x_j on axis -1
    ahead = _op.greater(row, column) if descending else _op.less(row, column)
    earlier = relax.const(np.tril(np.ones((n, n), dtype=bool), -1))  # j < i
    before = _op.logical_or(ahead, _op.logical_and(_op.equal(row, column), earlier))
    rank = emit(_op.sum(_op.astype(before, "int32"), axis=[-1]))     # (..., n): the rank of element i
    slots = relax.const(np.arange(n, dtype="int32"))
    placed = emit(_op.astype(_op.equal(_op.expand_dims(rank, -1), slots), "int32"))  # [..., i, r]
    positions = relax.const(np.arange(n, dtype="int32").reshape(n, 1))
    indices = emit(_op.sum(_op.multiply(placed, positions), axis=[-2]))  # (..., r): the element of rank r
    from .shape import gather_elements

    values = emit(gather_elements(x, indices, axis=len(static_shape(x)) - 1))  # differentiable, unlike Relax's
    return values, indices


def _along_last(x, axis: int):
    rank = len(static_shape(x))
    if axis == rank - 1:
        return x, None
    perm = [d for d in range(rank) if d != axis] + [axis]
    return emit(_op.permute_dims(x, perm)), [perm.index(d) for d in range(rank)]


@rule("sort")
def sort(x, axis: int = -1, descending: bool = False):
    """(values, int32 indices) of ``x`` sorted stably along ``axis``."""
    moved, inverse = _along_last(x, normalize_axis(axis, len(static_shape(x))))
    values, indices = _sorted_along_last(moved, bool(descending))
    if inverse is not None:
        values, indices = emit(_op.permute_dims(values, inverse)), emit(_op.permute_dims(indices, inverse))
    return relax.Tuple([values, indices])


@rule("topk")
def topk(x, k: int, axis: int = -1, largest: bool = True):
    """(values, int32 indices) of the ``k`` largest (or smallest) elements of ``x`` along ``axis``, in order."""
    moved, inverse = _along_last(x, normalize_axis(axis, len(static_shape(x))))
    values, indices = _sorted_along_last(moved, bool(largest))
    n = static_shape(moved)[-1]
    if int(k) < n:
        values = emit(relax.TupleGetItem(emit(_op.split(values, [int(k)], axis=-1)), 0))
        indices = emit(relax.TupleGetItem(emit(_op.split(indices, [int(k)], axis=-1)), 0))
    if inverse is not None:
        values, indices = emit(_op.permute_dims(values, inverse)), emit(_op.permute_dims(indices, inverse))
    return relax.Tuple([values, indices])
