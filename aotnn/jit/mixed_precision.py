"""The compute dtype set by ``Cell.to_float`` for the cells being captured (innermost wins)."""
from __future__ import annotations

import contextlib
import threading

_state = threading.local()


def current_dtype():
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def compute_dtype(dtype):
    """Within the block, parameters read by ops are cast to ``dtype`` (None: keep their own)."""
    if not hasattr(_state, "stack"):
        _state.stack = []
    _state.stack.append(dtype)
    try:
        yield
    finally:
        _state.stack.pop()
