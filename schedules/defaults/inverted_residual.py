"""A whole inverted-residual block in one kernel: 1x1 expand, depthwise, 1x1 project.

``block_fusion.merge_expand`` merges the expand convolution into the depthwise/1x1 kernel where
the expanded tensor would not fit in a core's L2 (MobileNetV2's 112x112, 56x56 and 28x28 blocks:
0.6 to 4.8 MB written by one kernel and read back by the next). Here each task takes a band of output
rows: it expands the input rows the band needs into a buffer of its own (a few hundred KB, kept
in L2), then computes each output row's depthwise row and projects it, as ``dw_pointwise.py``
does. Neighbouring bands share a row or two of the expansion, which both compute. Each expanded
row is computed just before the first output row that reads it (``interleave_rows.py``).

The "expansion" may also be a stem convolution (MobileNetV2's 3x3 stride-2 convolution over the
image before block 1, which has no expansion): its padded input strip is copied per expanded row.
In the model this took the two kernels from 344 to 290 us (their 1.6 MB intermediate tensor no
longer goes through L3).
"""
from __future__ import annotations

from tvm.s_tir import Schedule

from . import common
from .conv2d import CLAMP, CONV, DEPTHWISE, DW_OUT, OUT, PAD, tile
from .cpu import CpuInfo
from .dw_pointwise import fold_epilogue, tile_depthwise_row, tile_row
from .interleave_rows import interleave_expansion, row_window

# Expanded rows one task keeps. A band shares its first row(s) with the band before, which both
# compute: wider bands waste less but leave fewer tasks to balance over the cores. On MobileNetV2,
# 640 KB beat 384 KB (-11 to -16% on the 56x56 blocks) and matched 1 MB; with the rows interleaved,
# bands of 7 or 14 rows instead (8 to 2 tasks) were within 2% of it.
BAND_BYTES = 640 * 1024


def expand_row_tile(width: int, planned: int) -> int | None:
    """The expansion's tile width in the merged kernel: the widest up to ``planned`` that divides
    the row (a partial last tile would put a predicate on every update of the tile); None where
    only tiles under half the planned width divide it (the merged kernel would lose)."""
    best = next(w for w in range(planned, 0, -1) if width % w == 0)
    return best if 2 * best >= planned else None


def band_rows(rows: int, expanded_rows: int, row_bytes: int) -> int | None:
    """Output rows per task: the most whose expanded rows fit :data:`BAND_BYTES`, at most half the
    rows (two tasks or more), dividing them (a partial band would predicate the projection's tile
    updates); None where only bands under half that size divide them (a prime row count)."""
    stride = max(1, round(expanded_rows / rows))
    wanted = max(1, min(rows // 2, (BAND_BYTES // row_bytes - 1) // stride))
    band = next(b for b in range(wanted, 0, -1) if rows % b == 0)
    return band if 2 * band >= wanted else None


def matches(sch: Schedule) -> bool:
    return len(common.named_blocks(sch, CONV)) == 2 and common.find_block(sch, DEPTHWISE) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule | None:
    """Schedule the merged block: per task a band of rows, each output row's new expanded rows,
    its depthwise row and its projection in turn.

    Returns a new schedule where the expansion was interleaved with the output rows (see
    ``interleave_rows``), else None (``sch`` holds the result: the band expanded first)."""
    expand, project = common.named_blocks(sch, CONV)
    expand_out, project_out = common.named_blocks(sch, OUT)
    dw, dw_out = common.find_block(sch, DEPTHWISE), common.find_block(sch, DW_OUT)
    pad, expansion_pad = None, None  # the depthwise's padding; a stem convolution's own
    for block in common.named_blocks(sch, PAD):
        if any(sch.get(c).same_as(sch.get(dw)) for c in sch.get_consumers(block)):
            pad = block
        else:
            expansion_pad = block
    if dw_out is None or pad is None:
        raise common.NotScheduled("inverted residual without its depthwise stages")
    for clamp in common.named_blocks(sch, CLAMP):
        sch.compute_inline(clamp)
    # expand epilogue into the expand write-back; the padding read in place by the depthwise taps
    fold_epilogue(sch, expand_out, stop=(PAD,))
    sch.compute_inline(pad)
    fold_epilogue(sch, dw_out)
    common.inline_consumers(sch, project_out)
    dtype = str(sch.get(project).writes[0].source.dtype)
    lanes = cpu.lanes(dtype)
    work = sum(common.block_work(sch, b) for b in (expand, dw, project))

    # the projection: register tiles along the row; a task is a band of rows
    (b, i, j, o), reduction = sch.get_loops(project)[:4], sch.get_loops(project)[4:]
    exp_shape = [int(d) for d in sch.get(expand_out).writes[0].source.shape]
    band = band_rows(common.extent(sch, i), exp_shape[1], 4 * exp_shape[2] * exp_shape[3])
    if band is None:
        raise common.NotScheduled("no band of rows divides the output")
    i_band, i_row = sch.split(i, [None, band])
    tile_row(sch, project, project_out, j, o, reduction, tile(sch.get(project), "ow"), lanes, cpu.fma_by_lane)
    task = sch.fuse(b, i_band)

    # the depthwise row of each output row
    sch.compute_at(dw_out, i_row, preserve_unit_loops=True)
    sch.compute_at(dw, i_row, preserve_unit_loops=True)
    taps = tile_depthwise_row(sch, dw, dw_out, lanes)

    # the expanded rows of the band, computed at the start of the task
    sch.compute_at(expand_out, task, preserve_unit_loops=True)
    sch.compute_at(expand, task, preserve_unit_loops=True)
    expanded_row = sch.get_loops(expand)[2]
    (ej, eo), e_reduction = sch.get_loops(expand)[3:5], sch.get_loops(expand)[5:]
    e_ow_block = expand_row_tile(common.extent(sch, ej), tile(sch.get(expand), "ow"))
    if e_ow_block is None:
        raise common.NotScheduled("no expansion tile divides the row")
    tile_row(sch, expand, expand_out, ej, eo, e_reduction, e_ow_block, lanes)
    if expansion_pad is not None:  # each expanded row's padded input strip, copied just before it
        sch.compute_at(expansion_pad, expanded_row, preserve_unit_loops=True)

    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(project, reduction[0])
    sch.decompose_reduction(dw, taps[0])
    sch.decompose_reduction(expand, e_reduction[0])

    dw_block = sch.get(dw)
    window = row_window(dw_block, sch.get(expand_out).writes[0].source, dw_block.iter_vars[1].var,
                        dw_block.iter_vars[4].var, int(dw_block.iter_vars[4].dom.extent))
    if window is None:
        return None
    func = interleave_expansion(sch.mod["main"], sch.get(task).loop_var, sch.get(i_row).loop_var,
                                sch.get(expanded_row).loop_var, *window)
    return None if func is None else Schedule(func)
