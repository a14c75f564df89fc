"""Sparse (COO) ops: densifying and sparse x dense matrix products.

MindSpore reaches them through ``nn.SparseToDense``, ``nn.SparseTensorDenseMatmul``, the
``ops.SparseToDense`` / ``ops.SparseTensorDenseMatmul`` primitives and ``COOTensor.to_dense``.
"""
from __future__ import annotations

from typing import Any

from ..common import dtype as mstype
from ..common.sparse_tensor import check_coo
from ..common.tensor import Tensor
from ._dispatch import apply

__all__: list[str] = []

_OP_INDEX_DTYPES = (mstype.int32, mstype.int64)
_MATMUL_DTYPES = (mstype.float16, mstype.float32, mstype.float64, mstype.int32, mstype.int64)


def sparse_to_dense(indices: Tensor, values: Tensor, sparse_shape: Any, index_dtypes=None) -> Tensor:
    """The dense tensor of shape ``sparse_shape`` with ``values`` at ``indices`` (a repeated index keeps
    its last value, as MindSpore's CPU kernel).

    Raises:
        TypeError: indices/values not Tensors, indices not int32/int64, sparse_shape not a tuple of ints.
        ValueError: indices not (n, len(sparse_shape)), values not (n,), a non-positive dimension, or an
            index outside sparse_shape.
    """
    shape = check_coo(indices, values, sparse_shape, "SparseToDense", index_dtypes or _OP_INDEX_DTYPES)
    return apply("sparse_to_dense", indices, values, sparse_shape=shape)


def sparse_tensor_dense_matmul(indices: Tensor, values: Tensor, sparse_shape: Any, dense: Tensor,
                               adjoint_st: bool = False, adjoint_dt: bool = False) -> Tensor:
    """``op(A) @ op(B)``: A the sparse (N, C) matrix (repeated indices add up), B ``dense``; ``op``
    transposes A when ``adjoint_st`` and B when ``adjoint_dt``.

    Raises:
        TypeError: a bad indices dtype, values not float16/float32/float64/int32/int64, dense not a
            Tensor of the values' dtype, adjoint flags not bool.
        ValueError: shapes that do not meet the description (sparse_shape must have 2 entries), or
            an index outside sparse_shape.
    """
    for name, flag in (("adjoint_st", adjoint_st), ("adjoint_dt", adjoint_dt)):
        if not isinstance(flag, bool):
            raise TypeError(f"SparseTensorDenseMatmul: {name} must be a bool, got {type(flag).__name__}")
    if not isinstance(sparse_shape, (tuple, list)) or len(sparse_shape) != 2:
        raise ValueError(f"SparseTensorDenseMatmul: sparse_shape must have 2 entries (N, C), got {sparse_shape!r}")
    shape = check_coo(indices, values, sparse_shape, "SparseTensorDenseMatmul", _OP_INDEX_DTYPES)
    if values.dtype not in _MATMUL_DTYPES:
        raise TypeError(f"SparseTensorDenseMatmul: values must have dtype in {[d.name for d in _MATMUL_DTYPES]}, "
                        f"got {values.dtype.name}")
    if not isinstance(dense, Tensor):
        raise TypeError(f"SparseTensorDenseMatmul: dense must be a Tensor, got {type(dense).__name__}")
    if dense.dtype != values.dtype:
        raise TypeError(f"SparseTensorDenseMatmul: dense must have the dtype of values ({values.dtype.name}), "
                        f"got {dense.dtype.name}")
    if dense.ndim != 2:
        raise ValueError(f"SparseTensorDenseMatmul: dense must be 2-D, got shape {dense.shape}")
    inner = shape[0] if adjoint_st else shape[1]
    rows = dense.shape[1] if adjoint_dt else dense.shape[0]
    if rows != inner:
        axis = "dense.shape[1]" if adjoint_dt else "dense.shape[0]"
        raise ValueError(f"SparseTensorDenseMatmul: {axis} must be {inner} for sparse_shape {shape} "
                         f"(adjoint_st={adjoint_st}, adjoint_dt={adjoint_dt}), got dense shape {dense.shape}")
    return apply("sparse_tensor_dense_matmul", indices, values, dense, sparse_shape=shape,
                 adjoint_st=adjoint_st, adjoint_dt=adjoint_dt)


def csr_to_coo_indices(indptr: Tensor, indices: Tensor) -> Tensor:
    """The (n, 2) (row, column) coordinates of the CSR entries described by ``indptr`` and ``indices``."""
    return apply("csr_to_coo_indices", indptr, indices)
