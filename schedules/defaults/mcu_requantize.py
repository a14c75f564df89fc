"""On Cortex-M, requantization's rounding in one instruction: ``vcvtr`` instead of the float round-half-even.

A requantization epilogue ends in ``cast(int8/uint8, clip(round_half_even(y) + zero_point, lo, hi))`` with a
float32 ``y`` (the zero point an integer, or folded away), and ``round_half_even`` is the portable form
``copysign((y + 1.5 * 2**23) - 1.5 * 2**23, y)`` for ``|y| < 2**22`` (``relay_frontend``): about twenty
instructions per output on an FPv4/FPv5 FPU, a third of a DS-CNN layer's. The FPU's ``vcvtr.s32.f32`` converts to
int32 in the FPSCR's rounding mode, round to nearest even at reset (nothing in a bundle changes it), saturating
outside the int32 range; the clip then runs on integers. Same value for every finite ``y``: below 2**31 in
magnitude both round half to even; past it the saturated integer clips to the same bound as the float does (a NaN
``y``, which an int32 accumulator times a finite multiplier cannot give, would become ``lo`` instead of ``hi``).
"""
from __future__ import annotations

import tvm
from tvm import tirx
from tvm.s_tir import SBlockRealize, Schedule

from .common import NotScheduled
from .cpu import CpuInfo
from .tir_rewrite import replace_first, with_block

_NARROW = ("int8", "uint8")
_ROUND_LIMIT = 4194304.0  # 2**22: where relay_frontend's round_half_even switches to the value itself


def _float_bound(expr) -> int | None:
    if isinstance(expr, tirx.FloatImm) and float(expr.value) == int(expr.value):
        return int(expr.value)
    return None


def _rounded_value(expr):
    """``y`` when ``expr`` is the portable round-half-even of ``y`` (a Let over a Select on ``fabs(var) <
    2**22``), else None."""
    if not isinstance(expr, tirx.Let) or not isinstance(expr.body, tirx.Select):
        return None
    cond = expr.body.condition
    if not (isinstance(cond, tirx.LT) and isinstance(cond.b, tirx.FloatImm) and float(cond.b.value) == _ROUND_LIMIT
            and isinstance(cond.a, tvm.ir.Call) and cond.a.op.name == "tirx.fabs"
            and cond.a.args[0].same_as(expr.var)):
        return None
    return expr.value if str(expr.value.ty) == "float32" else None


def _clipped(expr):
    """(inner, lo, hi) of ``max(min(inner, hi), lo)`` or ``min(max(inner, lo), hi)`` with integer float
    bounds, else None."""
    if isinstance(expr, tirx.Max) and isinstance(expr.a, tirx.Min):
        inner, hi, lo = expr.a.a, _float_bound(expr.a.b), _float_bound(expr.b)
    elif isinstance(expr, tirx.Min) and isinstance(expr.a, tirx.Max):
        inner, lo, hi = expr.a.a, _float_bound(expr.a.b), _float_bound(expr.b)
    else:
        return None
    return None if lo is None or hi is None else (inner, lo, hi)


def _shifted(expr):
    """(rounded, integer shift) of ``rounded + zero_point`` (a float zero point of integer value), or
    (expr, 0)."""
    if isinstance(expr, tirx.Add):
        for value, shift in ((expr.a, expr.b), (expr.b, expr.a)):
            if _float_bound(shift) is not None:
                return value, _float_bound(shift)
    return expr, 0


def _rewrite_cast(node):
    if not isinstance(node, tirx.Cast) or str(node.ty) not in _NARROW:
        return None
    clipped = _clipped(node.value)
    if clipped is None:
        return None
    inner, lo, hi = clipped
    rounded, zero_point = _shifted(inner)
    value = _rounded_value(rounded)
    if value is None:
        return None
    as_float = tirx.call_llvm_pure_intrin("float32", "llvm.arm.vcvtr", value)
    integer = tirx.reinterpret("int32", as_float)
    # clamped before the zero point is added: a saturated conversion plus the zero point would wrap
    clamped = tirx.Max(tirx.Min(integer, tirx.IntImm("int32", hi - zero_point)), tirx.IntImm("int32", lo - zero_point))
    if zero_point:
        clamped = clamped + tirx.IntImm("int32", zero_point)
    return tirx.Cast(str(node.ty), clamped)


def _rewrite_expr(expr):
    """``expr`` with the pattern rewritten in it (through casts and arithmetic: a pooled dequantization
    sums ``scale * float(cast(narrow, clip(...)))``), or None where it does not occur."""
    rewritten = _rewrite_cast(expr)
    if rewritten is not None:
        return rewritten
    if isinstance(expr, tirx.Cast):
        inner = _rewrite_expr(expr.value)
        return None if inner is None else tirx.Cast(str(expr.ty), inner)
    if isinstance(expr, (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max)):
        a, b = _rewrite_expr(expr.a), _rewrite_expr(expr.b)
        if a is None and b is None:
            return None
        return type(expr)(expr.a if a is None else a, expr.b if b is None else b)
    return None


def round_with_vcvtr(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """``func`` with every ``cast(narrow, clip(round_half_even(float32 y)))`` computed by ``vcvtr``.

    Args:
        func: a kernel for a Cortex-M CPU with a single-precision FPU.
    Returns:
        the kernel, rewritten where the pattern occurs (unchanged elsewhere).
    """
    body = func.body
    while (changed := replace_first(body, _rewrite_store)) is not None:  # one store at a time
        body = changed
    return func if body.same_as(func.body) else func.with_body(body)


def _rewrite_store(node):
    """A block whose store writes a rounded and clipped value, with the value computed by ``vcvtr``."""
    if not isinstance(node, SBlockRealize) or not isinstance(node.block.body, tirx.BufferStore):
        return None
    store = node.block.body
    value = _rewrite_expr(store.value)
    if value is None:
        return None
    body = tirx.BufferStore(store.buffer, value, store.indices)
    return SBlockRealize(node.iter_values, node.predicate, with_block(node.block, body=body))


def scalar_fpu(cpu: CpuInfo) -> bool:
    """A microcontroller whose kernels compute floats one at a time (M4, M7): ``vcvtr`` has no vector form,
    and Helium's (M55) vectorized epilogues round four lanes at once already."""
    return cpu.small_memory and cpu.lanes("float32") == 1


class OnMcu:
    """A schedule rule that, on a :func:`scalar_fpu` only, schedules as ``rule`` does and then rounds with
    ``vcvtr`` (:func:`round_with_vcvtr`); elsewhere it declines and ``rule`` itself, next in the rules,
    applies. The Cortex-M targets built for (M4, M7) have a single-precision FPU."""

    def __init__(self, rule) -> None:
        self.rule = rule
        self.__name__ = rule.__name__

    def matches(self, sch: Schedule) -> bool:
        return self.rule.matches(sch)

    def schedule(self, sch: Schedule, cpu: CpuInfo) -> Schedule:
        if not scalar_fpu(cpu):
            raise NotScheduled("not a microcontroller with a scalar FPU")
        scheduled = self.rule.schedule(sch, cpu) or sch
        return Schedule(round_with_vcvtr(scheduled.mod["main"]))


def on_mcu(rule) -> OnMcu:
    """``rule`` with the ``vcvtr`` rounding on microcontrollers (:class:`OnMcu`)."""
    return OnMcu(rule)
