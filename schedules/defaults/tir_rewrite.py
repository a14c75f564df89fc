"""Replace one statement deep inside a TIR function.

TVM 0.27's Python API has no statement mutator: the path from the function body down to the
statement is rebuilt around its replacement (loops, sequences and blocks along the way).
"""
from __future__ import annotations

from collections.abc import Callable

from tvm import tirx
from tvm.s_tir import SBlock, SBlockRealize


def with_block(block: SBlock, **changes) -> SBlock:
    """``block`` with some of its fields replaced (``body``, ``reads``, ``init``...)."""
    fields = {name: getattr(block, name) for name in ("iter_vars", "reads", "writes", "name_hint", "body", "init",
                                                      "alloc_buffers", "match_buffers", "annotations")}
    fields.update(changes)
    return SBlock(*fields.values())


def replace_first(stmt, change: Callable):
    """``stmt`` with the first statement (in order, outer first) for which ``change`` returns a
    statement replaced by that statement; None where ``change`` returns None everywhere."""
    replaced = change(stmt)
    if replaced is not None:
        return replaced
    if isinstance(stmt, tirx.For):
        body = replace_first(stmt.body, change)
        return None if body is None else with_loop_body(stmt, body)
    if isinstance(stmt, tirx.SeqStmt):
        parts = list(stmt.seq)
        for index, part in enumerate(parts):
            changed = replace_first(part, change)
            if changed is not None:
                parts[index] = changed
                return tirx.SeqStmt(parts)
        return None
    if isinstance(stmt, SBlockRealize):
        body = replace_first(stmt.block.body, change)
        return None if body is None else SBlockRealize(stmt.iter_values, stmt.predicate, with_block(stmt.block, body=body))
    return None


def with_loop_body(loop: tirx.For, body) -> tirx.For:
    """``loop`` with ``body`` as its body (same variable, range, kind and annotations)."""
    return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding, loop.annotations)


def replace_loop(stmt, var: tirx.Var, make: Callable):
    """``stmt`` with the loop over ``var`` replaced by ``make(loop)``; None if there is none."""
    return replace_first(stmt, lambda node: make(node) if isinstance(node, tirx.For) and node.loop_var.same_as(var) else None)


def find_loop(stmt, var: tirx.Var) -> tirx.For | None:
    """The loop over ``var`` in ``stmt`` (through loops, sequences and blocks), or None."""
    if isinstance(stmt, tirx.For):
        return stmt if stmt.loop_var.same_as(var) else find_loop(stmt.body, var)
    if isinstance(stmt, tirx.SeqStmt):
        return next((found for part in stmt.seq if (found := find_loop(part, var)) is not None), None)
    if isinstance(stmt, SBlockRealize):
        return find_loop(stmt.block.body, var)
    return None
