"""Lowering rules, one per op, split by family. Importing this package registers them all."""
from . import conv, elementwise, linalg, norm, pool, reduce, shape  # noqa: F401
from .registry import RULES, lookup, rule

__all__ = ["RULES", "lookup", "rule"]
