"""``set_context`` / ``get_context``: both execution modes compile ahead of time here."""
from __future__ import annotations

from typing import Any

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_CONTEXT: dict[str, Any] = {"mode": GRAPH_MODE, "device_target": "CPU", "device_id": 0}
_TARGETS = ("CPU", "GPU", "Ascend")


def set_context(**kwargs: Any) -> None:
    """Set context options. ``mode`` is GRAPH_MODE or PYNATIVE_MODE (both compile and run the same way).

    Raises:
        ValueError: an unknown mode or device_target.
    """
    if "mode" in kwargs and kwargs["mode"] not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"mode: expected GRAPH_MODE (0) or PYNATIVE_MODE (1), got {kwargs['mode']!r}")
    if "device_target" in kwargs and kwargs["device_target"] not in _TARGETS:
        raise ValueError(f"device_target: expected one of {_TARGETS}, got {kwargs['device_target']!r}")
    _CONTEXT.update(kwargs)


def get_context(attr_key: str) -> Any:
    if attr_key not in _CONTEXT:
        raise ValueError(f"attr_key: unknown context key {attr_key!r}; known: {sorted(_CONTEXT)}")
    return _CONTEXT[attr_key]
