"""Sparse layers: ``SparseToDense`` and ``SparseTensorDenseMatmul`` (COO sparse tensors)."""
from __future__ import annotations

__all__ = ['SparseToDense', 'SparseTensorDenseMatmul']

from typing import Any

from ...common.sparse_tensor import COOTensor, check_coo
from ...common.tensor import Tensor
from ...ops.sparse_ops import sparse_tensor_dense_matmul, sparse_to_dense
from ..cell import Cell


class SparseToDense(Cell):
    """Converts a sparse tensor (COOTensor) into dense.

    Inputs:
        - **sparse_tensor** (COOTensor) - the sparse tensor to convert (int32/int64 indices).

    Outputs:
        Tensor of shape ``sparse_tensor.shape`` and dtype ``sparse_tensor.dtype``; a repeated index keeps
        its last value (MindSpore's CPU kernel).

    Raises:
        TypeError: ``sparse_tensor`` is not a COOTensor, or its indices are not int32/int64.
        ValueError: an index outside the dense shape.

    Supported Platforms:
        ``CPU``

    Examples:
        >>> indices = Tensor([[0, 1], [1, 2]])
        >>> values = Tensor([1, 2], dtype=ms.int32)
        >>> print(nn.SparseToDense()(COOTensor(indices, values, (3, 4))))
        [[0 1 0 0]
         [0 0 2 0]
         [0 0 0 0]]
    """

    def __call__(self, sparse_tensor: Any) -> Tensor:
        if not isinstance(sparse_tensor, COOTensor):
            raise TypeError(f"SparseToDense: sparse_tensor must be a COOTensor, got {type(sparse_tensor).__name__}")
        return super().__call__(sparse_tensor)

    def construct(self, sparse_tensor: COOTensor) -> Tensor:
        return sparse_to_dense(sparse_tensor.indices, sparse_tensor.values, sparse_tensor.shape)


class SparseTensorDenseMatmul(Cell):
    """Multiplies sparse matrix ``a`` and dense matrix ``b``; both have rank 2.

    Args:
        adjoint_st (bool): if True, the sparse tensor is transposed before the product. Default: False.
        adjoint_dt (bool): if True, the dense tensor is transposed before the product. Default: False.

    Inputs:
        - **indices** (Tensor) - (n, 2) int32/int64 positions of the sparse entries (non-negative).
        - **values** (Tensor) - (n,) float16/float32/float64/int32/int64 values; repeated indices add up.
        - **sparse_shape** (tuple) - (N, C), the sparse matrix's shape.
        - **dense** (Tensor) - 2-D, the dtype of ``values``: (C, M), or (M, C) with ``adjoint_dt``;
          (N, M), or (M, N) with ``adjoint_dt``, when ``adjoint_st``.

    Outputs:
        Tensor of the values' dtype: (N, M), or (C, M) when ``adjoint_st``.

    Raises:
        TypeError: ``adjoint_st`` or ``adjoint_dt`` not a bool, or dtypes outside the description.
        ValueError: shapes outside the description, or an index outside ``sparse_shape``.

    Supported Platforms:
        ``CPU``

    Examples:
        >>> indices = Tensor([[0, 1], [1, 2]], dtype=ms.int32)
        >>> values = Tensor([1, 2], dtype=ms.float32)
        >>> dense = Tensor([[1, 1], [2, 2], [3, 3], [4, 4]], dtype=ms.float32)
        >>> print(nn.SparseTensorDenseMatmul()(indices, values, (3, 4), dense))
        [[2. 2.]
         [6. 6.]
         [0. 0.]]
    """

    def __init__(self, adjoint_st: bool = False, adjoint_dt: bool = False):
        super().__init__()
        for name, flag in (("adjoint_st", adjoint_st), ("adjoint_dt", adjoint_dt)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name}: expected a bool, got {type(flag).__name__}")
        self.adj_st, self.adj_dt = adjoint_st, adjoint_dt

    def __call__(self, indices: Tensor, values: Tensor, sparse_shape: Any, dense: Tensor) -> Tensor:
        # checked here too: inside the compiled construct the indices' values are unknown
        if isinstance(indices, Tensor) and isinstance(values, Tensor) and isinstance(sparse_shape, (tuple, list)):
            check_coo(indices, values, sparse_shape, "SparseTensorDenseMatmul")
        return super().__call__(indices, values, tuple(sparse_shape) if isinstance(sparse_shape, list)
                                else sparse_shape, dense)

    def construct(self, indices: Tensor, values: Tensor, sparse_shape: Any, dense: Tensor) -> Tensor:
        return sparse_tensor_dense_matmul(indices, values, sparse_shape, dense, self.adj_st, self.adj_dt)

    def extend_repr(self) -> str:
        return f"adjoint_st={self.adj_st}, adjoint_dt={self.adj_dt}"
