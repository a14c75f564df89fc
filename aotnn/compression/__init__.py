"""``mindspore.compression``: quantization data types (``compression.common.QuantDtype``) and the
configuration of quantization-aware training (``compression.quant``)."""
from __future__ import annotations

import importlib
from typing import Any

from . import common

__all__ = ['common', 'quant']


def __getattr__(name: str) -> Any:
    # ``quant`` builds on aotnn.nn, which itself imports ``common``: load it on first use
    if name == "quant":
        return importlib.import_module(f"{__name__}.quant")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
