"""Injective kernels (element-wise ops, broadcasts, transposes, reshapes, padding, packing)."""
from __future__ import annotations

from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo


def matches(sch: Schedule) -> bool:
    blocks = common.root_blocks(sch)
    return bool(blocks) and not any(common.is_reduction(sch, b) for b in blocks)


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """Inline every intermediate stage, then vectorize and parallelize what is left."""
    blocks = common.root_blocks(sch)
    for block in blocks[:-1]:
        try:
            sch.compute_inline(block)
        except Exception:
            pass
    for block in common.root_blocks(sch):
        common.schedule_injective_block(sch, block, cpu)
