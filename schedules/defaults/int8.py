"""Integer products (``int8_conv2d`` / ``int8_dense``): 8-bit operands, int32 accumulators.

Without VNNI there is no int8 dot-product instruction; LLVM widens 8-bit lanes and multiplies in
int32 (``vpmulld``/``vpmaddwd``) when the innermost loop is a spatial one over contiguous outputs.
So: producers (padding, casts) are inlined, the spatial loops stay outside the reduction, the
innermost output axis (output width, or output features of a dense) becomes the vector loop under
the reduction loops, and the outer spatial loops are spread over the cores.

On a microcontroller (``small_memory``) the requantization epilogue runs under the accumulator's
outer spatial loops, one vector tile at a time: the int32 accumulators then live in a tile-sized
buffer instead of a whole int32 map in scratch memory (4x the 8-bit output: DS-CNN's 32 KB).
"""
from __future__ import annotations

from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo

_NARROW = ("int8", "uint8")


def _int8_reduction(sch: Schedule):
    block = common.single_reduction_block(sch)
    if block is None:
        return None
    stmt = sch.get(block)
    if str(stmt.writes[0].source.dtype) != "int32":
        return None
    narrow = {str(region.source.dtype) for region in stmt.reads} & set(_NARROW)
    if not narrow:  # reads may be casts of narrow buffers: look one producer up
        for producer in sch.get_producers(block):
            narrow |= {str(r.source.dtype) for r in sch.get(producer).reads} & set(_NARROW)
    return block if narrow else None


def matches(sch: Schedule) -> bool:
    return _int8_reduction(sch) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = _int8_reduction(sch)
    common.inline_producers(sch, block)
    # a fused requantization epilogue: one element-wise block after the product, vectorized on its own
    common.inline_consumers(sch, block)
    epilogue = [b for b in sch.get_consumers(block) if not common.is_reduction(sch, b)]
    stmt = sch.get(block)
    kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
    loops = sch.get_loops(block)
    if len(loops) != len(kinds):
        raise common.NotScheduled("loop nest does not match the block")
    spatial = [loop for loop, kind in zip(loops, kinds) if kind == 0]
    reduce = [loop for loop, kind in zip(loops, kinds) if kind != 0]
    if not spatial or not reduce:
        raise common.NotScheduled("not a spatial x reduction nest")
    inner = spatial[-1]
    width = common.extent(sch, inner)
    if width is None or width < 2:
        raise common.NotScheduled("no static vector axis")
    # microcontrollers (one int32 lane): a tile of up to 8 output columns in scalar registers (a tile of
    # two channels x 5 columns spills: DS-CNN 9.4 M -> 11.1 M instructions)
    lanes = max(cpu.lanes("int32"), 4) if cpu.small_memory else cpu.lanes("int32")
    if width > 2 * lanes:
        inner_outer, inner = sch.split(inner, factors=[None, lanes])
        spatial = spatial[:-1] + [inner_outer]
    else:
        spatial = spatial[:-1]
    sch.reorder(*spatial, *reduce, inner)
    # TVM refuses ``vectorize`` on a loop under reduction loops; unrolled, LLVM's SLP pass packs it
    sch.unroll(inner)
    if spatial and cpu.cores > 1 and common.block_work(sch, block) >= common.PARALLEL_MIN_MACS:
        task = sch.fuse(*spatial[:2]) if len(spatial) > 1 else spatial[0]
        common.parallel_if_worth(sch, task, common.block_work(sch, block), cpu)
    if cpu.small_memory and spatial:
        _epilogue_per_tile(sch, block, spatial[-1])
        return
    for consumer in epilogue:
        common.schedule_injective_block(sch, consumer, cpu)


def _epilogue_per_tile(sch: Schedule, block, tile_loop) -> None:
    """Compute every block after the accumulator under ``tile_loop`` (in their order, each one's
    producer first), so that no whole int32 map is materialized; a block that refuses (a reshape
    reading another tile's elements) stays a whole-map stage after the loop nest."""
    blocks = sch.get_child_blocks(sch.get_sblock("root"))
    names = [sch.get(b).name_hint for b in blocks]
    start = names.index(sch.get(block).name_hint) + 1
    for name in names[start:]:
        try:
            sch.reverse_compute_at(sch.get_sblock(name), tile_loop)
        except Exception:  # noqa: BLE001 - tvm raises ScheduleError subclasses
            return
