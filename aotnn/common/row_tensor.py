"""RowTensor: a tensor of which only some rows are stored (MindSpore's ``mindspore.RowTensor``), the form
sparse gradients (e.g. of an embedding table) take in MindSpore code."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtype as mstype
from .tensor import Tensor

_INDEX_DTYPES = (mstype.int32, mstype.int64)


class RowTensor:
    """Rows ``values[i]`` of a dense tensor of ``dense_shape`` at row ``indices[i]``; other rows are zero.

    Args:
        indices (Tensor): (n,) int32/int64 row numbers along the first axis.
        values (Tensor): (n, *dense_shape[1:]) the stored rows.
        shape (tuple[int]): the dense shape (MindSpore's argument name; the property is ``dense_shape``).
        row_tensor (RowTensor): copy this tensor's fields instead (then give nothing else).

    Raises:
        TypeError: ``indices``/``values`` not Tensors, ``indices`` not int32/int64, ``shape`` not ints.
        ValueError: ``indices`` not 1-D, ``values`` not of shape (n, *dense_shape[1:]), or (for concrete indices)
            a row outside ``dense_shape[0]``.
    """

    def __init__(self, indices: Tensor | None = None, values: Tensor | None = None, shape: Any = None,
                 row_tensor: RowTensor | None = None):
        dense_shape = shape
        if row_tensor is not None:
            if not isinstance(row_tensor, RowTensor):
                raise TypeError(f"row_tensor: expected a RowTensor, got {type(row_tensor).__name__}")
            if indices is not None or values is not None or dense_shape is not None:
                raise ValueError("RowTensor: give either row_tensor or indices, values and shape, not both")
            indices, values, dense_shape = row_tensor.indices, row_tensor.values, row_tensor.dense_shape
        if not isinstance(indices, Tensor) or indices.dtype not in _INDEX_DTYPES:
            raise TypeError(f"RowTensor: indices must be an int32/int64 Tensor, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)}")
        if not isinstance(values, Tensor):
            raise TypeError(f"RowTensor: values must be a Tensor, got {type(values).__name__}")
        if not isinstance(dense_shape, (tuple, list)) or not dense_shape or any(
                isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0 for d in dense_shape):
            raise TypeError(f"RowTensor: shape must be a non-empty tuple of positive ints, got {dense_shape!r}")
        dense_shape = tuple(int(d) for d in dense_shape)
        if indices.ndim != 1:
            raise ValueError(f"RowTensor: indices must be 1-D, got shape {indices.shape}")
        expected = (indices.shape[0],) + dense_shape[1:]
        if tuple(values.shape) != expected:
            raise ValueError(f"RowTensor: values must have shape {expected}, got {values.shape}")
        if not indices.is_symbolic and indices.shape[0]:
            rows = indices.asnumpy()
            if (rows < 0).any() or (rows >= dense_shape[0]).any():
                raise ValueError(f"RowTensor: indices must lie in [0, {dense_shape[0]}), got {rows.tolist()}")
        self._indices, self._values, self._dense_shape = indices, values, dense_shape

    @property
    def indices(self) -> Tensor:
        """The (n,) row numbers."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The stored rows."""
        return self._values

    @property
    def dense_shape(self) -> tuple[int, ...]:
        """The dense shape."""
        return self._dense_shape

    @property
    def dtype(self) -> mstype.DType:
        """The values' dtype."""
        return self._values.dtype

    def __repr__(self) -> str:
        return f"RowTensor(indices={self._indices.shape}, values={self._values.shape}, dense_shape={self._dense_shape})"
