"""The interleave of a strided convolution's input-gradient phases, channels-last.

``relay_frontend/gradients.py`` computes the input gradient of a stride-(sh, sw) convolution as one
stride-1 convolution per output phase and joins the phases (N, C, U, V) as
``reshape(stack([stack(row, axis=4) for row], axis=3), (N, C, U*sh, V*sw))``: phase (p, q) lands at
(sh*u + p, sw*v + q). Legalized as it stands that is an NCHW copy of the phases' channels-last
twins (strided reads of every input). Here it becomes one channels-last kernel whose output pixel
(h, w) copies the channel vector of phase (h % sh, w % sw) at (h // sh, w // sw).
"""
from __future__ import annotations

import tvm
from tvm import relax, te, tirx

from .layout import Rewriter, dtype_of, static_shape

INTERLEAVE = "aotnn_phase_interleave"


def _call(rw: Rewriter, expr, op_name: str) -> relax.Call | None:
    value = rw.value_of(expr) if isinstance(expr, relax.Var) else expr
    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == op_name:
        return value
    return None


def _fields(rw: Rewriter, stack: relax.Call) -> list | None:
    fields = stack.args[0]
    fields = rw.value_of(fields) if isinstance(fields, relax.Var) else fields
    return list(fields.fields) if isinstance(fields, relax.Tuple) else None


def match_phases(rw: Rewriter, var: relax.Var, call: relax.Call) -> list[list[relax.Expr]] | None:
    """The phase grid ``phases[p][q]`` (each (N, C, U, V)) that ``var = call`` interleaves, or None."""
    if call.op.name != "relax.reshape":
        return None
    out = static_shape(var)
    outer = _call(rw, call.args[0], "relax.stack")
    if out is None or len(out) != 4 or outer is None or int(outer.attrs.axis) != 3:
        return None
    rows = _fields(rw, outer)
    if rows is None:
        return None
    grid = []
    for row in rows:
        inner = _call(rw, row, "relax.stack")
        if inner is not None and int(inner.attrs.axis) == 4:
            fields = _fields(rw, inner)
            if fields is None:
                return None
            grid.append(fields)
        else:
            grid.append([row])
    shapes = {static_shape(f) for row in grid for f in row}
    if len(shapes) != 1 or len({len(row) for row in grid}) != 1:
        return None
    n, c, u, v = next(iter(shapes)) or (None,) * 4
    sh, sw = len(grid), len(grid[0])
    if (n, c, u * sh, v * sw) != tuple(out) or any(dtype_of(f) != dtype_of(var) for row in grid for f in row):
        return None
    return grid


def interleave_nhwc(*phases: te.Tensor, sw: int) -> te.Tensor:
    """Channels-last phases (row-major over (p, q)) -> the interleaved (N, U*sh, V*sw, C) map."""
    sh = len(phases) // sw
    n, u, v, c = (int(d) for d in phases[0].shape)

    def pixel(b, h, w, ch):
        p, q, hu, wv = h % sh, w % sw, h // sh, w // sw
        value = phases[-1][b, hu, wv, ch]
        for index in range(len(phases) - 2, -1, -1):
            value = tirx.Select(tirx.all(p == index // sw, q == index % sw), phases[index][b, hu, wv, ch], value)
        return value

    return te.compute((n, u * sh, v * sw, c), pixel, name=INTERLEAVE)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """The phase interleave ending in ``var = call`` -> one channels-last copy."""
    grid = match_phases(rw, var, call)
    if grid is None or not any(rw.has_twin(f) for row in grid for f in row):
        return False
    phases = [rw.nhwc(f) for row in grid for f in row]
    rw.set_nhwc(var, rw.bb.emit_te(interleave_nhwc, *phases, sw=len(grid[0]), primfunc_name_hint=INTERLEAVE))
    return True
