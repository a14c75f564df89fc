"""Lowering rules for COO sparse tensors: densifying and sparse x dense matrix products.

Both rules scatter-add into a zero tensor with ``scatter_nd``. Entries whose indices fall outside
the dense shape are dropped (their index is clamped and their value zeroed) so that a bad index
in a compiled graph can never write out of bounds; eager callers are checked in Python first.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit
from .registry import rule

_op = relax.op
_INDEX_DTYPES = ("int16", "int32", "int64")


def _check_coo(indices: relax.Expr, values: relax.Expr, rank: int, what: str) -> int:
    """Number of entries ``n`` after checking ``indices`` (n, rank) int32/int64 and ``values`` (n,)."""
    if dtype_of(indices) not in _INDEX_DTYPES:
        raise CaptureError(f"{what}: indices must be int16, int32 or int64, got {dtype_of(indices)}")
    ishape, vshape = static_shape(indices), static_shape(values)
    if len(ishape) != 2 or ishape[1] != rank:
        raise CaptureError(f"{what}: indices must have shape (n, {rank}), got {ishape}")
    if vshape != (ishape[0],):
        raise CaptureError(f"{what}: values must have shape ({ishape[0]},), got {vshape}")
    return ishape[0]


def _safe_indices(indices: relax.Expr, shape: tuple[int, ...]) -> tuple[relax.Expr, relax.Expr]:
    """``indices`` cast to int64 with out-of-range rows clamped to 0, and the (n,) mask of valid rows."""
    idx = emit(_op.astype(indices, "int64"))
    limits = relax.const(np.asarray(shape, np.int64), "int64")
    zero = relax.const(0, "int64")
    inside = emit(_op.logical_and(emit(_op.greater_equal(idx, zero)), emit(_op.less(idx, limits))))
    valid = emit(_op.min(emit(_op.astype(inside, "int32")), axis=[1]))  # all() over the row
    valid = emit(_op.astype(valid, "bool"))
    safe = emit(_op.where(emit(_op.expand_dims(valid, 1)), idx, zero))
    return safe, valid


def _masked(values: relax.Expr, keep: relax.Expr) -> relax.Expr:
    return emit(_op.where(keep, values, relax.const(0, dtype_of(values))))


def _scatter_add(shape: list[int], index: relax.Expr, updates: relax.Expr) -> relax.Expr:
    """zeros(shape) with ``updates[i]`` added at ``index[i]`` (an (n, k) index into the first k axes)."""
    zeros = emit(_op.zeros(shape, dtype_of(updates)))
    return emit(_op.scatter_nd(zeros, index, updates, reduction="add"))


@rule("sparse_to_dense")
def sparse_to_dense(indices, values, sparse_shape: tuple[int, ...]):
    """The dense tensor of shape ``sparse_shape`` holding ``values`` at ``indices``, zeros elsewhere.

    Where an index repeats, the LAST entry wins, as in MindSpore's CPU kernel (which assigns the
    entries in order): each position's winner is found with a scatter-max of the entry numbers, and
    the other entries are masked out before the scatter-add (O(n + size), deterministic).
    """
    shape = [int(d) for d in sparse_shape]
    n = _check_coo(indices, values, len(shape), "sparse_to_dense")
    dtype = dtype_of(values)
    work = emit(_op.astype(values, "uint8")) if dtype == "bool" else values
    safe, valid = _safe_indices(indices, tuple(shape))
    if n > 1:
        # the winner of each dense position is its largest entry number: scatter-max the numbers, read back
        size = int(np.prod(shape))
        strides = relax.const(np.asarray([int(np.prod(shape[i + 1:])) for i in range(len(shape))], np.int64), "int64")
        flat = emit(_op.sum(emit(_op.multiply(safe, strides)), axis=[1]))  # (n,)
        order = relax.const(np.arange(n, dtype=np.int64), "int64")
        numbers = emit(_op.where(valid, order, relax.const(-1, "int64")))
        unset = emit(_op.full([size], relax.const(-1, "int64"), "int64"))
        winner = emit(_op.scatter_nd(unset, emit(_op.expand_dims(flat, 1)), numbers, reduction="max"))
        won = emit(_op.equal(emit(_op.take(winner, flat, axis=0, mode="clip")), order))
        keep = emit(_op.logical_and(valid, won))
    else:
        keep = valid
    dense = _scatter_add(shape, safe, _masked(work, keep))
    return _op.astype(dense, "bool") if dtype == "bool" else dense


@rule("sparse_tensor_dense_matmul")
def sparse_tensor_dense_matmul(indices, values, dense, sparse_shape: tuple[int, int], adjoint_st: bool = False,
                               adjoint_dt: bool = False):
    """``op(A) @ op(B)`` for the sparse (N, C) matrix A (``indices``, ``values``) and the dense B.

    ``op`` transposes A when ``adjoint_st`` and B when ``adjoint_dt``. Repeated indices add up, as
    in MindSpore's CPU kernel (which accumulates every entry's products).
    """
    rows_n, cols_n = (int(d) for d in sparse_shape)
    _check_coo(indices, values, 2, "sparse_tensor_dense_matmul")
    if dtype_of(values) != dtype_of(dense):
        raise CaptureError(f"sparse_tensor_dense_matmul: dense must have the dtype of values ({dtype_of(values)}), "
                           f"got {dtype_of(dense)}")
    if len(static_shape(dense)) != 2:
        raise CaptureError(f"sparse_tensor_dense_matmul: dense must be 2-D, got shape {static_shape(dense)}")
    if adjoint_dt:
        dense = emit(_op.permute_dims(dense, [1, 0]))
    inner, out_rows = (rows_n, cols_n) if adjoint_st else (cols_n, rows_n)
    if static_shape(dense)[0] != inner:
        raise CaptureError(f"sparse_tensor_dense_matmul: the dense operand (after adjoint_dt) must have {inner} rows, "
                           f"got shape {static_shape(dense)}")
    width = static_shape(dense)[1]
    safe, valid = _safe_indices(indices, (rows_n, cols_n))
    row_axis, col_axis = (1, 0) if adjoint_st else (0, 1)
    out_index = emit(_op.strided_slice(safe, axes=[1], begin=[row_axis], end=[row_axis + 1]))  # (n, 1)
    in_index = emit(_op.reshape(emit(_op.strided_slice(safe, axes=[1], begin=[col_axis], end=[col_axis + 1])), [-1]))
    picked = emit(_op.take(dense, in_index, axis=0, mode="clip"))  # (n, width); indices are in range
    scaled = emit(_op.multiply(emit(_op.expand_dims(_masked(values, valid), 1)), picked))
    return _scatter_add([out_rows, width], out_index, scaled)


@rule("csr_to_coo_indices")
def csr_to_coo_indices(indptr, indices):
    """The (n, 2) COO coordinates of a CSR matrix: entry k lies in row #{r : indptr[r + 1] <= k}.

    The count is a comparison of every entry with every row end, summed (a fused reduction; Relax's
    cumsum has no kernel on every target).
    """
    for name, value in (("indptr", indptr), ("indices", indices)):
        if dtype_of(value) not in _INDEX_DTYPES or len(static_shape(value)) != 1:
            raise CaptureError(f"csr_to_coo_indices: {name} must be a 1-D int16/int32/int64 tensor, got "
                               f"{dtype_of(value)}{list(static_shape(value))}")
    n, rows_plus_one = static_shape(indices)[0], static_shape(indptr)[0]
    dtype = dtype_of(indices)
    ends = emit(_op.strided_slice(emit(_op.astype(indptr, "int64")), axes=[0], begin=[1], end=[rows_plus_one]))
    entry = relax.const(np.arange(n, dtype=np.int64)[:, None], "int64")
    ended = emit(_op.astype(emit(_op.less_equal(emit(_op.expand_dims(ends, 0)), entry)), "int64"))  # (n, rows)
    rows = emit(_op.astype(emit(_op.sum(ended, axis=[1])), dtype))
    return _op.concat([emit(_op.expand_dims(rows, 1)), emit(_op.expand_dims(indices, 1))], axis=1)
