"""The ``aotnn`` command line (click): one module per command, all registered on :data:`main`.

``aotnn compile``, ``run``, ``inspect`` and ``export`` live here; any other module added to this
package that defines commands on ``main`` (``aotnn bench``...) is picked up automatically.
"""
from __future__ import annotations

import importlib
import pkgutil

from .app import main
from .models import load_model, parse_input

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("app", "models", "__main__"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["main", "load_model", "parse_input"]
