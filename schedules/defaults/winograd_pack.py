"""The Winograd weight transform (``winograd.pack_weight``) with its 16 transform positions together.

Packed weights ``[16 * OC / oc_block, 1, 1, IC, oc_block]`` hold the 16 positions of ``U = G w G^T``
as 16 blocks of output channels. Scheduled as any element-wise kernel, every position re-reads its
3x3 weights: the weight (9 MB for 512 x 512 channels) streams from memory 16 times, through
strided loads, and in a training step, where the transform runs every step (once for the
forward product, once for the flipped weights of the input gradient), ResNet-18's 512-channel
transforms cost about as much as their products. Here each task takes one block of output
channels and, per input channel, computes all 16 positions from the same 9 weight values
(the position loop unrolled, so its coefficients are constants).
"""
from __future__ import annotations

from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo

PACK = "aotnn_pack_wino_weight"
POSITIONS = 16


def matches(sch: Schedule) -> bool:
    return common.find_block(sch, PACK) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = common.find_block(sch, PACK)
    common.inline_producers(sch, block)  # the flipped, swapped weights of an input gradient
    if len(common.root_blocks(sch)) != 1:
        raise common.NotScheduled("the weight transform holds other computations")
    loops = sch.get_loops(block)
    if len(loops) != 5:
        raise common.NotScheduled("not a packed [blocks, 1, 1, IC, oc_block] weight")
    blocks, unit_h, unit_w, channels, lanes_loop = loops
    count = common.extent(sch, blocks)
    if count is None or count % POSITIONS:
        raise common.NotScheduled("block count not a multiple of the 16 transform positions")
    position, o_block = sch.split(blocks, [POSITIONS, None])
    sch.reorder(o_block, unit_h, unit_w, channels, position, lanes_loop)
    sch.unroll(position)
    common.vectorize_inner(sch, block, lanes_loop, 4 * cpu.lanes(str(sch.get(block).writes[0].source.dtype)))
    task = sch.fuse(o_block, unit_h, unit_w)
    work = count * (common.extent(sch, channels) or 1) * (common.extent(sch, lanes_loop) or 1)
    common.parallel_if_worth(sch, task, work, cpu, common.PARALLEL_MIN_ELEMENTS)
