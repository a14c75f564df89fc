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
        return None if body is None else tirx.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body,
                                                  stmt.thread_binding, stmt.annotations)
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
