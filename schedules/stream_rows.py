"""Microcontroller kernels that keep no whole intermediate tensor: every stage runs per output row.

Unscheduled, a fused kernel (padding, a convolution, its batch-norm epilogue, the next
convolution...) materializes each stage as a whole tensor in scratch memory: DS-CNN's
depthwise + pointwise kernel asked for 80 KB, more than its input and output together. Here
the element-wise chains between stages are inlined into their element-wise consumers, and every
remaining stage is computed at the output's outermost loop of extent > 1 (its rows; for a 4-D
feature map, the loop over its second axis, also in a batch of several), so that the
lowering shrinks each intermediate to the region one output row needs (a few rows with a
convolution's halo). Stages that refuse keep their whole buffers.
"""
from __future__ import annotations

import logging

import tvm
from tvm import tirx
from tvm.s_tir import Schedule

_log = logging.getLogger(__name__)


def _is_reduction(sch: Schedule, block) -> bool:
    return any(int(iv.iter_type) == tirx.IterVar.CommReduce for iv in sch.get(block).iter_vars)


def _inline_elementwise_chains(sch: Schedule) -> None:
    """Inline every spatial block whose consumers are all spatial (never into a reduction, where
    it would run once per reduction step)."""
    changed = True
    while changed:
        changed = False
        for block in sch.get_child_blocks(sch.get_sblock("root")):
            consumers = sch.get_consumers(block)
            if (_is_reduction(sch, block) or not consumers
                    or any(_is_reduction(sch, c) for c in consumers)):
                continue
            try:
                sch.compute_inline(block)
            except Exception:  # noqa: BLE001 - not inlinable (reads with offsets, several writes...)
                continue
            changed = True
            break


def _row_loop(sch: Schedule, block):
    loops = sch.get_loops(block)
    writes = sch.get(block).writes
    if len(loops) >= 4 and len(writes) == 1 and len(writes[0].region) == 4:  # a feature map (N, H, W, C): its rows
        extent = sch.get(loops[1]).extent
        if isinstance(extent, tirx.IntImm) and int(extent) > 1:
            return loops[1]
    for loop in loops:
        extent = sch.get(loop).extent
        if not isinstance(extent, tirx.IntImm) or int(extent) > 1:
            return loop
    return None


def stream_rows(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """``func`` with its intermediate stages computed per row of its output (see the module doc).

    A function with several output blocks, or none with a loop to stream, comes back as it was.
    """
    sch = Schedule(func)
    try:
        outputs = list(sch.get_output_blocks(sch.get_sblock("root")))
    except Exception:  # noqa: BLE001 - no root block to speak of
        return func
    if len(outputs) != 1 or len(sch.get_child_blocks(sch.get_sblock("root"))) < 2:
        return func
    _inline_elementwise_chains(sch)
    output = sch.get_output_blocks(sch.get_sblock("root"))[0]
    loop = _row_loop(sch, output)
    if loop is None:
        return func
    for block in reversed(list(sch.get_child_blocks(sch.get_sblock("root")))):
        if sch.get(block).same_as(sch.get(output)):
            continue
        try:
            sch.compute_at(block, loop, preserve_unit_loops=True)
        except Exception:  # noqa: BLE001 - this stage keeps its whole buffer
            continue
    return sch.mod["main"]


def stream_rows_module(kernels: tvm.IRModule) -> tvm.IRModule:
    """Every PrimFunc of ``kernels`` through ``stream_rows``; one that it cannot take (a warning
    names it) stays as it was: correct, with whole intermediate tensors."""
    functions = {}
    for gvar, func in kernels.functions.items():
        if isinstance(func, tirx.PrimFunc):
            try:
                func = stream_rows(func)
            except Exception as error:  # noqa: BLE001 - the unstreamed kernel is still correct
                _log.warning("kernel %s keeps whole intermediate tensors (streaming rows failed: %s)",
                             gvar.name_hint, error)
        functions[gvar.name_hint] = func
    return tvm.IRModule(functions)
