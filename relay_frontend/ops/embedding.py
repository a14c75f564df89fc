"""Lowering rules for embedding tables: lookups (with zeros for out-of-range ids) and field pooling."""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import cast, emit
from .registry import rule

_op = relax.op
_FLOAT32_LOWEST = float(np.finfo(np.float32).min)  # MindSpore's -3.402823466e38 padding value for 'MAX'


def _clip_by_norm(x: relax.Expr, max_norm: float) -> relax.Expr:
    """``x * max_norm / max(||x||_2, max_norm)`` over the last axis (MindSpore's ClipByNorm)."""
    dtype = dtype_of(x)
    norm = emit(_op.sqrt(emit(_op.sum(emit(_op.multiply(x, x)), axis=[-1], keepdims=True))))
    limit = relax.const(max_norm, dtype)
    return emit(_op.divide(emit(_op.multiply(x, limit)), emit(_op.maximum(norm, limit))))


@rule("embedding_lookup")
def embedding_lookup(table, indices, offset: int = 0, max_norm: float | None = None):
    """Rows ``table[indices - offset]``: shape ``indices.shape + (embedding_size,)``.

    Ids outside ``[0, vocab_size)`` (after subtracting ``offset``) give zero rows, as MindSpore's
    EmbeddingLookup and Embedding document. ``max_norm`` clips each row's L2 norm.
    """
    if dtype_of(indices) not in ("int32", "int64"):
        raise CaptureError(f"embedding_lookup: indices must be int32 or int64, got {dtype_of(indices)}")
    if len(static_shape(table)) != 2:
        raise CaptureError(f"embedding_lookup: the table must be 2-D, got shape {static_shape(table)}")
    vocab, width = static_shape(table)
    shape = static_shape(indices)
    count = int(np.prod(shape)) if shape else 1
    ids = emit(_op.reshape(indices, [count]))
    if offset:
        ids = emit(_op.subtract(ids, relax.const(offset, dtype_of(ids))))
    valid = emit(_op.logical_and(emit(_op.greater_equal(ids, relax.const(0, dtype_of(ids)))),
                                 emit(_op.less(ids, relax.const(vocab, dtype_of(ids))))))
    safe = emit(_op.where(valid, ids, relax.const(0, dtype_of(ids))))
    rows = emit(_op.take(table, safe, axis=0, mode="clip"))  # ids are in range; "fast" warns at every build
    rows = emit(_op.where(emit(_op.expand_dims(valid, 1)), rows, relax.const(0, dtype_of(table))))
    if max_norm is not None:
        rows = _clip_by_norm(rows, float(max_norm))
    return _op.reshape(rows, list(shape) + [width])


@rule("field_pool")
def field_pool(embedding, values, field_ids, field_size: int, operator: str = "SUM"):
    """MultiFieldEmbeddingLookup's pooling: (B, L, E) looked-up rows -> (B, field_size, E).

    Each row is weighted by ``values`` and pooled with the rows of its sample that share its field id:
    'SUM', 'MEAN' (divided by the field's sum of ``|values|``, 0 for an empty field) or 'MAX' (entries
    with value 0 are ignored; a field whose ``|values|`` sum to 0 gives 0). Field ids outside
    ``[0, field_size)`` are dropped.
    """
    if operator not in ("SUM", "MEAN", "MAX"):
        raise CaptureError(f"field_pool: operator must be 'SUM', 'MEAN' or 'MAX', got {operator!r}")
    batch, length, width = static_shape(embedding)
    if static_shape(values) != (batch, length) or static_shape(field_ids) != (batch, length):
        raise CaptureError(f"field_pool: values {static_shape(values)} and field_ids {static_shape(field_ids)} "
                           f"must both have shape {(batch, length)}")
    dtype = dtype_of(embedding)
    values = cast(values, dtype)
    fields = relax.const(np.arange(field_size, dtype=dtype_of(field_ids)))
    member = emit(_op.equal(emit(_op.expand_dims(field_ids, 2)), fields))  # (B, L, F)
    weight = emit(_op.expand_dims(values, 2))  # (B, L, 1)
    weighted = emit(_op.multiply(weight, embedding))  # (B, L, E)
    member_t = emit(_op.permute_dims(emit(_op.astype(member, dtype)), [0, 2, 1]))  # (B, F, L)
    count = emit(_op.matmul(member_t, emit(_op.abs(weight))))  # (B, F, 1)
    nonzero = emit(_op.not_equal(count, relax.const(0, dtype)))
    zero = relax.const(0, dtype)
    if operator == "MAX":
        lowest = relax.const(_FLOAT32_LOWEST, dtype)
        padded = emit(_op.add(weighted, emit(_op.where(emit(_op.equal(weight, zero)), lowest, zero))))
        spread = emit(_op.where(emit(_op.expand_dims(member, 3)), emit(_op.expand_dims(padded, 2)), lowest))
        return _op.where(nonzero, emit(_op.max(spread, axis=[1])), zero)
    merged = emit(_op.matmul(member_t, weighted))  # (B, F, E)
    if operator == "SUM":
        return merged
    safe = emit(_op.where(nonzero, count, relax.const(1, dtype)))
    return _op.where(nonzero, emit(_op.divide(merged, safe)), zero)
