"""Lowering rules, one per op, split by family (one module each). Importing this package registers them all."""
import importlib
import pkgutil

from .registry import RULES, lookup, rule

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("registry", "common"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["RULES", "lookup", "rule"]
