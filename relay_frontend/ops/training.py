"""Lowering rules used by training wrappers (overflow checks)."""
from __future__ import annotations

from tvm import relax

from .common import emit
from .registry import rule


@rule("any_non_finite")
def any_non_finite(*tensors):
    """True (a bool scalar) if any element of any tensor is inf or nan."""
    flags = [emit(relax.op.max(relax.op.astype(relax.op.logical_not(relax.op.isfinite(t)), "int32")))
             for t in tensors]
    total = flags[0]
    for flag in flags[1:]:
        total = emit(relax.op.maximum(total, flag))
    return relax.op.greater(total, relax.const(0, "int32"))
