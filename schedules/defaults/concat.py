"""Concatenations along the innermost axis: one branch-free, vectorized loop per operand.

A channels-last channel concatenation (MixNet's mixed depthwise convolutions, GhostNet's ghost
modules, DenseNet's dense blocks) and the element-wise ops fused after it (an unfolded batch
norm, an activation) are one injective kernel whose value picks its operand per element:
``if_then_else(24 <= c, b[..., c - 24], a[..., c])``. Vectorized as it is, TVM loads every lane
on its own (the loads of both branches may be out of bounds), and MixNet-S's concatenations took
1-6 ms each. Here the channel loop is cut at the operands' boundaries (``loop_partition``): in each
piece the simplifier knows the branch taken, and the piece is a plain vector loop. The pieces are
split in vectors of a width that divides every boundary (a power of two up to the target's
lanes), so that no vector straddles two operands.
"""
from __future__ import annotations

import math

import tvm
from tvm import tirx
from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo

_FLIPPED = {tirx.LT: tirx.GT, tirx.LE: tirx.GE, tirx.GT: tirx.LT, tirx.GE: tirx.LE}
_CHILD_FIELDS = ("a", "b", "value", "condition", "true_value", "false_value")


def _walk(expr, visit) -> None:
    """Call ``visit`` on ``expr`` and every sub-expression (calls, arithmetic, loads, selects)."""
    visit(expr)
    for field in _CHILD_FIELDS:
        child = getattr(expr, field, None)
        if isinstance(child, tvm.ir.Expr):
            _walk(child, visit)
    for child in list(getattr(expr, "args", None) or []) + list(getattr(expr, "indices", None) or []):
        if isinstance(child, tvm.ir.Expr):
            _walk(child, visit)


def _boundary(condition, var: tirx.Var) -> int | None:
    """Where ``condition`` (``var`` compared with a constant) changes value along ``var``, or None."""
    kind = type(condition)
    if kind not in _FLIPPED:
        return None
    a, b = condition.a, condition.b
    if isinstance(b, tirx.Var) and isinstance(a, tirx.IntImm):
        a, b, kind = b, a, _FLIPPED[kind]
    if not (isinstance(a, tirx.Var) and a.same_as(var) and isinstance(b, tirx.IntImm)):
        return None
    # var < c and var >= c change at c; var <= c and var > c at c + 1
    return int(b.value) + (1 if kind in (tirx.LE, tirx.GT) else 0)


def operand_boundaries(value, var: tirx.Var, extent: int) -> list[int]:
    """The offsets inside ``(0, extent)`` where ``value``'s ``if_then_else`` conditions on ``var`` switch."""
    found: set[int] = set()

    def visit(node) -> None:
        if isinstance(node, tvm.ir.Call) and getattr(node.op, "name", "").endswith(".if_then_else"):
            at = _boundary(node.args[0], var)
            if at is not None and 0 < at < extent:
                found.add(at)
        elif isinstance(node, tirx.Select):
            at = _boundary(node.condition, var)
            if at is not None and 0 < at < extent:
                found.add(at)

    _walk(value, visit)
    return sorted(found)


def _innermost_write(sch: Schedule, block):
    """(loops, last iteration variable) of a block whose loops are its iteration variables in
    order and whose write's innermost index is the last of them; None otherwise."""
    stmt = sch.get(block)
    loops = sch.get_loops(block)
    if not loops or len(loops) != len(stmt.iter_vars) or len(stmt.writes) != 1:
        return None
    if any(common.extent(sch, loop) != int(iv.dom.extent) for loop, iv in zip(loops, stmt.iter_vars)):
        return None
    last = stmt.iter_vars[-1].var
    written = stmt.writes[0].region[-1].min
    if not (isinstance(written, tirx.Var) and written.same_as(last)):
        return None
    return loops, last


def matches(sch: Schedule) -> bool:
    blocks = common.root_blocks(sch)
    return bool(blocks) and not any(common.is_reduction(sch, b) for b in blocks) and any(
        common.block_name(sch, b).startswith("T_concat") for b in blocks)


def _leaves(sch: Schedule, block) -> list:
    children = sch.get_child_blocks(block)
    return [block] if not children else [leaf for child in children for leaf in _leaves(sch, child)]


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """Inline everything into the output block, cut its innermost loop at the operands' boundaries,
    vectorize each piece and spread the outer loops over the cores."""
    for block in common.root_blocks(sch)[:-1]:
        try:
            sch.compute_inline(block)
        except Exception as err:  # noqa: BLE001 - a stage that cannot be inlined: not this rule's kernel
            raise common.NotScheduled(f"cannot inline {common.block_name(sch, block)}: {err}") from err
    blocks = common.root_blocks(sch)
    if len(blocks) != 1 or common.touches_bool(sch, blocks[0]):
        raise common.NotScheduled("not one output block over numbers")
    block = blocks[0]
    found = _innermost_write(sch, block)
    if found is None:
        raise common.NotScheduled("the output's innermost axis is not its last loop")
    loops, var = found
    extent = common.extent(sch, loops[-1])
    cuts = operand_boundaries(sch.get(block).body.value, var, extent)
    if not cuts:
        raise common.NotScheduled("no concatenation along the innermost axis")
    lanes = cpu.lanes(str(sch.get(block).writes[0].source.dtype))
    step = math.gcd(extent, *cuts)
    step = min(lanes, step & -step)  # a power of two dividing every boundary
    total = math.prod(common.extent(sch, loop) for loop in loops)
    outer = sch.fuse(*loops[:-1]) if len(loops) > 2 else (loops[0] if len(loops) == 2 else None)
    inner = loops[-1]
    if step > 1:
        inner, _ = sch.split(inner, [None, step])
    widths = [(b - a) // step for a, b in zip([0, *cuts], cuts)]
    sch.loop_partition(inner, [*widths, None])
    if step > 1:
        for leaf in _leaves(sch, sch.get_sblock("root")):
            sch.vectorize(sch.get_loops(leaf)[-1])
    if outer is not None:
        common.parallel_if_worth(sch, outer, total, cpu, common.PARALLEL_MIN_ELEMENTS)
