"""Reductions: pooling and channel-preserving means (vectorized over the contiguous spatial axis),
and row-wise reductions such as softmax and layer norm (one task per row, DLight's CPU rule).
"""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule
from tvm.s_tir.dlight.cpu import Reduction as _RowReduction

from . import common
from .cpu import CpuInfo


def _vector_axis_reduction(sch: Schedule):
    """The one reduction block whose innermost spatial axis is every access's contiguous index."""
    block = common.single_reduction_block(sch)
    if block is None:
        return None
    stmt = sch.get(block)
    spatial = [iv.var for iv in stmt.iter_vars if int(iv.iter_type) == tirx.IterVar.DataPar]
    reduce_vars = [iv.var for iv in stmt.iter_vars if int(iv.iter_type) == tirx.IterVar.CommReduce]
    if not spatial or not reduce_vars:
        return None
    inner = spatial[-1]
    for region in list(stmt.reads) + list(stmt.writes):
        last = region.region[-1].min
        if not common.uses_var(last, inner) or any(common.uses_var(last, r) for r in reduce_vars):
            return None
    return block


def matches(sch: Schedule) -> bool:
    blocks = common.root_blocks(sch)
    return any(common.is_reduction(sch, b) for b in blocks)


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = _vector_axis_reduction(sch)
    if block is None:
        raise common.NotScheduled("not a reduction over outer axes")
    work = common.block_work(sch, block)
    common.inline_producers(sch, block)
    stmt = sch.get(block)
    dtype = str(stmt.writes[0].source.dtype)
    kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
    loops = sch.get_loops(block)
    if len(loops) != len(kinds):
        raise common.NotScheduled("loops do not match the block's axes")
    spatial = [loop for loop, kind in zip(loops, kinds) if kind == tirx.IterVar.DataPar]
    reduction = [loop for loop, kind in zip(loops, kinds) if kind == tirx.IterVar.CommReduce]
    inner = spatial[-1]
    sch.reorder(*spatial[:-1], *reduction, inner)
    lanes = cpu.lanes(dtype)
    size = common.extent(sch, inner) or 1
    vector = next((f for f in (4 * lanes, 2 * lanes, lanes) if size % f == 0), None)
    if vector is None:
        vector = next((f for f in range(min(size, 4 * lanes), 0, -1) if size % f == 0), 1)
    if vector < size:
        outer, vec = sch.split(inner, [None, vector])
        sch.reorder(outer, *reduction)
    else:
        outer, vec = None, inner
    if vector > 1:
        sch.vectorize(vec)
    rows = spatial[:-1] + ([outer] if outer is not None else [])
    if rows:
        task = sch.fuse(*rows) if len(rows) > 1 else rows[0]
        common.parallel_if_worth(sch, task, work, cpu, common.PARALLEL_MIN_ELEMENTS * 4)
    for consumer in sch.get_consumers(block):
        try:
            common.schedule_injective_block(sch, consumer, cpu)
        except Exception:  # noqa: BLE001 - a consumer left as it is stays correct
            pass
    sch.decompose_reduction(block, reduction[0])


class RowReduction:
    """Softmax, layer norm and friends: DLight's CPU reduction rule (rows in parallel, vector epilogues)."""

    __name__ = "rows"

    @staticmethod
    def matches(sch: Schedule) -> bool:
        return matches(sch)

    @staticmethod
    def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule:
        import tvm
        target = tvm.target.Target({"kind": "llvm", "num-cores": cpu.cores})
        result = _RowReduction().apply(sch.mod["main"], target, False)
        if result is None:
            raise common.NotScheduled("not a row-wise reduction")
        return result


rows = RowReduction()
