"""Software prefetch of the next weight block while a task computes on the current one.

A deep 1x1 convolution over a small map (MobileNetV2's 7x7 stage) gives each task one block of
output channels and walks that block's weights once per tile of pixels. Between inferences the
weights leave the caches, so the first walk of every block waits on memory (those kernels ran
15-30% faster on weights read just before). Each walk of block ``b`` here also prefetches one
slice of block ``b + 1``: by the time the task moves on, the next block is in L2.
"""
from __future__ import annotations

import math

from tvm import tirx

from .tir_rewrite import replace_loop, with_loop_body


def prefetch_next_block(func: tirx.PrimFunc, weight: tirx.Buffer, task: tirx.Var, walk: tirx.Var,
                        walks: int) -> tirx.PrimFunc:
    """``func`` with a prefetch of ``1 / walks`` of block ``task + 1`` of ``weight`` at the start
    of every iteration of the loop over ``walk``.

    ``weight`` is packed ``[blocks, rows..., lanes]``: a block is the rows of one output-channel
    block, ``lanes`` values per row (a row of 16 floats is one 64-byte cache line). ``task``
    must index the block (the loop over blocks); the last block prefetches nothing.
    """
    shape = [int(d) for d in weight.shape]
    blocks, rows = shape[0], math.prod(shape[1:-1])
    row_bytes = shape[-1] * weight.dtype.bits // 8
    step = max(1, 64 // row_bytes)  # rows per cache line
    lines = -(-rows // step)
    per_walk = -(-lines // walks)
    line = tirx.Var("prefetch_line", "int64")

    def address(row):
        index, indices = row, []
        for extent in reversed(shape[1:-1]):
            indices.append(tirx.floormod(index, extent))
            index = tirx.floordiv(index, extent)
        return tirx.address_of(tirx.BufferLoad(weight, [task + 1, *reversed(indices), tirx.const(0, "int64")]))

    row = tirx.min((walk * per_walk + line) * step, rows - 1)
    prefetch = tirx.Evaluate(tirx.call_intrin("void", "tirx.prefetch", address(row), 0, 2, 1))
    # the last block has no next one
    guarded = tirx.IfThenElse(task + 1 < blocks, tirx.For(line, 0, per_walk, tirx.ForKind.SERIAL, prefetch), None)

    body = _with_prefetch(func.body, walk, guarded)
    if body is None:
        raise ValueError("prefetch_next_block: the walk loop is not in the function")
    return func.with_body(body)


def _with_prefetch(stmt, walk: tirx.Var, prefetch):
    """``stmt`` with ``prefetch`` first in the body of the loop over ``walk``; None if not found."""
    return replace_loop(stmt, walk, lambda loop: with_loop_body(loop, tirx.SeqStmt([prefetch, loop.body])))
