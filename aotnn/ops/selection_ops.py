"""MindSpore 2.x selection and gradient-control ops: ``sort``, ``topk`` / ``top_k``, ``gather_nd``,
``stop_gradient``, ``assign_add``, and the element-wise ``atan`` / ``tan``."""
from __future__ import annotations

import builtins
from typing import Any

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F
from ._dispatch import apply

__all__ = ['sort', 'topk', 'top_k', 'gather_nd', 'stop_gradient', 'assign_add', 'atan', 'tan']


def _tensor(value: Any, op: str, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _axis(axis: Any, rank: int, op: str, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{op}: {name} must be an int, got {type(axis).__name__}")
    if not -builtins.max(rank, 1) <= axis < builtins.max(rank, 1):
        raise ValueError(f"{op}: {name} must be in [{-rank}, {rank}), got {axis}")
    return axis % builtins.max(rank, 1)


def sort(input_x, axis=-1, descending=False):
    """(values, int32 indices) of ``input_x`` sorted along ``axis`` (ascending unless ``descending``).

    Raises:
        TypeError: input_x not a Tensor, axis not an int, descending not a bool.
    """
    _tensor(input_x, "sort", "input_x")
    if not isinstance(descending, bool):
        raise TypeError(f"sort: descending must be a bool, got {type(descending).__name__}")
    return apply("sort", input_x, _axis(axis, input_x.ndim, "sort"), descending)


def topk(input, k, dim=None, largest=True, sorted=True):  # noqa: A002 (MindSpore's argument names)
    """(values, int32 indices) of the ``k`` largest (smallest unless ``largest``) elements along ``dim``
    (the last axis when None), largest first. ``sorted`` is accepted; results are always sorted.

    Raises:
        TypeError: input not a Tensor, k not an int.
        ValueError: k outside [1, axis length].
    """
    _tensor(input, "topk", "input")
    axis = _axis(-1 if dim is None else dim, input.ndim, "topk", "dim")
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"topk: k must be an int, got {type(k).__name__}")
    if not 1 <= k <= input.shape[axis]:
        raise ValueError(f"topk: k must be in [1, {input.shape[axis]}], got {k}")
    return apply("topk", input, k, axis, bool(largest))


def top_k(input_x, k, sorted=True):  # noqa: A002
    """``topk(input_x, k)`` over the last axis (MindSpore 1.x's name)."""
    return topk(input_x, k, None, True, sorted)


def gather_nd(input_x, indices):
    """``out[i...] = input_x[indices[i..., 0], ..., indices[i..., M-1]]`` (M = ``indices.shape[-1]``);
    out-of-range indices are clipped to the flattened range.

    Raises:
        TypeError: not Tensors, or indices not int32/int64.
        ValueError: M larger than the input rank.
    """
    _tensor(input_x, "gather_nd", "input_x"), _tensor(indices, "gather_nd", "indices")
    if indices.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"gather_nd: indices must be int32 or int64, got {indices.dtype}")
    depth = indices.shape[-1] if indices.ndim else 0
    if indices.ndim == 0 or not 1 <= depth <= input_x.ndim:
        raise ValueError(f"gather_nd: indices.shape[-1] must be in [1, {input_x.ndim}], got shape {indices.shape}")
    lead = input_x.shape[:depth]
    flat = None
    stride = 1
    for j in range(depth - 1, -1, -1):
        term = F.mul(F.cast(F.getitem(indices, (Ellipsis, j)), mstype.int64), stride)
        flat = term if flat is None else F.add(flat, term)
        stride *= lead[j]
    flat = F.clip_by_value(flat, 0, stride - 1)
    table = F.reshape(input_x, (stride,) + tuple(input_x.shape[depth:]))
    return F.gather(table, flat, 0)


def stop_gradient(value):
    """``value``, through which no gradient flows (a constant to ``grad`` / ``value_and_grad``)."""
    if isinstance(value, (tuple, list)):
        return type(value)(stop_gradient(v) for v in value)
    return apply("stop_gradient", _tensor(value, "stop_gradient", "value"))


def assign_add(variable, value):
    """``variable += value`` for a Parameter (inside a compiled graph: after the call); returns the new value."""
    from ..common.parameter import Parameter
    if not isinstance(variable, Parameter):
        raise TypeError(f"assign_add: variable must be a Parameter, got {type(variable).__name__}")
    total = F.add(variable, value)
    F.assign(variable, total if total.dtype == variable.dtype else F.cast(total, variable.dtype))
    return total


def _float_input(x: Any, op: str) -> Tensor:
    _tensor(x, op, "input")
    return x if x.dtype.is_float else F.cast(x, mstype.float32)


def atan(input):  # noqa: A002
    """Element-wise arctangent."""
    return apply("atan", _float_input(input, "atan"))


def tan(input):  # noqa: A002
    """Element-wise tangent."""
    return apply("tan", _float_input(input, "tan"))
