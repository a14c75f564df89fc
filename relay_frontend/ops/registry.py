"""The table of lowering rules: one function per op, turning Relax inputs into a Relax expression."""
from __future__ import annotations

from collections.abc import Callable

from ..errors import UnsupportedOpError

RULES: dict[str, Callable] = {}


def rule(name: str) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the lowering rule of op ``name``."""
    def register(fn: Callable) -> Callable:
        if name in RULES:
            raise ValueError(f"op {name!r} already has a lowering rule")
        RULES[name] = fn
        return fn
    return register


def lookup(name: str) -> Callable:
    """The lowering rule of ``name``; raises UnsupportedOpError naming the op if there is none."""
    try:
        return RULES[name]
    except KeyError:
        raise UnsupportedOpError(f"op {name!r} has no lowering rule") from None
