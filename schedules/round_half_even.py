"""Round half to even without a C library call, for microcontrollers.

Cortex-M4/M7 FPUs have no ``vrint``: LLVM lowers ``tir.round`` (``llvm.nearbyint``) to a call of newlib's
``rintf``, about 36 instructions, once per requantized value (2.3 M of an int8 DS-CNN's 13 M instructions).
Here ``relax.round`` on float32 is legalized to two additions the FPU rounds itself (round to nearest even,
its default mode), exact for every input (the same bits as the x86 kernels' ``roundps``):

- ``|x| < 2**22``: ``(x + 1.5 * 2**23) - 1.5 * 2**23``: the sum lies in [2**23, 2**24), where float32
  values are the integers, so the addition rounds ``x`` half to even and the subtraction is exact; the
  sign of ``x`` is put back (``rint(-0.3) == -0.0``);
- otherwise ``x`` (already an integer, an infinity or NaN).

``x`` is bound once (a ``Let``), so LLVM sees one value with several uses and fuses no multiplication that
produced it into the addition (a fused multiply-add would skip the product's rounding: another result).
"""
from __future__ import annotations

from tvm import relax, te, tirx, topi

from .defaults.layout import dtype_of

_F32 = "float32"
_SMALL = float(2 ** 22)  # below: x + 1.5 * 2**23 lies in [2**23, 2**24), where float32 steps are exactly 1
_MAGIC = float(3 * 2 ** 22)


def _round_half_even(x: tirx.PrimExpr) -> tirx.PrimExpr:
    value = tirx.Var("round_x", _F32)
    magic = tirx.const(_MAGIC, _F32)
    shifted = tirx.Var("round_shifted", _F32)
    small = tirx.copysign(tirx.Let(shifted, value + magic, shifted - magic), value)
    body = tirx.Select(tirx.abs(value) < tirx.const(_SMALL, _F32), small, value)
    return tirx.Let(value, x, body)


def round_te(x: te.Tensor) -> te.Tensor:
    """``round(x)`` (half to even) of a float32 tensor, element by element, without a library call."""
    return te.compute(x.shape, lambda *i: _round_half_even(x(*i)), name="round_half_even")


def legalize_round(bb: relax.BlockBuilder, call: relax.Call) -> relax.Expr:
    """``LegalizeOps`` rule for ``relax.round``: :func:`round_te` on float32, TVM's own otherwise."""
    if dtype_of(call.args[0]) != _F32:
        return relax.transform.legalize_ops.common._call_topi_without_attr(topi.round)(bb, call)
    return bb.call_te(round_te, call.args[0], primfunc_name_hint="tir_round")


LEGALIZE = {"relax.round": legalize_round}
