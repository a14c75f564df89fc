"""MindSpore's sparse primitives: ``ops.SparseToDense`` and ``ops.SparseTensorDenseMatmul``."""
from __future__ import annotations

from typing import Any

from ..common.tensor import Tensor
from .primitives import Primitive
from .sparse_ops import sparse_tensor_dense_matmul, sparse_to_dense

__all__ = ['SparseToDense', 'SparseTensorDenseMatmul']


class SparseToDense(Primitive):
    """``ops.SparseToDense()(indices, values, sparse_shape)``: the dense tensor of a COO triple.

    Inputs:
        - **indices** (Tensor) - (n, len(sparse_shape)) int32/int64 coordinates.
        - **values** (Tensor) - (n,) values; a repeated index keeps its last value.
        - **sparse_shape** (tuple[int]) - the positive dense shape.

    Returns:
        Tensor of shape ``sparse_shape`` and the dtype of ``values``.
    """

    def __call__(self, indices: Tensor, values: Tensor, sparse_shape: Any) -> Tensor:
        return sparse_to_dense(indices, values, sparse_shape)


class SparseTensorDenseMatmul(Primitive):
    """``ops.SparseTensorDenseMatmul(adjoint_st=False, adjoint_dt=False)(indices, values, sparse_shape, dense)``.

    Args:
        adjoint_st (bool): transpose the sparse (N, C) matrix first. Default: False.
        adjoint_dt (bool): transpose ``dense`` first. Default: False.

    Raises:
        TypeError: ``adjoint_st`` or ``adjoint_dt`` is not a bool.
    """

    def __init__(self, adjoint_st: bool = False, adjoint_dt: bool = False):
        super().__init__()
        for name, flag in (("adjoint_st", adjoint_st), ("adjoint_dt", adjoint_dt)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name}: expected a bool, got {type(flag).__name__}")
        self.adjoint_st, self.adjoint_dt = adjoint_st, adjoint_dt

    def __call__(self, indices: Tensor, values: Tensor, sparse_shape: Any, dense: Tensor) -> Tensor:
        return sparse_tensor_dense_matmul(indices, values, sparse_shape, dense, self.adjoint_st, self.adjoint_dt)
