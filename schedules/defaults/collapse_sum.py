"""Per-channel gradient sums (``relax.collapse_sum_to`` of a channels-last map to ``(1, C, 1, 1)``).

A broadcast per-channel operand (batch-norm scale and shift, a bias added to a map) gets its
gradient as ``collapse_sum_to(dy, (1, C, 1, 1))``. Legalized as it stands, that is an NCHW
reduction over the outer and inner axes at once: no default rule takes it (the generic fallback
ran ResNet-18's 8x64x112x112 ones in 8 ms each) and its NCHW operand costs a transpose of the
channels-last map. Here it becomes two sums of the map's twin: over W for each (n, h) row (rows in
parallel, channels vectorized: the reduction rule), then over the rows (a small ``rows x C`` sum).
"""
from __future__ import annotations

from tvm import relax

from .layout import Rewriter, dtype_of, static_shape

COLLAPSE_SUM = "relax.collapse_sum_to"


def _per_channel(source: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether ``target`` keeps only the channel axis of the 4-D NCHW ``source``."""
    padded = (1,) * (4 - len(target)) + tuple(target)
    return len(target) <= 4 and padded == (1, source[1], 1, 1)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``collapse_sum_to(x, (1, C, 1, 1))`` of a channels-last ``x`` -> two channels-last sums."""
    if call.op.name != COLLAPSE_SUM:
        return False
    x = call.args[0]
    source, target = static_shape(x), static_shape(var)
    if (source is None or target is None or len(source) != 4 or not rw.has_twin(x)
            or not _per_channel(source, target) or not dtype_of(x).startswith("float")):
        return False
    n, c, h, w = source
    bb = rw.bb
    rows = bb.emit(relax.op.reshape(rw.nhwc(x), (n * h, w, c)))
    per_row = bb.emit(relax.op.sum(rows, axis=[1]))
    total = bb.emit(relax.op.sum(per_row, axis=[0]))
    rw.set_nchw(var, bb.emit(relax.op.reshape(total, target)))
    return True
