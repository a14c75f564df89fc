"""Embedding tables: Embedding, EmbeddingLookup, MultiFieldEmbeddingLookup."""
from __future__ import annotations

__all__ = ['Embedding', 'EmbeddingLookup', 'MultiFieldEmbeddingLookup']

import numbers

import numpy as np

from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops import embedding_ops
from ..cell import Cell
from ._checks import check_bool, strict_positive_int

_INDEX_TYPES = (mstype.int32, mstype.int64)


def _check_int_type(value, name: str, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls}', the '{name}' must be int, but got {type(value).__name__}.")
    return value


def _check_input(value, name: str, dtypes: tuple, cls: str, ndim: int | None = None) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{cls}', the '{name}' must be a Tensor, but got {type(value).__name__}.")
    if value.dtype not in dtypes:
        raise TypeError(f"For '{cls}', the dtype of '{name}' must be one of {[str(d) for d in dtypes]}, "
                        f"but got {value.dtype}.")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"For '{cls}', the dimension of '{name}' must be {ndim}d, but got {value.ndim}.")


class Embedding(Cell):
    r"""A lookup table of ``vocab_size`` embedding vectors of ``embedding_size`` features.

    Ids outside ``[0, vocab_size)`` give zero vectors. ``use_one_hot=True`` (MindSpore's one-hot times table
    formulation) computes the same values and is accepted for compatibility; the lookup is always a gather.

    Args:
        vocab_size (int): size of the dictionary.
        embedding_size (int): features of each embedding vector.
        use_one_hot (bool): whether to use the one-hot formulation. Default: False.
        embedding_table (Union[Tensor, str, Initializer, numbers.Number]): initializer of the
            (vocab_size, embedding_size) float32 table. Default: 'normal'.
        dtype (mindspore.dtype): dtype of the one-hot values in MindSpore; a number type. Default: float32.
        padding_idx (int, None): the row of this id starts at zero. Default: None.

    Inputs:
        - **x** (Tensor) - int32 or int64 ids of any shape, typically (batch_size, x_length).

    Outputs:
        Tensor of shape ``x.shape + (embedding_size,)``.

    Raises:
        TypeError: If `vocab_size` or `embedding_size` is not an int.
        TypeError: If `use_one_hot` is not a bool, or `dtype` is not a number type.
        ValueError: If `padding_idx` is an int which not in range [0, `vocab_size`).
    """

    def __init__(self, vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
                 dtype=mstype.float32, padding_idx=None):
        super().__init__()
        self.vocab_size = _check_int_type(vocab_size, "vocab_size", "Embedding")
        self.embedding_size = _check_int_type(embedding_size, "embedding_size", "Embedding")
        self.use_one_hot = check_bool(use_one_hot, "use_one_hot", "Embedding")
        try:
            dtype = mstype.normalize(dtype)
        except (TypeError, ValueError):
            dtype = None
        if dtype not in mstype.number_type:
            raise TypeError(f"For 'Embedding', the 'dtype' must be a number type, but got {dtype}.")
        self.dtype = dtype
        table = initializer(embedding_table, [vocab_size, embedding_size])
        if padding_idx is not None:
            padding_idx = _check_int_type(padding_idx, "padding_idx", "Embedding")
            if not 0 <= padding_idx < vocab_size:
                raise ValueError(f"For 'Embedding', the 'padding_idx' must be in range [0, {vocab_size}), "
                                 f"but got {padding_idx}.")
            values = np.array(table.asnumpy(), copy=True)
            values[padding_idx] = 0
            table = Tensor(values)
        self.padding_idx = padding_idx
        self.embedding_table = Parameter(table, name="embedding_table")

    def construct(self, ids):
        _check_input(ids, "x", _INDEX_TYPES, "Embedding")
        return embedding_ops.embedding_lookup(self.embedding_table, ids)

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table}, dtype={self.dtype}, "
                f"padding_idx={self.padding_idx}")


class EmbeddingLookup(Cell):
    r"""Embedding lookup for large tables, with MindSpore's host ('CPU') or device ('DEVICE') targets.

    Both targets and every ``slice_mode`` compute the same thing on one device: rows of the table at the
    ids, zero rows for ids out of range, each row's L2 norm clipped to ``max_norm`` when given. The
    ``target``, ``slice_mode``, ``manual_shapes`` and ``sparse`` arguments are checked and kept for
    compatibility (they choose kernels and sharding in MindSpore's distributed modes).

    Args:
        vocab_size (int): size of the dictionary.
        embedding_size (int): features of each embedding vector.
        param_init (Union[Tensor, str, Initializer, numbers.Number]): initializer of the table. Default: 'normal'.
        target (str): 'CPU' or 'DEVICE'. Default: 'CPU'.
        slice_mode (str): 'batch_slice', 'field_slice', 'table_row_slice' or 'table_column_slice'.
            Default: 'batch_slice'.
        manual_shapes (tuple): row split for 'field_slice'. Default: None.
        max_norm (Union[float, None]): largest L2 norm of a looked-up row. Default: None.
        sparse (bool): sparse gradients; must be True for target 'CPU'. Default: True.
        vocab_cache_size (int): parameter-server cache size; only 0 is supported here. Default: 0.
        dtype (mindspore.dtype): dtype of the table. Default: float32.

    Inputs:
        - **input_indices** (Tensor) - int32 or int64 ids of any shape.

    Outputs:
        Tensor of shape ``input_indices.shape + (embedding_size,)``.

    Raises:
        TypeError: If `vocab_size` or `embedding_size` or `vocab_cache_size` is not an int.
        TypeError: If `sparse` is not a bool or `manual_shapes` is not a tuple.
        ValueError: If `vocab_size` or `embedding_size` is less than 1.
        ValueError: If `vocab_cache_size` is less than 0, or greater than 0 (no parameter server here).
        ValueError: If `target` is neither 'CPU' nor 'DEVICE'.
        ValueError: If `slice_mode` is not one of 'batch_slice', 'field_slice', 'table_row_slice' or
            'table_column_slice'.
        ValueError: If `sparse` is False and `target` is 'CPU'.
    """

    BATCH_SLICE = "batch_slice"
    FIELD_SLICE = "field_slice"
    TABLE_ROW_SLICE = "table_row_slice"
    TABLE_COLUMN_SLICE = "table_column_slice"
    _SLICE_MODES = (BATCH_SLICE, FIELD_SLICE, TABLE_ROW_SLICE, TABLE_COLUMN_SLICE)

    def __init__(self, vocab_size, embedding_size, param_init='normal', target='CPU', slice_mode='batch_slice',
                 manual_shapes=None, max_norm=None, sparse=True, vocab_cache_size=0, dtype=mstype.float32):
        super().__init__()
        cls = type(self).__name__
        self.sparse = check_bool(sparse, "sparse", cls)
        self.vocab_size = strict_positive_int(vocab_size, "vocab_size", cls)
        self.vocab_cache_size = _check_int_type(vocab_cache_size, "vocab_cache_size", cls)
        if vocab_cache_size < 0:
            raise ValueError(f"For '{cls}', the 'vocab_cache_size' must be a non-negative int, "
                             f"but got {vocab_cache_size}.")
        if target not in ("CPU", "DEVICE"):
            raise ValueError(f"For '{cls}', the 'target' must be in ['CPU', 'DEVICE'], but got {target!r}.")
        if not sparse and target == "CPU":
            raise ValueError(f"For '{cls}', 'sparse' must be True when 'target' is \"CPU\", "
                             f"but got 'sparse': {sparse} and 'target': {target}")
        if slice_mode not in self._SLICE_MODES:
            raise ValueError(f"For '{cls}', the 'slice_mode' must be in {list(self._SLICE_MODES)}, "
                             f"but got {slice_mode!r}.")
        if manual_shapes is not None and not isinstance(manual_shapes, tuple):
            raise TypeError(f"For '{cls}', the type of 'manual_shapes' must be tuple(int), "
                            f"but got {type(manual_shapes).__name__}!")
        if vocab_cache_size > 0:
            raise ValueError(f"For '{cls}', haven't supported cache enable for not ps mode.")
        self.embedding_size = strict_positive_int(embedding_size, "embedding_size", cls)
        if max_norm is not None:
            if isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real):
                raise TypeError(f"For '{cls}', the 'max_norm' must be float, but got {type(max_norm).__name__}.")
            if max_norm <= 0:
                raise ValueError(f"For '{cls}', the 'max_norm' must be a positive float, but got {max_norm}.")
            max_norm = float(max_norm)
        self.target, self.slice_mode, self.manual_shapes = target, slice_mode, manual_shapes
        self.max_norm = max_norm
        self.embedding_table = Parameter(initializer(param_init, [self.vocab_size, self.embedding_size], dtype=dtype),
                                         name="embedding_table")

    def construct(self, indices):
        _check_input(indices, "input_indices", _INDEX_TYPES, type(self).__name__)
        return embedding_ops.embedding_lookup(self.embedding_table, indices, max_norm=self.max_norm)

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, target={self.target}, "
                f"slice_mode={self.slice_mode}, max_norm={self.max_norm}, sparse={self.sparse}")


class MultiFieldEmbeddingLookup(EmbeddingLookup):
    r"""Looks up ids like :class:`EmbeddingLookup`, then pools the vectors of each sample by field.

    Every looked-up vector is multiplied by its ``input_values`` entry; vectors with the same field id are
    combined by ``operator``: 'SUM', 'MEAN' (divided by the sum of ``|input_values|`` of the field) or
    'MAX' (entries with value 0, the padding, are ignored). A field whose ``|input_values|`` sum to zero
    gives a zero vector. Field ids must be in ``[0, field_size)``; others are dropped.

    Args:
        vocab_size (int): size of the dictionary.
        embedding_size (int): features of each embedding vector.
        field_size (int): number of fields of the output.
        param_init, target, slice_mode, max_norm, sparse, dtype: as :class:`EmbeddingLookup`.
        feature_num_list (tuple): accompanies 'field_slice'; unused. Default: None.
        operator (str): 'SUM', 'MEAN' or 'MAX'. Default: 'SUM'.

    Inputs:
        - **input_indices** (Tensor) - (batch_size, seq_length), int32 or int64.
        - **input_values** (Tensor) - (batch_size, seq_length), float32.
        - **field_ids** (Tensor) - (batch_size, seq_length), int32.

    Outputs:
        Tensor (batch_size, field_size, embedding_size), float32.

    Raises:
        TypeError: If `vocab_size` or `embedding_size` or `field_size` is not an int.
        TypeError: If `sparse` is not a bool or `feature_num_list` is not a tuple.
        ValueError: If `vocab_size` or `embedding_size` or `field_size` is less than 1.
        ValueError: If `target` is neither 'CPU' nor 'DEVICE'.
        ValueError: If `slice_mode` is not one of 'batch_slice', 'field_slice', 'table_row_slice',
            'table_column_slice'.
        ValueError: If `sparse` is False and `target` is 'CPU'.
        ValueError: If `operator` is not one of 'SUM', 'MAX', 'MEAN'.
    """

    OPERATOR_SUM = 'SUM'
    OPERATOR_MEAN = 'MEAN'
    OPERATOR_MAX = 'MAX'

    def __init__(self, vocab_size, embedding_size, field_size, param_init='normal', target='CPU',
                 slice_mode='batch_slice', feature_num_list=None, max_norm=None, sparse=True, operator='SUM',
                 dtype=mstype.float32):
        if feature_num_list is not None and not isinstance(feature_num_list, tuple):
            raise TypeError(f"For '{type(self).__name__}', the type of 'feature_num_list' must be tuple(int), "
                            f"but got {type(feature_num_list).__name__}!")
        super().__init__(vocab_size, embedding_size, param_init, target, slice_mode, feature_num_list, max_norm,
                         sparse, dtype=dtype)
        self.field_size = strict_positive_int(field_size, "field_size", type(self).__name__)
        if operator not in ("SUM", "MAX", "MEAN"):
            raise ValueError(f"For '{type(self).__name__}', the 'operator' must be in ['SUM', 'MAX', 'MEAN'], "
                             f"but got {operator!r}.")
        self.operator = operator

    def construct(self, input_indices, input_values, field_ids):
        cls = type(self).__name__
        _check_input(input_indices, "input_indices", _INDEX_TYPES, cls, ndim=2)
        _check_input(input_values, "input_values", (mstype.float32,), cls, ndim=2)
        _check_input(field_ids, "field_ids", (mstype.int32,), cls, ndim=2)
        if not input_indices.shape == input_values.shape == field_ids.shape:
            raise ValueError(f"For '{cls}', 'input_indices', 'input_values' and 'field_ids' must have one shape, "
                             f"but got {input_indices.shape}, {input_values.shape} and {field_ids.shape}.")
        rows = embedding_ops.embedding_lookup(self.embedding_table, input_indices, max_norm=self.max_norm)
        return embedding_ops.field_pool(rows, input_values, field_ids, self.field_size, self.operator)

    def extend_repr(self) -> str:
        return super().extend_repr() + f", field_size={self.field_size}, operator={self.operator}"
