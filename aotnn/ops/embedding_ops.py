"""Embedding-table ops used by ``nn.Embedding``, ``nn.EmbeddingLookup`` and ``nn.MultiFieldEmbeddingLookup``.

MindSpore reaches these computations through its layers (and its Gather/EmbeddingLookup primitives),
so nothing here is re-exported into ``aotnn.ops`` (``__all__`` is empty).
"""
from __future__ import annotations

from ._dispatch import apply

__all__: list[str] = []


def embedding_lookup(table, indices, offset: int = 0, max_norm: float | None = None):
    """Rows of ``table`` at ``indices - offset`` (zero rows for ids out of range), clipped to ``max_norm``."""
    return apply("embedding_lookup", table, indices, offset=int(offset), max_norm=max_norm)


def field_pool(embedding, values, field_ids, field_size: int, operator: str = "SUM"):
    """Pool (B, L, E) rows weighted by ``values`` into (B, field_size, E) by ``field_ids`` ('SUM'/'MEAN'/'MAX')."""
    return apply("field_pool", embedding, values, field_ids, field_size=int(field_size), operator=operator)
