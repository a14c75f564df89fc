"""More MindSpore 2.x functional ops: ``addn``, ``addmv``, ``addbmm``, ``atan2``, ``sinc``, ``mse_loss``,
``diag``, ``scatter``, ``msort``, ``cumprod``, ``cross``, ``aminmax`` and ``dropout``, composed from
existing ops."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F

__all__ = ['addn', 'addmv', 'addbmm', 'atan2', 'sinc', 'mse_loss', 'diag', 'scatter', 'msort', 'cumprod', 'cross',
           'aminmax', 'dropout']


def _tensor(value: Any, op: str, name: str = "input") -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def addn(x):
    """The element-wise sum of a tuple/list of same-shaped tensors.

    Raises:
        TypeError: ``x`` not a non-empty tuple/list of Tensors.
        ValueError: shapes differ.
    """
    if not isinstance(x, (tuple, list)) or not x or not all(isinstance(t, Tensor) for t in x):
        raise TypeError("addn: x must be a non-empty tuple or list of Tensors")
    if len({tuple(t.shape) for t in x}) != 1:
        raise ValueError(f"addn: every tensor must have one shape, got {[t.shape for t in x]}")
    total = x[0]
    for t in x[1:]:
        total = F.add(total, t)
    return total


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002 (MindSpore's argument name)
    """``beta * input + alpha * (mat @ vec)``."""
    product = F.reshape(F.matmul(_tensor(mat, "addmv", "mat"), F.reshape(_tensor(vec, "addmv", "vec"), (-1, 1))),
                        (-1,))
    return F.add(F.mul(input, beta), F.mul(product, alpha))


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    product = F.reduce_sum(F.matmul(_tensor(batch1, "addbmm", "batch1"), _tensor(batch2, "addbmm", "batch2")), 0)
    return F.add(F.mul(input, beta), F.mul(product, alpha))


def atan2(input, other):  # noqa: A002
    """The angle of the point (other, input): atan(input / other) moved to the right quadrant, in (-pi, pi]."""
    y, x = _tensor(input, "atan2"), _tensor(other, "atan2", "other")
    if not y.dtype.is_float:
        y = F.cast(y, mstype.float32)
    if not x.dtype.is_float:
        x = F.cast(x, mstype.float32)
    from .selection_ops import atan

    safe_x = F.select(F.equal(x, 0.0), F.ones_like(F.add(x, y)), F.add(x, F.zeros_like(y)))
    base = atan(F.div(y, safe_x))
    upper = F.greater_equal(y, 0.0)
    shifted = F.select(F.less(x, 0.0), F.add(base, F.select(upper, F.fill(base.dtype, base.shape, math.pi),
                                                             F.fill(base.dtype, base.shape, -math.pi))), base)
    vertical = F.mul(F.sign(y), math.pi / 2)
    return F.select(F.equal(F.add(x, F.zeros_like(y)), 0.0), F.add(vertical, F.zeros_like(base)), shifted)


def sinc(input):  # noqa: A002
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _tensor(input, "sinc")
    x = x if x.dtype.is_float else F.cast(x, mstype.float32)
    zero = F.equal(x, 0.0)
    scaled = F.mul(F.select(zero, F.ones_like(x), x), math.pi)
    return F.select(zero, F.ones_like(x), F.div(F.sin(scaled), scaled))


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    """``(input - target)^2``, reduced by 'mean', 'sum' or 'none'."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"mse_loss: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    loss = F.square(F.sub(_tensor(input, "mse_loss"), _tensor(target, "mse_loss", "target")))
    return {"mean": F.mean, "sum": F.reduce_sum}.get(reduction, lambda v: v)(loss)


def diag(input):  # noqa: A002
    """A diagonal tensor: out[i1..ik, i1..ik] = input[i1..ik], zeros elsewhere (shape input.shape * 2)."""
    x = _tensor(input, "diag")
    size = x.size
    identity = Tensor._from_numpy(np.eye(size, dtype=mstype.to_numpy(x.dtype)))
    spread = F.mul(F.reshape(x, (size, 1)), identity)
    return F.reshape(spread, tuple(x.shape) * 2)


def scatter(input, axis, index, src):  # noqa: A002
    """``input`` with ``src`` written at ``index`` along ``axis`` (``tensor_scatter_elements``)."""
    from .array_ops import tensor_scatter_elements

    return tensor_scatter_elements(input, index, src, axis)


def msort(input):  # noqa: A002
    """``input`` sorted along its first axis."""
    from .selection_ops import sort

    return sort(_tensor(input, "msort"), 0)[0]


def cumprod(input, dim, dtype=None):  # noqa: A002
    """Running product along ``dim``: out[..., j] = prod over i <= j (a masked product, quadratic in the length)."""
    x = _tensor(input, "cumprod")
    if dtype is not None:
        x = F.cast(x, dtype)
    axis = dim % x.ndim
    perm = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    moved = F.transpose(x, perm) if axis != x.ndim - 1 else x
    n = x.shape[axis]
    mask = Tensor._from_numpy(np.triu(np.ones((n, n), dtype=bool)))  # [i, j]: i <= j
    grid = F.broadcast_to(F.expand_dims(moved, -1), tuple(moved.shape) + (n,))
    out = F.prod(F.select(mask, grid, F.ones_like(grid)), -2)
    return F.transpose(out, tuple(perm.index(d) for d in range(x.ndim))) if axis != x.ndim - 1 else out


def cross(input, other, dim=None):  # noqa: A002
    """Cross product of 3-vectors along ``dim`` (the first axis of length 3 when None).

    Raises:
        ValueError: shapes differ, or the axis is not of length 3.
    """
    a, b = _tensor(input, "cross"), _tensor(other, "cross", "other")
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"cross: shapes differ, {a.shape} and {b.shape}")
    if dim is None:
        dim = next((d for d, s in enumerate(a.shape) if s == 3), None)
    if dim is None or a.shape[dim] != 3:
        raise ValueError(f"cross: the axis must have length 3, got shape {a.shape} and dim {dim}")
    from .array_ops import unstack

    a0, a1, a2 = unstack(a, dim)
    b0, b1, b2 = unstack(b, dim)
    parts = (F.sub(F.mul(a1, b2), F.mul(a2, b1)), F.sub(F.mul(a2, b0), F.mul(a0, b2)),
             F.sub(F.mul(a0, b1), F.mul(a1, b0)))
    return F.stack(parts, dim % a.ndim)


def aminmax(input, *, axis=0, keepdims=False):  # noqa: A002
    """(min, max) of ``input`` along ``axis``."""
    x = _tensor(input, "aminmax")
    return F.amin(x, axis, keepdims), F.amax(x, axis, keepdims)


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """During training, each element zeroed with probability ``p`` and the rest scaled by 1 / (1 - p);
    ``input`` itself otherwise. The mask is fresh on every call (seeded by ``aotnn.set_seed``).

    Raises:
        ValueError: ``p`` outside [0, 1].
    """
    x = _tensor(input, "dropout")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return F.zeros_like(x)
    kept = F.less(F.uniform_random(x.shape), 1.0 - p)
    return F.mul(F.mul(x, F.cast(kept, x.dtype)), 1.0 / (1.0 - p))
