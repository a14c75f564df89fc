"""COOTensor: a sparse tensor in coordinate format (MindSpore's ``mindspore.COOTensor``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtype as mstype
from .tensor import Tensor

_INDEX_DTYPES = (mstype.int16, mstype.int32, mstype.int64)


def check_coo(indices: Any, values: Any, shape: Any, what: str, index_dtypes=_INDEX_DTYPES) -> tuple[int, ...]:
    """Check a COO triple before anything is compiled or run; returns ``shape`` as a tuple of ints.

    Raises:
        TypeError: ``indices``/``values`` not Tensors, ``indices`` not of an integer dtype in
            ``index_dtypes``, or ``shape`` not a tuple/list of ints.
        ValueError: ``indices`` not (n, len(shape)), ``values`` not (n,), a non-positive dimension,
            or (for concrete indices) an index outside ``shape``.
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"{what}: indices must be a Tensor, got {type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{what}: values must be a Tensor, got {type(values).__name__}")
    if indices.dtype not in index_dtypes:
        raise TypeError(f"{what}: indices must have dtype in {[d.name for d in index_dtypes]}, got {indices.dtype.name}")
    if not isinstance(shape, (tuple, list)) or not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool)
                                                      for d in shape):
        raise TypeError(f"{what}: shape must be a tuple of ints, got {shape!r}")
    shape = tuple(int(d) for d in shape)
    if any(d <= 0 for d in shape):
        raise ValueError(f"{what}: every dimension of shape must be positive, got {shape}")
    if indices.ndim != 2 or indices.shape[1] != len(shape):
        raise ValueError(f"{what}: indices must have shape (n, {len(shape)}) for a {len(shape)}-D shape, "
                         f"got {indices.shape}")
    if values.shape != (indices.shape[0],):
        raise ValueError(f"{what}: values must have shape ({indices.shape[0]},) (one per index row), got {values.shape}")
    if not indices.is_symbolic and indices.shape[0]:
        idx = indices.asnumpy()
        bad = np.nonzero(((idx < 0) | (idx >= np.asarray(shape))).any(axis=1))[0]
        if bad.size:
            raise ValueError(f"{what}: index row {int(bad[0])} {idx[bad[0]].tolist()} is outside the shape {shape}")
    return shape


class COOTensor:
    """A sparse tensor: ``values[i]`` sits at ``indices[i]`` of a dense tensor of ``shape``, zeros elsewhere.

    Args:
        indices (Tensor): (n, ndim) int16/int32/int64 coordinates of the stored entries.
        values (Tensor): (n,) values of the stored entries.
        shape (tuple[int]): the dense shape.
        coo_tensor (COOTensor): copy this tensor's fields instead (then give nothing else).

    Raises:
        TypeError: see :func:`check_coo`.
        ValueError: see :func:`check_coo`.
    """

    def __init__(self, indices: Tensor | None = None, values: Tensor | None = None, shape: Any = None,
                 coo_tensor: COOTensor | None = None):
        if coo_tensor is not None:
            if not isinstance(coo_tensor, COOTensor):
                raise TypeError(f"coo_tensor: expected a COOTensor, got {type(coo_tensor).__name__}")
            if indices is not None or values is not None or shape is not None:
                raise ValueError("COOTensor: give either coo_tensor or indices, values and shape, not both")
            indices, values, shape = coo_tensor.indices, coo_tensor.values, coo_tensor.shape
        self._shape = check_coo(indices, values, shape, "COOTensor")
        self._indices, self._values = indices, values

    @property
    def indices(self) -> Tensor:
        """The (n, ndim) coordinates."""
        return self._indices

    @property
    def values(self) -> Tensor:
        """The (n,) stored values."""
        return self._values

    @property
    def shape(self) -> tuple[int, ...]:
        """The dense shape."""
        return self._shape

    @property
    def dtype(self) -> mstype.DType:
        """The values' dtype."""
        return self._values.dtype

    @property
    def size(self) -> int:
        """Number of stored entries."""
        return self._values.shape[0]

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def itemsize(self) -> int:
        return self._values.itemsize

    def to_dense(self) -> Tensor:
        """The dense tensor (a repeated index keeps its last value, as ``nn.SparseToDense``)."""
        from ..ops.sparse_ops import sparse_to_dense
        return sparse_to_dense(self._indices, self._values, self._shape, index_dtypes=_INDEX_DTYPES)

    def astype(self, dtype: Any) -> COOTensor:
        """A COOTensor with the values cast to ``dtype``."""
        return COOTensor(self._indices, self._values.astype(dtype), self._shape)

    def abs(self) -> COOTensor:
        return COOTensor(self._indices, self._values.abs(), self._shape)

    # Compiled calls take a COOTensor argument apart into its tensors (aotnn.jit.tensor_tree).
    def _tree_parts(self) -> tuple:
        return (self._indices, self._values, self._shape)

    @classmethod
    def _from_tree_parts(cls, parts: tuple) -> COOTensor:
        return cls(*parts)

    def __repr__(self) -> str:
        return (f"COOTensor(shape={list(self._shape)}, dtype={self.dtype}, indices={self._indices!r}, "
                f"values={self._values!r})")


def _check_csr(indptr: Any, indices: Any, values: Any, shape: Any) -> tuple[int, int]:
    for name, value in (("indptr", indptr), ("indices", indices), ("values", values)):
        if not isinstance(value, Tensor):
            raise TypeError(f"CSRTensor: {name} must be a Tensor, got {type(value).__name__}")
    for name, value in (("indptr", indptr), ("indices", indices)):
        if value.dtype not in _INDEX_DTYPES:
            raise TypeError(f"CSRTensor: {name} must have dtype in {[d.name for d in _INDEX_DTYPES]}, "
                            f"got {value.dtype.name}")
    if not isinstance(shape, (tuple, list)) or len(shape) != 2 or not all(
            isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape):
        raise TypeError(f"CSRTensor: shape must be a tuple of 2 ints (rows, columns), got {shape!r}")
    shape = (int(shape[0]), int(shape[1]))
    if min(shape) <= 0:
        raise ValueError(f"CSRTensor: every dimension of shape must be positive, got {shape}")
    if indptr.shape != (shape[0] + 1,):
        raise ValueError(f"CSRTensor: indptr must have shape ({shape[0] + 1},) (rows + 1), got {indptr.shape}")
    if indices.ndim != 1 or values.shape != indices.shape:
        raise ValueError(f"CSRTensor: indices and values must both have shape (n,), got {indices.shape} "
                         f"and {values.shape}")
    if not indptr.is_symbolic and not indices.is_symbolic:
        ptr, cols = indptr.asnumpy(), indices.asnumpy()
        if ptr[0] != 0 or ptr[-1] != cols.shape[0] or (np.diff(ptr) < 0).any():
            raise ValueError(f"CSRTensor: indptr must rise from 0 to {cols.shape[0]} (the number of values), "
                             f"got {ptr.tolist()}")
        if cols.size and (cols.min() < 0 or cols.max() >= shape[1]):
            raise ValueError(f"CSRTensor: every column index must be in [0, {shape[1]}), got {cols.tolist()}")
    return shape


class CSRTensor:
    """A 2-D sparse matrix in compressed sparse row format (MindSpore's ``mindspore.CSRTensor``).

    Row ``r`` holds ``values[indptr[r]:indptr[r + 1]]`` at the columns ``indices[indptr[r]:indptr[r + 1]]``.

    Args:
        indptr (Tensor): (rows + 1,) int16/int32/int64, rising from 0 to n.
        indices (Tensor): (n,) int16/int32/int64 column of each value.
        values (Tensor): (n,) the stored values.
        shape (tuple[int]): (rows, columns).
        csr_tensor (CSRTensor): copy this tensor's fields instead (then give nothing else).

    Raises:
        TypeError: a field that is not a Tensor, an index dtype that is not an integer one, or a shape
            that is not a tuple of two ints.
        ValueError: mismatched lengths, a non-positive dimension, or (concrete tensors) an ``indptr`` that
            does not rise from 0 to n, or a column outside the shape.
    """

    def __init__(self, indptr: Tensor | None = None, indices: Tensor | None = None, values: Tensor | None = None,
                 shape: Any = None, csr_tensor: CSRTensor | None = None):
        if csr_tensor is not None:
            if not isinstance(csr_tensor, CSRTensor):
                raise TypeError(f"csr_tensor: expected a CSRTensor, got {type(csr_tensor).__name__}")
            if any(v is not None for v in (indptr, indices, values, shape)):
                raise ValueError("CSRTensor: give either csr_tensor or indptr, indices, values and shape, not both")
            indptr, indices, values, shape = csr_tensor.indptr, csr_tensor.indices, csr_tensor.values, csr_tensor.shape
        self._shape = _check_csr(indptr, indices, values, shape)
        self._indptr, self._indices, self._values = indptr, indices, values

    indptr = property(lambda self: self._indptr, doc="The (rows + 1,) row offsets.")
    indices = property(lambda self: self._indices, doc="The (n,) column indices.")
    values = property(lambda self: self._values, doc="The (n,) stored values.")
    shape = property(lambda self: self._shape, doc="The dense shape (rows, columns).")
    dtype = property(lambda self: self._values.dtype, doc="The values' dtype.")
    size = property(lambda self: self._values.shape[0], doc="Number of stored values.")
    itemsize = property(lambda self: self._values.itemsize)
    ndim = property(lambda self: 2)

    def to_coo(self) -> COOTensor:
        """The same matrix as a COOTensor."""
        from ..ops.sparse_ops import csr_to_coo_indices
        return COOTensor(csr_to_coo_indices(self._indptr, self._indices), self._values, self._shape)

    def to_dense(self) -> Tensor:
        """The dense (rows, columns) matrix."""
        return self.to_coo().to_dense()

    def to_tuple(self) -> tuple:
        return self._indptr, self._indices, self._values, self._shape

    def astype(self, dtype: Any) -> CSRTensor:
        return CSRTensor(self._indptr, self._indices, self._values.astype(dtype), self._shape)

    def _tree_parts(self) -> tuple:
        return self.to_tuple()

    @classmethod
    def _from_tree_parts(cls, parts: tuple) -> CSRTensor:
        return cls(*parts)

    def __repr__(self) -> str:
        return (f"CSRTensor(shape={list(self._shape)}, dtype={self.dtype}, indptr={self._indptr!r}, "
                f"indices={self._indices!r}, values={self._values!r})")
