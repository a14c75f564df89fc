"""Which rule scheduled each kernel, and a warning for those left on the generic fallback.

A kernel that no op-class rule covers runs under ``fallback`` (loops kept in order, only
parallelized and vectorized) or unscheduled: correct, but up to two orders of magnitude slower
than a kernel an op-class rule tiles (EfficientNet-B0's squeeze-and-excitation kernels took
848 ms against onnxruntime's 7 ms for the whole network). The build names every such kernel.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping

from tvm import tirx

__all__ = ["GENERIC_RULES", "is_generic", "shape_summary", "fallback_kernels", "warn_fallbacks", "fallback_line"]

_LOG = logging.getLogger("schedules.defaults")

GENERIC_RULES = ("fallback", None)
# DLight's row-reduction rule (``reduction.rows``) takes any kernel with a reduction, convolutions
# whose own rules failed included (EfficientNet-B0's Swish expansion/depthwise pairs): for a
# product kernel it is as generic as the fallback
PRODUCT_MARKERS = ("conv2d", "dense", "matmul")
ROW_RULES = ("rows",)


def is_generic(rule: str | None, kernel: str = "") -> bool:
    """Whether ``rule`` (a rule name, or None for an unscheduled kernel) is the generic last resort
    for the kernel called ``kernel`` (the row-reduction rule counts as one for products)."""
    if rule in GENERIC_RULES:
        return True
    return rule in ROW_RULES and any(marker in kernel for marker in PRODUCT_MARKERS)


def shape_summary(func: tirx.PrimFunc) -> str:
    """``in0 x in1 -> out`` shapes of a kernel's buffers (its last buffer is its output), e.g.
    ``1x32x112x112, 32x1x3x3 -> 1x32x112x112``."""
    shapes = []
    for param in func.params:
        if not isinstance(param.ty, tirx.BufferType):  # buffer parameters are typed Vars
            continue
        shapes.append("x".join(str(int(d)) if isinstance(d, tirx.IntImm) else str(d) for d in param.shape) or "scalar")
    if not shapes:
        return "()"
    return f"{', '.join(shapes[:-1])} -> {shapes[-1]}" if len(shapes) > 1 else f"-> {shapes[0]}"


def fallback_kernels(rules: Mapping[str, str | None]) -> list[str]:
    """The kernels of ``rules`` (kernel name -> rule name) on the generic fallback, in order."""
    return [name for name, rule in rules.items() if is_generic(rule, name)]


def fallback_line(rules: Mapping[str, str | None], limit: int = 8) -> str | None:
    """``"3 of 41 kernels on the generic fallback: a, b, c"``, or None when every kernel is covered."""
    names = fallback_kernels(rules)
    if not names:
        return None
    shown = ", ".join(names[:limit]) + (f", ... ({len(names) - limit} more)" if len(names) > limit else "")
    return f"{len(names)} of {len(rules)} kernels on the generic fallback: {shown}"


def warn_fallbacks(rules: Mapping[str, str | None], funcs: Mapping[str, tirx.PrimFunc]) -> None:
    """Log one warning naming every kernel of ``rules`` on the generic fallback with its shapes."""
    names = fallback_kernels(rules)
    if not names:
        return
    details = "; ".join(f"{name} [{rules[name] or 'unscheduled'}] ({shape_summary(funcs[name])})"
                        if name in funcs else name for name in names)
    _LOG.warning("%d of %d kernels on the generic fallback (correct, possibly much slower): %s",
                 len(names), len(rules), details)
