"""Reductions along the contiguous axis: ``sum(a * b, axis=-1)``, a weighted variance
``sum(w * (x - mean)^2, axis=-1)``, any element-wise body of several inputs.

The ``reduction`` rule vectorizes over a spatial axis, which needs the innermost index of every
access to be spatial; here the innermost index is the reduction's. The element-wise producers are
inlined into the reduction, the contiguous reduction loop is split into ``vector`` lanes and
``rfactor``-ed: each output row accumulates ``vector`` partial sums (independent vector
accumulators, contiguous loads) and adds them up at the end. Rows run in parallel.
(ECAPA-TDNN's attentive statistics pooling, 1x1536x200, went to the generic fallback before.)
"""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo


def _contiguous_reduce_var(stmt) -> tirx.Var | None:
    """The innermost reduction variable when it is the innermost index of the reads that use it (and of
    at least one) and of no write, or None."""
    reduce_vars = [iv.var for iv in stmt.iter_vars if int(iv.iter_type) == tirx.IterVar.CommReduce]
    if not reduce_vars or any(int(iv.iter_type) not in (tirx.IterVar.DataPar, tirx.IterVar.CommReduce)
                              for iv in stmt.iter_vars):
        return None
    if any(len(region.region) and common.uses_var(region.region[-1].min, r)
           for region in stmt.writes for r in reduce_vars):
        return None
    var = reduce_vars[-1]
    lasts = [region.region[-1] for region in stmt.reads if len(region.region)]
    # element-wise along it: every read that walks the axis is indexed by exactly it (a window,
    # ``x[w + rw]`` of a convolution, is not)
    if any(common.uses_var(last.min, var) and not (last.min.same_as(var) and _is_one(last.extent)) for last in lasts):
        return None
    return var if any(last.min.same_as(var) for last in lasts) else None


def _is_one(extent) -> bool:
    return isinstance(extent, tirx.IntImm) and extent.value == 1


def vector_factor(size: int, lanes: int) -> int:
    """Partial sums per row: a multiple of the vector width that divides ``size`` (up to four
    registers, for independent accumulators), else the largest divisor up to four registers that is
    a multiple of 8 or 4, else any divisor up to that, else 1."""
    for factor in (4 * lanes, 2 * lanes, lanes):
        if size % factor == 0:
            return factor
    limit = min(size, 4 * lanes)
    for step in (8, 4, 1):
        factor = next((f for f in range(limit - limit % step, 0, -step) if size % f == 0), None)
        if factor is not None and factor > 1:
            return factor
    return 1


def _lanes_last(sch: Schedule, partial) -> None:
    """Make the partial sums' lane axis (the last index of what they write) their last block axis,
    so that the loops ``compute_at`` regenerates for them end with it."""
    stmt = sch.get(partial)
    lane = stmt.writes[0].region[-1].min
    order = [i for i, iv in enumerate(stmt.iter_vars) if not iv.var.same_as(lane)]
    if len(order) == len(stmt.iter_vars):
        raise common.NotScheduled("the partial sums have no lane axis")
    lane_index = next(i for i, iv in enumerate(stmt.iter_vars) if iv.var.same_as(lane))
    if lane_index != len(stmt.iter_vars) - 1:
        sch.reorder_block_iter_var(partial, [*order, lane_index])


def matches(sch: Schedule) -> bool:
    block = common.single_reduction_block(sch)
    return block is not None and _contiguous_reduce_var(sch.get(block)) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = common.single_reduction_block(sch)
    work = common.block_work(sch, block)
    common.inline_producers(sch, block)
    stmt = sch.get(block)
    var = _contiguous_reduce_var(stmt)
    if var is None:
        raise common.NotScheduled("no reduction along the contiguous axis")
    kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
    loops = sch.get_loops(block)
    if len(loops) != len(kinds):
        raise common.NotScheduled("loops do not match the block's axes")
    inner = next(loop for loop, iv in zip(loops, stmt.iter_vars) if iv.var.same_as(var))
    spatial = [loop for loop, kind in zip(loops, kinds) if kind == tirx.IterVar.DataPar]
    others = [loop for loop, kind in zip(loops, kinds) if kind == tirx.IterVar.CommReduce and not loop.same_as(inner)]
    sch.reorder(*spatial, *others, inner)
    dtype = str(stmt.writes[0].source.dtype)
    size = common.extent(sch, inner)
    if size is None:
        raise common.NotScheduled("the contiguous reduction has no static extent")
    vector = vector_factor(size, cpu.lanes(dtype))
    if vector <= 1 or common.touches_bool(sch, block):
        raise common.NotScheduled("the contiguous reduction has no vector factor")
    _, lanes_loop = sch.split(inner, [None, vector])
    for consumer in sch.get_consumers(block):
        # rfactor breaks on a loopless block beside the reduction (a scalar mean's divide)
        if not sch.get_loops(consumer):
            sch.add_unit_loop(consumer)
    partial = sch.rfactor(lanes_loop, factor_axis=len(spatial))
    common.accumulate_in_registers(sch, partial)
    _lanes_last(sch, partial)
    # the final sums over the partial sums: rows fused and spread over the cores, the partial sums
    # of each row computed under it
    final_loops = sch.get_loops(block)
    rows = final_loops[:len(spatial)]
    if rows:
        row = sch.fuse(*rows) if len(rows) > 1 else rows[0]
        sch.compute_at(partial, row)
        common.parallel_if_worth(sch, row, work, cpu, common.PARALLEL_MIN_ELEMENTS * 4)
    partial_loops = sch.get_loops(partial)
    sch.vectorize(partial_loops[-1])
    # the first reduction loop: the rows' loops, others..., the outer lanes loop, the lanes
    sch.decompose_reduction(partial, partial_loops[-2 - len(others)])
    sch.decompose_reduction(block, sch.get_loops(block)[-1])  # no first-lane test in the final sum
    for consumer in sch.get_consumers(block):
        try:
            common.schedule_injective_block(sch, consumer, cpu)
        except Exception:  # noqa: BLE001 - a consumer left as it is stays correct
            pass
