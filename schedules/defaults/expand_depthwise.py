"""A 1x1 expansion over a small map merged with the depthwise convolution that alone reads it.

On small maps (MobileNetV2's 7x7 and 14x14 stages) a 1x1 convolution is tiled flat and gives each
task one block of output channels over every pixel (``conv2d.py``). A depthwise convolution needs
only the same channels of its input, so the task can run it at once on the block it has just
computed (a few KB, still in L1) instead of a second kernel reading the whole expansion back,
with the other core's half of it in the other core's cache. ``block_fusion.merge_expand_depthwise``
merges the two groups; here the expansion is tiled as ``conv2d.py`` tiles it (and prefetches its
next weight block the same way), the depthwise convolution gets one task loop over the same
channel blocks, and the two task loops become one (TVM's ``reverse_compute_at`` cannot place the
depthwise under the expansion's loop: it does not solve the padded read ``i + kh - 1``). On
MobileNetV2 the four pairs went from 580 to 500 us, the model from 5174 to 5091 us (alternating).
"""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule

from . import common, weight_prefetch
from .conv2d import CLAMP, CONV, DEPTHWISE, DW_OUT, OUT, PAD, UNFLAT, tile
from .cpu import CpuInfo
from .dw_pointwise import fold_epilogue, tile_depthwise_row, tile_row
from .tir_rewrite import replace_first, with_loop_body


def matches(sch: Schedule) -> bool:
    """One flat 1x1 convolution, then (after its write-back) a depthwise convolution."""
    names = [common.block_name(sch, block) for block in common.root_blocks(sch)]
    convs = common.named_blocks(sch, CONV)
    return (len(convs) == 1 and DEPTHWISE in names and UNFLAT in names
            and names.index(common.block_name(sch, convs[0])) < names.index(UNFLAT) < names.index(DEPTHWISE))


def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule | None:
    """Schedule the merged kernel: per task one block of expanded channels, then its depthwise.

    Returns a new schedule where the expansion gained weight prefetches (see ``weight_prefetch``),
    else None (``sch`` holds the result)."""
    conv, out = common.find_block(sch, CONV), common.find_block(sch, OUT)
    dw, dw_out = common.find_block(sch, DEPTHWISE), common.find_block(sch, DW_OUT)
    if conv is None or out is None or dw is None or dw_out is None:
        raise common.NotScheduled("expansion/depthwise kernel without its stages")
    for clamp in common.named_blocks(sch, CLAMP):
        sch.compute_inline(clamp)
    # the expansion's epilogue (back to rows, clamps) into its write-back; the depthwise reads it in place
    fold_epilogue(sch, out, stop=(PAD, DEPTHWISE))
    pad = common.find_block(sch, PAD)
    if pad is not None:
        sch.compute_inline(pad)
    fold_epilogue(sch, dw_out)
    dtype = str(sch.get(conv).writes[0].source.dtype)
    lanes = cpu.lanes(dtype)
    work = common.block_work(sch, conv) + common.block_work(sch, dw)
    weight = [r.source for r in sch.get(conv).reads if len(r.source.shape) == 5]

    # the expansion: flat register tiles, one task per block of output channels
    loops = sch.get_loops(conv)
    (b, i, j, o), reduction = loops[:4], loops[4:]
    if common.extent(sch, i) != 1:
        raise common.NotScheduled("the expansion is not tiled flat")
    oc_block = tile(sch.get(conv), "oc")
    tile_row(sch, conv, out, j, o, reduction, tile(sch.get(conv), "ow"), lanes, cpu.fma_by_lane)
    o_outer, walk = sch.get_loops(conv)[2:4]
    task = sch.fuse(b, i, o_outer)

    # the depthwise convolution: one task per image and block of the same channels, over every row
    db, di, dj, dc, *dtaps = sch.get_loops(dw)
    d_blocks, d_channels = sch.split(dc, [None, oc_block])
    sch.reorder(db, d_blocks, di, dj, d_channels, *dtaps)
    d_task = sch.fuse(db, d_blocks)  # the expansion's task order: image, then channel block
    taps = tile_depthwise_row(sch, dw, dw_out, lanes)

    if common.extent(sch, task) != common.extent(sch, d_task):
        raise common.NotScheduled("the expansion and the depthwise have different channel blocks")
    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(conv, reduction[0])
    sch.decompose_reduction(dw, taps[0])
    func = sch.mod["main"]
    if weight and common.extent(sch, task) == int(weight[0].shape[0]):
        func = weight_prefetch.prefetch_next_block(func, weight[0], sch.get(task).loop_var,
                                                   sch.get(walk).loop_var, common.extent(sch, walk))
    # one parallel loop: task t expands channel block t, then convolves it
    fused = fuse_task_loops(func, sch.get(task).loop_var, sch.get(d_task).loop_var)
    if fused is None:
        raise common.NotScheduled("the two task loops are not siblings")
    return Schedule(fused)


def fuse_task_loops(func: tirx.PrimFunc, first: tirx.Var, second: tirx.Var) -> tirx.PrimFunc | None:
    """``func`` with the loop over ``second`` folded into the loop over ``first`` (same extent,
    ``first``'s kind): iteration ``t`` runs ``first``'s body, then ``second``'s for ``t``. The two
    loops must be consecutive statements of one sequence; None where they are not."""
    def change(node):
        if not isinstance(node, tirx.SeqStmt):
            return None
        parts = list(node.seq)
        for index in range(len(parts) - 1):
            a, b = parts[index], parts[index + 1]
            if (isinstance(a, tirx.For) and a.loop_var.same_as(first) and isinstance(b, tirx.For)
                    and b.loop_var.same_as(second)):
                if not (isinstance(a.extent, tirx.IntImm) and isinstance(b.extent, tirx.IntImm)
                        and int(a.extent) == int(b.extent) and int(a.min) == int(b.min) == 0):
                    return None
                body = tirx.SeqStmt([a.body, tirx.LetStmt(second, a.loop_var), b.body])
                merged = with_loop_body(a, body)
                rest = parts[:index] + [merged] + parts[index + 2:]
                return rest[0] if len(rest) == 1 else tirx.SeqStmt(rest)
        return None
    body = replace_first(func.body, change)
    return None if body is None else func.with_body(body)
