"""Injective kernels (element-wise ops, broadcasts, transposes, reshapes, padding, packing)."""
from __future__ import annotations

import math

from tvm import tirx
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
        if not schedule_transpose(sch, block, cpu):
            common.schedule_injective_block(sch, block, cpu)


def schedule_transpose(sch: Schedule, block, cpu: CpuInfo) -> bool:
    """Tile a transpose in SIMD-width squares; False (nothing changed) for any other block.

    A transpose written in output order walks its input with a stride: NHWC -> NCHW over
    (n, c, h, w) reads the whole input once per channel, from L3 (a 112x112x32 map took 0.9 ms
    on one core). In squares of ``lanes`` x ``lanes`` (input-contiguous axis outside, unrolled;
    output-contiguous axis inside, vectorized) each square's input rows are read once, from L1,
    and its output rows written whole: 0.65 -> 0.10 ms for that map. Only blocks whose loops are
    their iteration variables in order (as legalized) and whose two axes divide are touched.
    """
    stmt = sch.get(block)
    loops = sch.get_loops(block)
    if len(loops) < 2 or len(loops) != len(stmt.iter_vars) or not stmt.writes or common.touches_bool(sch, block):
        return False
    if any(common.extent(sch, loop) != int(iv.dom.extent) for loop, iv in zip(loops, stmt.iter_vars)):
        return False
    position = {iv.var: index for index, iv in enumerate(stmt.iter_vars)}
    last = len(loops) - 1
    written = stmt.writes[0].region[-1].min
    if not isinstance(written, tirx.Var) or position.get(written) != last:
        return False
    strided = [read for read in stmt.reads if len(read.region) >= 2 and isinstance(read.region[-1].min, tirx.Var)
               and position.get(read.region[-1].min) not in (None, last)]
    if not strided:
        return False
    inner = position[max(strided, key=lambda read: _elements(read.source)).region[-1].min]
    lanes = cpu.lanes(str(stmt.writes[0].source.dtype))
    if common.extent(sch, loops[inner]) % lanes or common.extent(sch, loops[last]) % lanes:
        return False
    read_outer, read_inner = sch.split(loops[inner], [None, lanes])
    write_outer, write_inner = sch.split(loops[last], [None, lanes])
    others = [loop for index, loop in enumerate(loops) if index not in (inner, last)]
    sch.reorder(*others, read_outer, write_outer, read_inner, write_inner)
    sch.unroll(read_inner)
    sch.vectorize(write_inner)
    # tasks over the outer axes where there are enough of them (no index arithmetic per square)
    rows = math.prod(common.extent(sch, loop) for loop in others)
    outer = others if rows >= 8 * cpu.cores else [*others, read_outer, write_outer]
    task = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    elements = math.prod(int(iv.dom.extent) for iv in stmt.iter_vars)
    common.parallel_if_worth(sch, task, elements, cpu, common.PARALLEL_MIN_ELEMENTS)
    return True


def _elements(buffer) -> int:
    return math.prod(int(dim) if isinstance(dim, tirx.IntImm) else 1 for dim in buffer.shape)
