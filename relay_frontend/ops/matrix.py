"""Lowering rules for batched matrices: diagonals, determinant and inverse.

Determinant and inverse use Gauss-Jordan elimination with partial pivoting, unrolled over the
(static) matrix size: every step is a handful of tensor ops over the whole batch, and pivot rows
are exchanged with one-hot masks, so the graph has no data-dependent control flow.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit
from .registry import rule

_op = relax.op


def _matrix_dims(x, op: str) -> tuple[int, int]:
    shape = static_shape(x)
    if len(shape) < 2:
        raise CaptureError(f"{op}: input must have at least 2 dimensions, got shape {shape}")
    return shape[-2], shape[-1]


@rule("matrix_diag")
def matrix_diag(x):
    """(..., N) -> (..., N, N) with ``x`` on the main diagonal and zeros elsewhere."""
    shape = static_shape(x)
    if not shape:
        raise CaptureError("matrix_diag: input must have at least 1 dimension, got a scalar")
    n = shape[-1]
    rows = _op.broadcast_to(_op.expand_dims(x, -2), list(shape) + [n])  # explicit: where's gradient does not reduce
    return _op.where(relax.const(np.eye(n, dtype=bool)), rows, relax.const(0, dtype_of(x)))


@rule("matrix_diag_part")
def matrix_diag_part(x):
    """(..., M, N) -> (..., min(M, N)): the main diagonal."""
    rows, cols = _matrix_dims(x, "matrix_diag_part")
    lead = list(static_shape(x)[:-2])
    flat = _op.reshape(x, lead + [rows * cols])
    index = relax.const(np.arange(min(rows, cols), dtype="int64") * (cols + 1))
    return _op.take(flat, index, axis=len(lead), mode="clip")


@rule("matrix_set_diag")
def matrix_set_diag(x, diagonal):
    """``x`` with its main diagonal replaced by ``diagonal`` of shape (..., min(M, N))."""
    rows, cols = _matrix_dims(x, "matrix_set_diag")
    shape, diag_shape = static_shape(x), static_shape(diagonal)
    k = min(rows, cols)
    if tuple(diag_shape) != tuple(shape[:-2]) + (k,):
        raise CaptureError(f"matrix_set_diag: diagonal must have shape {tuple(shape[:-2]) + (k,)}, "
                           f"got {tuple(diag_shape)}")
    if dtype_of(diagonal) != dtype_of(x):
        raise CaptureError(f"matrix_set_diag: diagonal must have x's dtype {dtype_of(x)}, got {dtype_of(diagonal)}")
    if k < cols:
        padding = relax.const(np.zeros(tuple(shape[:-2]) + (cols - k,), dtype_of(x)))
        diagonal = emit(_op.concat([diagonal, padding], axis=-1))
    mask = relax.const(np.eye(rows, cols, dtype=bool))
    return _op.where(mask, _op.broadcast_to(_op.expand_dims(diagonal, -2), list(shape)), x)


def _pick(a, k: int, axis: int):
    """a[..., k, ...] along ``axis``, that axis removed (take + reshape: both have gradients)."""
    shape = list(static_shape(a))
    axis %= len(shape)
    picked = _op.take(a, relax.const(np.array([k], "int64")), axis=axis, mode="clip")
    return emit(_op.reshape(picked, shape[:axis] + shape[axis + 1:]))


def _column(a, k: int):
    """a[..., :, k] as (..., n)."""
    return _pick(a, k, -1)


def _row(a, k: int):
    """a[..., k, :] as (..., m)."""
    return _pick(a, k, -2)


def _gauss_jordan(a, with_inverse: bool):
    """(determinant, inverse or None) of the square matrices ``a`` (float32), by Gauss-Jordan elimination."""
    n = static_shape(a)[-1]
    lead = list(static_shape(a)[:-2])
    dtype = dtype_of(a)
    if with_inverse:
        eye = relax.const(np.broadcast_to(np.eye(n, dtype=dtype), tuple(lead) + (n, n)).copy())
        a = emit(_op.concat([a, eye], axis=-1))
    det = relax.const(np.ones(lead, dtype))
    positions = relax.const(np.arange(n, dtype="int64"))
    for k in range(n):
        unit = np.zeros(n, dtype)
        unit[k] = 1
        e_k = relax.const(unit)
        # pivot: the largest |a[i, k]| for i >= k (rows above k are already used)
        used = relax.const(np.arange(n) < k)
        candidates = _op.where(used, relax.const(-1.0, dtype), _op.abs(_column(a, k)))
        pivot_row = emit(_op.argmax(candidates, axis=-1))
        e_p = emit(_op.astype(_op.equal(positions, _op.expand_dims(pivot_row, -1)), dtype))
        row_k = _row(a, k)
        row_p = emit(_op.sum(_op.multiply(_op.expand_dims(e_p, -1), a), axis=-2))
        # swap rows k and p: a += (e_k - e_p) (row_p - row_k)^T
        a = emit(_op.add(a, _op.multiply(_op.expand_dims(_op.subtract(e_k, e_p), -1),
                                         _op.expand_dims(_op.subtract(row_p, row_k), -2))))
        swapped = _op.not_equal(pivot_row, relax.const(k, "int64"))
        pivot = _pick(_column(a, k), k, -1)
        det = emit(_op.multiply(det, _op.where(swapped, _op.negative(pivot), pivot)))
        # normalise row k, then clear column k in every other row
        new_row = emit(_op.divide(_row(a, k), _op.expand_dims(pivot, -1)))
        factor = emit(_op.multiply(_column(a, k), relax.const((1 - unit).astype(dtype))))
        a = emit(_op.subtract(a, _op.multiply(_op.expand_dims(factor, -1), _op.expand_dims(new_row, -2))))
        keep = relax.const((1 - unit).astype(dtype)[:, None])
        a = emit(_op.add(_op.multiply(a, keep), _op.multiply(_op.expand_dims(e_k, -1), _op.expand_dims(new_row, -2))))
    inverse = None
    if with_inverse:
        inverse = _op.take(a, relax.const(np.arange(n, 2 * n, dtype="int64")), axis=len(lead) + 1, mode="clip")
    return det, inverse


def _square_float(x, op: str):
    rows, cols = _matrix_dims(x, op)
    if rows != cols:
        raise CaptureError(f"{op}: matrices must be square, got shape {static_shape(x)}")
    if dtype_of(x) not in ("float16", "float32", "float64"):
        raise CaptureError(f"{op}: input must be float16, float32 or float64, got {dtype_of(x)}")
    return x if dtype_of(x) != "float16" else emit(_op.astype(x, "float32"))


@rule("det")
def det(x):
    """Determinant of each (N, N) matrix of ``x`` (..., N, N) -> (...)."""
    det_value, _ = _gauss_jordan(_square_float(x, "det"), with_inverse=False)
    return det_value if dtype_of(x) != "float16" else _op.astype(det_value, "float16")


@rule("inverse")
def inverse(x):
    """Inverse of each (N, N) matrix of ``x``; singular matrices give inf/nan entries."""
    _, inv = _gauss_jordan(_square_float(x, "inverse"), with_inverse=True)
    return inv if dtype_of(x) != "float16" else _op.astype(emit(inv), "float16")
