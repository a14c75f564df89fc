"""``mindspore.numpy`` shape and indexing ops: reshape, transpose, joins, splits, takes, flips, rolls."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._convert import as_tensor, operand

__all__ = ['reshape', 'ravel', 'transpose', 'expand_dims', 'squeeze', 'concatenate', 'stack', 'hstack', 'vstack',
           'split', 'array_split', 'tile', 'broadcast_to', 'swapaxes', 'moveaxis', 'take', 'take_along_axis',
           'flip', 'roll', 'repeat', 'where', 'size', 'ndim', 'shape']


def reshape(x, new_shape):
    """``x`` with shape ``new_shape`` (one entry may be -1)."""
    return ops.reshape(as_tensor(x, "reshape: x"), new_shape)


def ravel(x):
    """``x`` flattened to 1-D."""
    return ops.reshape(as_tensor(x, "ravel: x"), (-1,))


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed when ``axes`` is None)."""
    return ops.transpose(as_tensor(a, "transpose: a"), None if axes is None else tuple(axes))


def expand_dims(a, axis):
    """``a`` with new axes of size 1 at ``axis`` (an int or a tuple of ints)."""
    out = as_tensor(a, "expand_dims: a")
    axes = [axis] if isinstance(axis, int) else list(axis)
    rank = out.ndim + len(axes)
    for position in sorted(x % rank for x in axes):
        out = ops.expand_dims(out, position)
    return out


def squeeze(a, axis=None):
    """``a`` without its axes of size 1 (only ``axis`` when given)."""
    return ops.squeeze(as_tensor(a, "squeeze: a"), axis)


def _tensors(arrays: Any, name: str) -> list[Tensor]:
    if isinstance(arrays, Tensor):
        return list(ops.unstack(arrays, 0))
    if not isinstance(arrays, (tuple, list)) or not arrays:
        raise TypeError(f"{name}: arrays must be a non-empty tuple/list of tensors, got {type(arrays).__name__}")
    return [as_tensor(a, f"{name}: arrays[{i}]") for i, a in enumerate(arrays)]


def concatenate(arrays, axis=0):
    """The ``arrays`` joined along ``axis`` (flattened first when ``axis`` is None)."""
    tensors = _tensors(arrays, "concatenate")
    if axis is None:
        tensors, axis = [ops.reshape(t, (-1,)) for t in tensors], 0
    return ops.concat(tensors, axis)


def stack(arrays, axis=0):
    """The ``arrays`` (one shape) stacked along a new axis ``axis``."""
    return ops.stack(_tensors(arrays, "stack"), axis)


def hstack(tup):
    """Join along axis 1 (axis 0 for 1-D arrays)."""
    tensors = _tensors(tup, "hstack")
    return ops.concat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tup):
    """Join along axis 0, 1-D arrays as rows."""
    tensors = [t if t.ndim > 1 else ops.reshape(t, (1, -1)) for t in _tensors(tup, "vstack")]
    return ops.concat(tensors, 0)


def _split_points(length: int, indices_or_sections: Any, even: bool, name: str) -> list[int]:
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {sections}")
        if even and length % sections:
            raise ValueError(f"{name}: an axis of length {length} cannot be split into {sections} equal sections")
        base, extra = divmod(length, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        return [int(s) for s in np.cumsum(sizes)[:-1]]
    if isinstance(indices_or_sections, (tuple, list)):
        return [int(i) for i in indices_or_sections]
    raise TypeError(f"{name}: indices_or_sections must be an int or a tuple/list of ints, got "
                    f"{type(indices_or_sections).__name__}")


def _split(x, indices_or_sections, axis, even: bool, name: str):
    x = as_tensor(x, f"{name}: x")
    axis = axis % x.ndim
    length = x.shape[axis]
    points = [min(max(p, 0), length) for p in _split_points(length, indices_or_sections, even, name)]
    bounds = [0] + points + [length]
    sizes = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    if 0 in sizes:
        raise ValueError(f"{name}: empty sections are not supported, got split points {points} for length {length}")
    return ops.split(x, sizes, axis) if len(sizes) > 1 else (x,)


def split(x, indices_or_sections, axis=0):
    """``x`` split along ``axis`` into equal sections (an int) or at the given indices.

    Raises:
        ValueError: the axis does not divide into equal sections, or a section would be empty.
    """
    return _split(x, indices_or_sections, axis, True, "split")


def array_split(x, indices_or_sections, axis=0):
    """``split`` allowing unequal sections (the first ones one longer)."""
    return _split(x, indices_or_sections, axis, False, "array_split")


def tile(a, reps):
    """``a`` repeated ``reps`` times along each axis."""
    a = as_tensor(a, "tile: a")
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    return ops.Tile()(a, reps)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape``."""
    return ops.broadcast_to(as_tensor(array, "broadcast_to: array"), tuple(shape))


def swapaxes(x, axis1, axis2):
    """``x`` with ``axis1`` and ``axis2`` exchanged."""
    return ops.swapaxes(as_tensor(x, "swapaxes: x"), axis1, axis2)


def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to ``destination``."""
    return ops.moveaxis(as_tensor(a, "moveaxis: a"), source, destination)


def take(a, indices, axis=None, mode="clip"):
    """Elements of ``a`` (flattened when ``axis`` is None) at ``indices`` along ``axis``; out-of-range
    indices are clipped ('clip') or wrapped ('wrap').

    Raises:
        ValueError: an unknown ``mode`` ('raise' is not supported: indices may be unknown until run time).
    """
    a = as_tensor(a, "take: a")
    if axis is None:
        a, axis = ops.reshape(a, (-1,)), 0
    axis = axis % a.ndim
    index = as_tensor(indices, "take: indices")
    if not index.dtype in (mstype.int32, mstype.int64):
        raise TypeError(f"take: indices must be ints, got {index.dtype}")
    length = a.shape[axis]
    if mode == "clip":
        index = ops.clip_by_value(index, 0, length - 1)
    elif mode == "wrap":
        index = ops.fmod_floor(index, length)
    else:
        raise ValueError(f"take: mode must be 'clip' or 'wrap', got {mode!r}")
    return ops.gather(a, index, axis)


def take_along_axis(arr, indices, axis):
    """``arr`` gathered element-wise at ``indices`` (of ``arr``'s rank) along ``axis`` (flattened when None)."""
    arr = as_tensor(arr, "take_along_axis: arr")
    indices = as_tensor(indices, "take_along_axis: indices")
    if axis is None:
        arr, axis = ops.reshape(arr, (-1,)), 0
    if indices.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices must have arr's rank {arr.ndim}, got shape {indices.shape}")
    axis = axis % arr.ndim
    target = tuple(indices.shape[d] if d == axis else max(arr.shape[d], indices.shape[d]) for d in range(arr.ndim))
    if tuple(indices.shape) != target:
        indices = ops.broadcast_to(indices, target)
    if tuple(arr.shape[:axis] + arr.shape[axis + 1:]) != target[:axis] + target[axis + 1:]:
        arr = ops.broadcast_to(arr, target[:axis] + (arr.shape[axis],) + target[axis + 1:])
    return ops.gather_elements(arr, axis, indices)


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (every axis when None)."""
    m = as_tensor(m, "flip: m")
    axes = tuple(range(m.ndim)) if axis is None else axis
    return ops.flip(m, axes)


def roll(a, shift, axis=None):
    """``a`` shifted by ``shift`` along ``axis`` with wrap-around (the flattened array when None)."""
    a = as_tensor(a, "roll: a")
    if axis is None:
        return ops.reshape(ops.roll(ops.reshape(a, (-1,)), shift, 0), a.shape)
    return ops.roll(a, shift, axis)


def repeat(a, repeats, axis=None):
    """Every element of ``a`` repeated ``repeats`` (an int) times along ``axis`` (flattened when None)."""
    return ops.repeat_interleave(as_tensor(a, "repeat: a"), repeats, axis)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y`` (broadcast). The one-argument form (indices of nonzero elements)
    has a data-dependent shape and is not supported.

    Raises:
        ValueError: only one of ``x`` and ``y`` given, or neither.
    """
    if x is None or y is None:
        raise ValueError("where: x and y must both be given (the index form is not supported)")
    condition = as_tensor(condition, "where: condition")
    if condition.dtype != mstype.bool_:
        condition = ops.not_equal(condition, 0)
    a, b = operand(x, "where: x"), operand(y, "where: y")
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = as_tensor(a, "where: x")
    return ops.select(condition, a, b)


def size(a, axis=None) -> int:
    """Number of elements (along ``axis`` when given)."""
    a = as_tensor(a, "size: a")
    return a.size if axis is None else a.shape[axis]


def ndim(a) -> int:
    """Number of axes."""
    return as_tensor(a, "ndim: a").ndim


def shape(a) -> tuple[int, ...]:
    """The shape."""
    return tuple(as_tensor(a, "shape: a").shape)
