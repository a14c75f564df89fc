"""``aotnn.jit``: compiling Cells into kernels and calling them.

The package is also callable as MindSpore 2.x's ``mindspore.jit`` decorator (``from mindspore import jit``
resolves to this package): ``@jit`` and ``@jit(...)`` return the function unchanged. A Cell's ``construct``
and what it calls are compiled anyway when the Cell is called; outside a Cell the function runs op by op.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable


def jit(function: Callable | None = None, *args: Any, **options: Any) -> Any:
    """MindSpore's ``jit`` decorator: returns ``function`` (or, called with options only, a decorator that does).

    Raises:
        TypeError: ``function`` is given and not callable.
    """
    if function is None:
        return lambda fn: jit(fn)
    if not callable(function):
        raise TypeError(f"jit: expected a function to decorate, got {type(function).__name__}")
    return function


class _CallableModule(types.ModuleType):
    def __call__(self, function: Callable | None = None, *args: Any, **options: Any) -> Any:
        return jit(function, *args, **options)


sys.modules[__name__].__class__ = _CallableModule
