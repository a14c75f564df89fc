"""The extents of each kernel's parallel loops, recorded in the manifest for the thread pool.

A parallel loop reaches the runtime as a launch that does not say how many iterations it has
(TVM cuts the loop into ``num_task`` chunks inside the kernel). Knowing the extent, the pool cuts
the loop into several tasks per thread and lets a thread that finishes first take the other's
last tasks (``runtime/c/aotnn_backend.c``); without it, it keeps one task per thread. Each step
of the manifest lists its kernel's parallel loops in launch order (``"parallel"``); the step
runner passes them to the pool before the kernel runs.

A wrong list costs speed, never correctness (a kernel computes its loop whole for any task
count), so kernels whose launches would not match their loops one to one are left without one:
loops under a launch point or a barrier pragma, and loops of non-constant extent.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import tvm
from tvm import tirx
from tvm.s_tir import SBlock, SBlockRealize

_UNMATCHED_PRAGMAS = ("pragma_parallel_launch_point", "pragma_parallel_barrier_when_finish")


def _children(stmt: Any) -> Iterator[Any]:
    if isinstance(stmt, tirx.SeqStmt):
        yield from stmt.seq
    elif isinstance(stmt, tirx.IfThenElse):
        yield stmt.then_case
        if stmt.else_case is not None:
            yield stmt.else_case
    elif isinstance(stmt, SBlockRealize):
        yield stmt.block
    elif isinstance(stmt, SBlock):
        if stmt.init is not None:
            yield stmt.init
        yield stmt.body
    elif hasattr(stmt, "body") and isinstance(stmt.body, tirx.Stmt):
        yield stmt.body


def parallel_extents(func: tirx.PrimFunc) -> list[int]:
    """The extents of ``func``'s parallel loops in the order the kernel launches them; empty where
    they cannot be matched to its launches (see the module doc) or where there are none."""
    extents: list[int] = []
    pending = [func.body]
    while pending:
        stmt = pending.pop()
        if isinstance(stmt, tirx.AttrStmt) and str(stmt.attr_key) in _UNMATCHED_PRAGMAS:
            return []
        if isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL:
            if any(str(key) in _UNMATCHED_PRAGMAS for key in (stmt.annotations or {})):
                return []
            if not isinstance(stmt.extent, tirx.IntImm) or int(stmt.extent) >= 1 << 31:
                return []
            extents.append(int(stmt.extent))
            continue  # TVM runs no parallel loop inside another
        pending.extend(reversed(list(_children(stmt))))
    return extents


def record_parallel_extents(kernels: tvm.IRModule, record: Mapping[str, Any]) -> None:
    """Add each step's ``"parallel"`` list (its kernel's :func:`parallel_extents`) to ``record``."""
    extents = {gvar.name_hint: parallel_extents(func) for gvar, func in kernels.functions.items()
               if isinstance(func, tirx.PrimFunc)}
    for step in record["steps"]:
        step["parallel"] = extents.get(step["kernel"], [])
