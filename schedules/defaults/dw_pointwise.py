"""A depthwise convolution merged with the 1x1 convolution that consumes it (``block_fusion.py``).

One task per output row: the task first computes that row of the depthwise result, all its
channels, into a buffer private to the task (a few tens of KB: it stays in L1/L2), then runs the
1x1 convolution's register tiles over it, exactly as the plain convolution schedule does
(``conv2d.py``). Both keep their tile plans (the ``aotnn_tile_*`` annotations of their computes).
"""
from __future__ import annotations

from tvm.s_tir import Schedule

from . import common, lane_fma
from .conv2d import CLAMP, CONV, DEPTHWISE, DW_OUT, OUT, PAD, tile, vectorize_channels
from .cpu import CpuInfo


def matches(sch: Schedule) -> bool:
    return common.find_block(sch, DEPTHWISE) is not None and common.find_block(sch, CONV) is not None


def fold_epilogue(sch: Schedule, block, stop: tuple[str, ...] = (CLAMP, CONV)) -> None:
    """Fold the element-wise chain after ``block`` into it, up to a block named in ``stop``
    (by default the 1x1 convolution's input).

    An epilogue that reads the result twice (Swish/SiLU ``x * sigmoid(x)``, HSwish
    ``x * relu6(x + 3) / 6``) is a small DAG: its inner nodes are first inlined forward into the
    node that joins them, which leaves a chain."""
    collapse_epilogue(sch, block, stop)
    while True:
        consumers = sch.get_consumers(block)
        if len(consumers) != 1 or common.block_name(sch, consumers[0]).rstrip("0123456789") in stop:
            return
        sch.reverse_compute_inline(consumers[0])


def _stops(sch: Schedule, block, stop: tuple[str, ...]) -> bool:
    return common.block_name(sch, block).rstrip("0123456789") in stop


def collapse_epilogue(sch: Schedule, block, stop: tuple[str, ...]) -> None:
    """Inline forward every element-wise block after ``block`` (up to ``stop``) with a single
    consumer that is itself past ``block``'s epilogue: the DAG ``x -> (negate -> exp -> sigmoid,
    x) -> multiply`` becomes one block ``multiply`` reading ``x`` twice."""
    outputs = {common.block_name(sch, b) for b in common.output_blocks(sch)}
    changed = True
    while changed:
        changed = False
        for consumer in sch.get_consumers(block):
            if _stops(sch, consumer, stop):
                continue
            chain = [consumer]
            while chain:
                node = chain.pop()
                name = common.block_name(sch, node)
                after = sch.get_consumers(node)
                if (name in outputs or common.is_reduction(sch, node) or len(after) != 1
                        or _stops(sch, after[0], stop) or _is_sole_consumer(sch, node, block)):
                    chain.extend(c for c in after if not _stops(sch, c, stop))
                    continue
                try:
                    sch.compute_inline(node)
                    changed = True
                    break
                except Exception:  # noqa: BLE001 - it stays a block of its own
                    chain.extend(after)
            if changed:
                break


def _is_sole_consumer(sch: Schedule, node, block) -> bool:
    """Whether ``node`` is ``block``'s only consumer: the chain's head, folded backward, not forward."""
    consumers = sch.get_consumers(block)
    return len(consumers) == 1 and common.block_name(sch, consumers[0]) == common.block_name(sch, node)


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """Schedule the merged kernel: the depthwise row computed inside each 1x1 row task."""
    dw, conv = common.find_block(sch, DEPTHWISE), common.find_block(sch, CONV)
    dw_out, out = common.find_block(sch, DW_OUT), common.find_block(sch, OUT)
    if dw_out is None or out is None:
        raise common.NotScheduled("merged depthwise/1x1 kernel without its output stages")
    pad = common.find_block(sch, PAD)
    common.inline_producers(sch, pad if pad is not None else dw)
    if pad is not None:  # a vector load per tap checks the border in place (see conv2d.schedule)
        sch.compute_inline(pad)
    fold_epilogue(sch, dw_out)
    clamp = common.find_block(sch, CLAMP)
    if clamp is not None:
        sch.compute_inline(clamp)
    common.inline_consumers(sch, out)
    dtype = str(sch.get(conv).writes[0].source.dtype)
    lanes = cpu.lanes(dtype)
    work = common.block_work(sch, conv) + common.block_work(sch, dw)

    # the 1x1 convolution: register tiles along the row, one row per task
    loops = sch.get_loops(conv)
    (b, i, j, o), reduction = loops[:4], loops[4:]
    tile_row(sch, conv, out, j, o, reduction, tile(sch.get(conv), "ow"), lanes, cpu.fma_by_lane)
    task = sch.fuse(b, i)

    # the depthwise row the task needs, computed at the start of the task
    sch.compute_at(dw_out, task, preserve_unit_loops=True)
    sch.compute_at(dw, task, preserve_unit_loops=True)
    taps = tile_depthwise_row(sch, dw, dw_out, lanes)

    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(conv, reduction[0])
    sch.decompose_reduction(dw, taps[0])


def tile_row(sch: Schedule, conv, out, j, o, reduction: list, ow_block: int, lanes: int,
             fma_by_lane: bool = False) -> None:
    """Register tiles of a 1x1 convolution along its row loop ``j`` and channel loop ``o`` (the
    loops outside them stay as they are); the write-back ``out`` runs per tile. With ``fma_by_lane``
    (``CpuInfo.fma_by_lane``) the tile reads its input a vector of channels at a time (``lane_fma.py``)."""
    staged = lane_fma.stage_input(sch, conv, lanes) if fma_by_lane else None
    oc_block = tile(sch.get(conv), "oc")
    o_outer, o_inner = sch.split(o, [None, oc_block])
    j_outer, j_inner = sch.split(j, [None, ow_block])
    sch.reorder(o_outer, j_outer, *reduction, j_inner, o_inner)
    common.accumulate_in_registers(sch, conv)
    sch.reverse_compute_at(out, j_outer, preserve_unit_loops=True)
    if staged is not None:
        lane_fma.broadcast_from_lanes(sch, staged, reduction[-1], lanes)
    sch.unroll(j_inner)
    vectorize_channels(sch, o_inner, oc_block, lanes)
    common.vectorize_registers(sch, out, sch.get_loops(out)[-1], lanes)


def tile_depthwise_row(sch: Schedule, dw, dw_out, lanes: int) -> list:
    """Register tiles of a depthwise row computed at a task loop (its last four loops: column,
    channel, two taps); returns the tap loops."""
    c_block, ow_block = tile(sch.get(dw), "oc"), tile(sch.get(dw), "ow")
    dj, dc, *taps = sch.get_loops(dw)[-4:]
    c_outer, c_inner = sch.split(dc, [None, c_block])
    dj_outer, dj_inner = sch.split(dj, [None, ow_block])
    sch.reorder(c_outer, dj_outer, *taps, dj_inner, c_inner)
    common.accumulate_in_registers(sch, dw)
    sch.reverse_compute_at(dw_out, dj_outer, preserve_unit_loops=True)
    for loop in taps:
        if (common.extent(sch, loop) or 99) <= 7:
            sch.unroll(loop)
    sch.unroll(dj_inner)
    sch.vectorize(c_inner)
    common.vectorize_registers(sch, dw_out, sch.get_loops(dw_out)[-1], lanes)
    return taps
