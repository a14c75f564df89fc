"""MindSpore's functional one_hot, roll, tril, triu and range: each names a lowering rule."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['one_hot', 'roll', 'tril', 'triu', 'range']


def _tensor(value: Any, op: str, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _int(value: Any, op: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    return int(value)


def _scalar(value: Any, op: str, name: str):
    if isinstance(value, Tensor):
        if value.is_symbolic or value.size != 1:
            raise TypeError(f"{op}: {name} must be a number or a one-element concrete Tensor")
        return value.asnumpy().reshape(()).item()
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{op}: {name} must be a number, got {type(value).__name__}")
    return value.item() if isinstance(value, np.number) else value


def one_hot(indices, depth, on_value=1, off_value=0, axis: int = -1):
    """A one-hot tensor: ``on_value`` where the new axis position equals the index, else ``off_value``.

    Args:
        indices (Tensor): int32 or int64 indices; out-of-range ones give an all-``off_value`` row.
        depth (int): size of the new axis.
        on_value, off_value (Union[Tensor, int, float]): the two values; the result takes on_value's
            dtype when it is a Tensor, else float32 for floats and int64 for ints.
        axis (int): where the new axis goes, in [-1, rank]. Default: -1.
    Returns:
        Tensor of rank ``indices.ndim + 1``.
    Raises:
        TypeError: indices not an integer Tensor, depth or axis not an int.
        ValueError: depth < 0 or axis out of range.
    """
    _tensor(indices, "one_hot", "indices")
    if indices.dtype not in (mstype.int32, mstype.int64, mstype.uint8, mstype.int8, mstype.int16):
        raise TypeError(f"one_hot: indices must be an int32 or int64 Tensor, got {indices.dtype}")
    depth, axis = _int(depth, "one_hot", "depth"), _int(axis, "one_hot", "axis")
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
    if not -1 <= axis <= indices.ndim:
        raise ValueError(f"one_hot: axis must be in [-1, {indices.ndim}], got {axis}")
    if isinstance(on_value, Tensor):
        dtype = on_value.dtype
    else:
        dtype = mstype.float32 if isinstance(on_value, float) or isinstance(off_value, float) else mstype.int64
    on, off = _scalar(on_value, "one_hot", "on_value"), _scalar(off_value, "one_hot", "off_value")
    return apply("one_hot", indices, depth, on, off, axis if axis != -1 else indices.ndim, dtype.name)


def roll(input, shifts, dims=None):  # noqa: A002 (MindSpore's argument name)
    """Elements shifted by ``shifts`` along ``dims`` with wrap-around (``dims=None``: the flattened tensor).

    Raises:
        TypeError: shifts or dims not an int or a sequence of ints.
        ValueError: shifts and dims of different lengths, or a dim out of range.
    """
    _tensor(input, "roll", "input")
    shifts = _int_list(shifts, "roll", "shifts")
    if dims is not None:
        dims = _int_list(dims, "roll", "dims")
        if len(dims) != len(shifts):
            raise ValueError(f"roll: shifts and dims must have the same length, got {len(shifts)} and {len(dims)}")
        for d in dims:
            if not -input.ndim <= d < input.ndim:
                raise ValueError(f"roll: dims must be in [{-input.ndim}, {input.ndim}), got {d}")
    elif len(shifts) != 1:
        raise ValueError(f"roll: without dims, shifts must be a single int, got {shifts}")
    return apply("roll", input, tuple(shifts), None if dims is None else tuple(dims))


def _int_list(value: Any, op: str, name: str) -> list[int]:
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    return [_int(v, op, f"{name} element") for v in items]


def _triangle(op: str, input, diagonal):  # noqa: A002
    _tensor(input, op, "input")
    if input.ndim < 2:
        raise ValueError(f"{op}: input must have at least 2 dimensions, got shape {input.shape}")
    return apply(op, input, _int(diagonal, op, "diagonal"))


def tril(input, diagonal: int = 0):  # noqa: A002
    """``input`` with the elements above the ``diagonal``-th diagonal of the last two axes set to zero."""
    return _triangle("tril", input, diagonal)


def triu(input, diagonal: int = 0):  # noqa: A002
    """``input`` with the elements below the ``diagonal``-th diagonal of the last two axes set to zero."""
    return _triangle("triu", input, diagonal)


def range(start, end, step=1, dtype=None) -> Tensor:  # noqa: A001 (MindSpore's name)
    """The numbers ``start, start + step, ...`` below ``end`` (above it for a negative step).

    Inside a compiled graph the values become a constant of the graph.

    Args:
        start, end, step (Union[int, float, Tensor]): numbers or one-element Tensors.
        dtype: result dtype; default int64 when all three are ints, else float32.
    Raises:
        TypeError: a bound that is not a number.
        ValueError: step is 0, or the range is empty.
    """
    start, end, step = (_scalar(v, "range", n) for v, n in ((start, "start"), (end, "end"), (step, "step")))
    if step == 0:
        raise ValueError("range: step must not be 0")
    if dtype is None:
        all_int = builtins.all(isinstance(v, (int, np.integer)) for v in (start, end, step))
        dtype = mstype.int64 if all_int else mstype.float32
    name = mstype.normalize(dtype).name
    if np.arange(start, end, step).size == 0:
        raise ValueError(f"range: [{start}, {end}) with step {step} is empty")
    import relay_frontend
    if relay_frontend.current() is not None:
        return apply("range", start, end, step, name)
    return Tensor._from_numpy(np.arange(start, end, step).astype(name))
