"""More of ``mindspore.numpy``: rounding and remainders, ``hypot`` / ``logaddexp``, diagonals, triangle
indices, ``unravel_index``, ``searchsorted`` and ``corrcoef``, over ``aotnn.ops``."""
from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._convert import as_tensor, float_input, operand, with_dtype

__all__ = ['round', 'around', 'trunc', 'fmod', 'hypot', 'logaddexp', 'logaddexp2', 'diag', 'diagonal', 'diagflat',
           'tril_indices', 'triu_indices', 'unravel_index', 'searchsorted', 'corrcoef']


def round(a, decimals=0):  # noqa: A001 (numpy's name)
    """``a`` rounded to ``decimals`` places, halves to even (numpy's rule)."""
    x = as_tensor(a, "round: a")
    if not x.dtype.is_float:
        return x
    scale = 10.0 ** int(decimals)
    return ops.div(ops.round(ops.mul(x, scale)), scale) if decimals else ops.round(x)


around = round


def trunc(x, dtype=None):
    """Rounds toward zero."""
    return with_dtype(ops.trunc(as_tensor(x, "trunc: x")), dtype)


def _pair(x1, x2, name: str):
    a, b = operand(x1, f"{name}: x1"), operand(x2, f"{name}: x2")
    if not isinstance(a, Tensor):
        a = as_tensor(a, f"{name}: x1")
    return a, b


def fmod(x1, x2, dtype=None):
    """C-style remainder (the sign follows ``x1``)."""
    a, b = _pair(x1, x2, "fmod")
    return with_dtype(ops.fmod(a, b), dtype)


def hypot(x1, x2, dtype=None):
    """``sqrt(x1^2 + x2^2)``, scaled by the larger magnitude so that it does not overflow."""
    a, b = _pair(x1, x2, "hypot")
    a = float_input(a)
    b = float_input(b) if isinstance(b, Tensor) else float(b)
    big = ops.maximum(ops.abs(a), ops.abs(b))
    small = ops.minimum(ops.abs(a), ops.abs(b))
    safe = ops.select(ops.equal(big, 0.0), ops.ones_like(big), big)
    ratio = ops.div(small, safe)
    return with_dtype(ops.mul(big, ops.sqrt(ops.add(ops.mul(ratio, ratio), 1.0))), dtype)


def logaddexp(x1, x2, dtype=None):
    """``log(exp(x1) + exp(x2))`` computed as ``max + log1p(exp(-|x1 - x2|))``."""
    a, b = _pair(x1, x2, "logaddexp")
    a = float_input(a)
    b = float_input(b) if isinstance(b, Tensor) else float(b)
    return with_dtype(ops.add(ops.maximum(a, b), ops.log1p(ops.exp(ops.neg(ops.abs(ops.sub(a, b)))))), dtype)


def logaddexp2(x1, x2, dtype=None):
    """``log2(2^x1 + 2^x2)``."""
    a, b = _pair(x1, x2, "logaddexp2")
    a = float_input(a)
    b = float_input(b) if isinstance(b, Tensor) else float(b)
    natural = logaddexp(ops.mul(a, math.log(2.0)), ops.mul(b, math.log(2.0)) if isinstance(b, Tensor)
                        else b * math.log(2.0))
    return with_dtype(ops.div(natural, math.log(2.0)), dtype)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the (axis1, axis2) planes, on the last axis."""
    return ops.diagonal(as_tensor(a, "diagonal: a"), offset, axis1, axis2)


def diagflat(v, k=0):
    """A 2-D tensor with the flattened ``v`` on its ``k``-th diagonal."""
    flat = ops.reshape(as_tensor(v, "diagflat: v"), (-1,))
    n = flat.shape[0]
    size = n + abs(int(k))
    # place v by one-hot rows: out[i, j] = v[r] where (i, j) is the r-th position of the diagonal
    rows = np.arange(n) + max(-int(k), 0)
    cols = np.arange(n) + max(int(k), 0)
    placement = np.zeros((n, size * size), mstype.to_numpy(flat.dtype))
    placement[np.arange(n), rows * size + cols] = 1
    return ops.reshape(ops.matmul(ops.reshape(flat, (1, -1)), Tensor._from_numpy(placement))
                       if flat.dtype.is_float else
                       ops.reduce_sum(ops.mul(ops.reshape(flat, (-1, 1)), Tensor._from_numpy(placement)), 0),
                       (size, size))


def diag(v, k=0):
    """For 1-D ``v`` a 2-D tensor with ``v`` on its ``k``-th diagonal; for 2-D ``v`` its ``k``-th diagonal.

    Raises:
        ValueError: ``v`` neither 1-D nor 2-D.
    """
    v = as_tensor(v, "diag: v")
    if v.ndim == 1:
        return diagflat(v, k)
    if v.ndim == 2:
        return ops.diagonal(v, k, 0, 1)
    raise ValueError(f"diag: v must be 1-D or 2-D, got shape {v.shape}")


def _triangle_indices(n: int, k: int, m, lower: bool) -> tuple[Tensor, Tensor]:
    rows, cols = (np.tril_indices if lower else np.triu_indices)(int(n), int(k), None if m is None else int(m))
    return Tensor._from_numpy(rows.astype(np.int32)), Tensor._from_numpy(cols.astype(np.int32))


def tril_indices(n, k=0, m=None):
    """(rows, cols) int32 indices of the lower triangle of an (n, m) matrix (known ahead of time)."""
    return _triangle_indices(n, k, m, True)


def triu_indices(n, k=0, m=None):
    """(rows, cols) int32 indices of the upper triangle of an (n, m) matrix (known ahead of time)."""
    return _triangle_indices(n, k, m, False)


def unravel_index(indices, shape, order="C"):
    """The coordinates in an array of ``shape`` of the flat ``indices`` (an int or an int tensor): one int32
    tensor per axis.

    Raises:
        ValueError: ``order`` not 'C' or 'F'.
    """
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    flat = as_tensor(indices, "unravel_index: indices", mstype.int32)
    dims = [int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,))]
    axes = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    coords = [None] * len(dims)
    rest = flat
    for axis in axes:
        coords[axis] = ops.fmod_floor(rest, dims[axis])
        rest = ops.floor_div(rest, dims[axis])
    return tuple(coords)


def searchsorted(a, v, side="left", sorter=None):
    """int32 positions at which ``v``'s elements would be inserted into the sorted 1-D ``a`` to keep it
    sorted: the count of elements below (``side='left'``) or at most (``'right'``) each value.

    Raises:
        ValueError: ``a`` not 1-D, an unknown ``side``, or ``sorter`` given.
    """
    a = as_tensor(a, "searchsorted: a")
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if sorter is not None:
        raise ValueError("searchsorted: sorter is not supported")
    values = as_tensor(v, "searchsorted: v")
    below = (ops.less if side == "left" else ops.less_equal)(a, ops.expand_dims(values, -1))
    return ops.cast(ops.reduce_sum(ops.cast(below, mstype.int32), -1), mstype.int32)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients of the variables in the rows (columns unless ``rowvar``) of ``x``
    (and ``y``)."""
    data = float_input(as_tensor(x, "corrcoef: x"))
    data = ops.reshape(data, (1, -1)) if data.ndim == 1 else data
    if not rowvar:
        data = ops.transpose(data, (1, 0))
    if y is not None:
        other = float_input(as_tensor(y, "corrcoef: y"))
        other = ops.reshape(other, (1, -1)) if other.ndim == 1 else other
        data = ops.concat((data, other if rowvar else ops.transpose(other, (1, 0))), 0)
    centred = ops.sub(data, ops.mean(data, 1, True))
    covariance = ops.matmul(centred, ops.transpose(centred, (1, 0)))
    scale = ops.sqrt(ops.diagonal(covariance))
    out = ops.div(covariance, ops.mul(ops.reshape(scale, (-1, 1)), ops.reshape(scale, (1, -1))))
    out = ops.clip_by_value(out, -1.0, 1.0)
    return with_dtype(out if out.shape != (1, 1) else ops.reshape(out, ()), dtype)
