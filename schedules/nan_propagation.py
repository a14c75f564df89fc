"""NaN-propagating float ``max``/``min`` in every kernel, as PyTorch and onnxruntime compute them.

TVM's LLVM code generator emits ``max(a, b)`` as ``a > b ? a : b`` (``min`` as ``a < b ? a : b``):
a NaN in ``b`` comes out, a NaN in ``a`` is lost. ReLU (``max(x, 0)``), clip, ``maximum``, and the
running value of every max/min reduction (``acc = max(acc, x)``: pooling, ``ReduceMax``, softmax's
peak) all have the data in ``a``, so a NaN input came out as a finite number. (MindSpore 2.10's
CPU kernels propagate NaN through ReduceMax and adaptive max pooling but not through ReLU,
maximum, clip or MaxPool2d; a NaN hidden there is a silent wrong answer, so every op propagates.)

This pass rewrites each float max/min of the scheduled kernels of host and C-bundle builds just
before code generation (after every schedule and tuning record, which therefore see TVM's own
forms):

- a constant second operand moves first, ``max(0, x)``: ``0 > x ? 0 : x`` is ``x`` when ``x`` is
  NaN, at no cost (on x86 one ``maxps`` with the operands in that order): ReLU and clip epilogues
  stay as fast as they were;
- otherwise ``isnan(a) ? a : max(a, b)``, the NaN test done on the bits (``fastmath.is_nan``).
"""
from __future__ import annotations

import tvm
from tvm import tirx
from tvm.s_tir import SBlockRealize

from .defaults.fastmath import is_nan
from .defaults.tir_rewrite import with_block, with_loop_body

_REBUILT_BINARY = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Max, tirx.Min)


def _dtype(expr) -> str:
    return str(expr.ty)


def _is_float(expr) -> bool:
    return _dtype(expr).startswith(("float", "bfloat"))


def _is_number(expr) -> bool:
    """A constant that is not NaN (it can never be the operand whose NaN must come out)."""
    return isinstance(expr, tirx.FloatImm) and expr.value == expr.value


def _propagating(kind: type, a, b):
    """``kind(a, b)`` (Max or Min) that returns NaN when either operand is NaN."""
    if _is_number(b):
        return kind(b, a)
    if _is_number(a):
        return kind(a, b)
    return tirx.Select(is_nan(a, _dtype(a)), a, kind(a, b))


def _expr(expr):
    """``expr`` with its float max/min made NaN-propagating; the same object where it has none."""
    if isinstance(expr, _REBUILT_BINARY):
        a, b = _expr(expr.a), _expr(expr.b)
        if isinstance(expr, (tirx.Max, tirx.Min)) and _is_float(expr):
            return _propagating(type(expr), a, b)
        return expr if a.same_as(expr.a) and b.same_as(expr.b) else type(expr)(a, b)
    if isinstance(expr, tirx.Select):
        old = (expr.condition, expr.true_value, expr.false_value)
        parts = [_expr(part) for part in old]
        return expr if all(new.same_as(part) for new, part in zip(parts, old)) else tirx.Select(*parts)
    if isinstance(expr, tirx.Cast):
        value = _expr(expr.value)
        return expr if value.same_as(expr.value) else tirx.Cast(_dtype(expr), value)
    if isinstance(expr, tvm.ir.expr.Call):
        args = [_expr(arg) for arg in expr.args]
        if all(new.same_as(old) for new, old in zip(args, expr.args)):
            return expr
        return tvm.ir.expr.Call(expr.op, args, expr.attrs, expr.ty_args, ret_ty=expr.ty)
    return expr


def _stmt(stmt):
    """``stmt`` with every stored value rewritten (through loops, sequences, blocks and branches)."""
    if isinstance(stmt, tirx.BufferStore):
        value = _expr(stmt.value)
        return stmt if value.same_as(stmt.value) else tirx.BufferStore(stmt.buffer, value, list(stmt.indices))
    if isinstance(stmt, tirx.For):
        body = _stmt(stmt.body)
        return stmt if body.same_as(stmt.body) else with_loop_body(stmt, body)
    if isinstance(stmt, tirx.SeqStmt):
        parts = [_stmt(part) for part in stmt.seq]
        return stmt if all(new.same_as(old) for new, old in zip(parts, stmt.seq)) else tirx.SeqStmt(parts)
    if isinstance(stmt, SBlockRealize):
        block = stmt.block
        body = _stmt(block.body)
        init = None if block.init is None else _stmt(block.init)
        if body.same_as(block.body) and (init is None or init.same_as(block.init)):
            return stmt
        return SBlockRealize(stmt.iter_values, stmt.predicate, with_block(block, body=body, init=init))
    if isinstance(stmt, tirx.IfThenElse):
        then_case = _stmt(stmt.then_case)
        else_case = None if stmt.else_case is None else _stmt(stmt.else_case)
        if then_case.same_as(stmt.then_case) and (else_case is None or else_case.same_as(stmt.else_case)):
            return stmt
        return tirx.IfThenElse(stmt.condition, then_case, else_case)
    return stmt


def propagate_nan(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` with the float max/min of every TIR function NaN-propagating (see the module doc)."""
    updates = {}
    for gvar, func in mod.functions.items():
        if isinstance(func, tirx.PrimFunc):
            body = _stmt(func.body)
            if not body.same_as(func.body):
                updates[gvar] = func.with_body(body)
    if not updates:
        return mod
    rewritten = tvm.IRModule(dict(mod.functions.items()), attrs=mod.attrs)
    for gvar, func in updates.items():
        rewritten[gvar] = func
    return rewritten
