"""The last resort for kernels no op-class rule knows (3-D and transposed convolutions, unusual
reductions): each loop nest keeps its order, its outer spatial loops are spread over the cores and
element-wise loop nests are vectorized. Correctness is TVM's: only loop kinds change."""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo


def matches(sch: Schedule) -> bool:
    return bool(common.root_blocks(sch))


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    changed = False
    for block in common.root_blocks(sch):
        stmt = sch.get(block)
        loops = sch.get_loops(block)
        kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
        if len(loops) != len(kinds) or not loops:
            continue
        if all(kind == tirx.IterVar.DataPar for kind in kinds):
            common.schedule_injective_block(sch, block, cpu)
            changed = True
            continue
        leading = []
        for loop, kind in zip(loops, kinds):
            if kind != tirx.IterVar.DataPar:
                break
            leading.append(loop)
        if not leading or cpu.cores < 2 or common.block_work(sch, block) < common.PARALLEL_MIN_MACS:
            continue
        task = sch.fuse(*leading) if len(leading) > 1 else leading[0]
        common.parallel_if_worth(sch, task, common.block_work(sch, block), cpu)
        changed = True
    if not changed:
        raise common.NotScheduled("nothing to parallelize or vectorize")
