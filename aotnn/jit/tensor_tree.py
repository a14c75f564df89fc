"""Separating the Tensors of nested arguments from the rest, and putting values back in their place."""
from __future__ import annotations

from typing import Any

from ..common.tensor import Tensor

_SLOT = "__tensor_slot__"


class _Parts:
    """The template of an object that takes itself apart (``_tree_parts``), e.g. a COOTensor."""

    def __init__(self, kind: type, parts: Any):
        self.kind, self.parts = kind, parts


def split_tensors(value: Any, tensors: list[Tensor]) -> Any:
    """``value`` with every Tensor (in tuples/lists/dicts) replaced by a slot; the Tensors go to ``tensors``."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return (_SLOT, len(tensors) - 1)
    if hasattr(value, "_tree_parts"):
        return _Parts(type(value), split_tensors(value._tree_parts(), tensors))
    if isinstance(value, (list, tuple)):
        return type(value)(split_tensors(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: split_tensors(v, tensors) for k, v in value.items()}
    return value


def fill_tensors(template: Any, values: Any) -> Any:
    """The inverse of :func:`split_tensors`: slots replaced by ``values[slot]``."""
    if isinstance(template, tuple) and len(template) == 2 and isinstance(template[0], str) and template[0] == _SLOT:
        return values[template[1]]
    if isinstance(template, _Parts):
        return template.kind._from_tree_parts(fill_tensors(template.parts, values))
    if isinstance(template, (list, tuple)):
        return type(template)(fill_tensors(v, values) for v in template)
    if isinstance(template, dict):
        return {k: fill_tensors(v, values) for k, v in template.items()}
    return template
