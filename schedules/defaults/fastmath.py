"""Vectorizable float32 transcendentals: exp, tanh, erf and what is built on them.

LLVM turns ``exp``/``tanh``/``erf`` of a vector into one libm call per lane, which makes softmax,
GELU and recurrent gates the slowest kernels of a transformer or an LSTM. TVM's polynomial
versions (``topi.fast_exp``/``fast_tanh``/``fast_erf``: at most 3.3e-7 relative error, about 3 ulp,
measured over [-88, 88]) vectorize; here they are wrapped so that infinities and NaNs come out as
from libm (exp overflows to inf and underflows to 0 below the normal range; NaN stays NaN).
The rewrite only touches float32 ops (the twin-carrying rules pick up the result's layout).
"""
from __future__ import annotations

import math

from tvm import relax, te, tirx, topi

from .layout import Rewriter, dtype_of, static_shape

_F32 = "float32"
_EXP_HIGH = math.log(3.4028234663852886e38)   # above: exp overflows to inf
_EXP_LOW = math.log(1.1754943508222875e-38)   # below: exp is subnormal; flushed to 0


def _const(value: float):
    return tirx.const(value, _F32)


# dtype -> (integer type of the same width, mask of all bits but the sign, the bits of +inf)
_NAN_BITS = {
    "float16": ("int16", 0x7FFF, 0x7C00),
    "bfloat16": ("int16", 0x7FFF, 0x7F80),
    "float32": ("int32", 0x7FFFFFFF, 0x7F800000),
    "float64": ("int64", 0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000),
}


def is_nan(value, dtype: str = _F32):
    """NaN test of ``value`` (of ``dtype``) as integer operations on the bits (exponent all ones,
    mantissa not zero).

    ``tirx.isnan`` of a load indexed with int64 makes TVM's vectorizer scalarize the whole loop
    (BERT's GELU ran one lane at a time), and ``v != v`` is folded to false by the simplifier.
    """
    if dtype not in _NAN_BITS:
        return tirx.isnan(value)
    integer, magnitude, infinity = _NAN_BITS[dtype]
    bits = tirx.reinterpret(integer, value) & tirx.const(magnitude, integer)
    return bits > tirx.const(infinity, integer)


def exp(x: te.Tensor) -> te.Tensor:
    """exp(x), vectorizable, libm's answers for inf, -inf and NaN."""
    fast = topi.fast_exp(x)

    def element(*i):
        v = x[i]
        value = tirx.Select(v > _const(_EXP_HIGH), _const(math.inf), fast[i])
        value = tirx.Select(v < _const(_EXP_LOW), _const(0.0), value)
        return tirx.Select(is_nan(v), v, value)

    return te.compute(x.shape, element, name="aotnn_exp")


def _guarded(x: te.Tensor, fast: te.Tensor, name: str) -> te.Tensor:
    """``fast`` (already exact at +-inf) with NaN passed through."""
    return te.compute(x.shape, lambda *i: tirx.Select(is_nan(x[i]), x[i], fast[i]), name=name)


def tanh(x: te.Tensor) -> te.Tensor:
    return _guarded(x, topi.fast_tanh(x), "aotnn_tanh")


# erf after N. Juffa's division-free float32 erff (about 1 ulp with an exact exp): an odd
# polynomial up to |x| = 0.927734375, ``1 - exp(Q(|x|))`` beyond it (Horner coefficients,
# highest degree first).
_ERF_SPLIT = 0.927734375
_ERF_NEAR = (-5.96761703e-4, 4.99119423e-3, -2.67681349e-2, 1.12819925e-1, -3.76125336e-1, 1.28379166e-1)
_ERF_FAR_HIGH = (-1.72853470e-5, 3.83197126e-4)
_ERF_FAR_MID = (-3.88396438e-3, 2.42546219e-2)
_ERF_FAR_LOW = (-1.06777877e-1, -6.34846687e-1, -1.28717512e-1)


def _horner(coefficients, x, value=None):
    """``value`` (default: the first coefficient) carried through Horner steps ``value * x + c``."""
    if value is None:
        value, coefficients = _const(coefficients[0]), coefficients[1:]
    for c in coefficients:
        value = value * x + _const(c)
    return value


def erf(x: te.Tensor) -> te.Tensor:
    """erf(x) without divisions: relative error near 0, about 2 ulp of the result near +-1 (where
    ``1 + erf`` cancels), libm's answers for +-inf and NaN."""
    def exponent(*i):  # Q(|x|), at most -|x|: exp of it never overflows
        z = tirx.abs(x[i])
        value = _horner(_ERF_FAR_HIGH, z) * (z * z) + _horner(_ERF_FAR_MID, z)
        return _horner(_ERF_FAR_LOW, z, value) * z - z

    tail = exp(te.compute(x.shape, exponent, name="aotnn_erf_exponent"))

    def element(*i):
        v = x[i]
        near = _horner(_ERF_NEAR, v * v) * v + v
        far = _const(1.0) - tail[i]
        value = tirx.Select(tirx.abs(v) > _const(_ERF_SPLIT), tirx.Select(v < _const(0.0), -far, far), near)
        return tirx.Select(is_nan(v), v, value)

    return te.compute(x.shape, element, name="aotnn_erf")


def sigmoid(x: te.Tensor) -> te.Tensor:
    e = exp(te.compute(x.shape, lambda *i: -x[i], name="aotnn_negate"))
    return te.compute(x.shape, lambda *i: _const(1.0) / (_const(1.0) + e[i]), name="aotnn_sigmoid")


def silu(x: te.Tensor) -> te.Tensor:
    s = sigmoid(x)
    return te.compute(x.shape, lambda *i: x[i] * s[i], name="aotnn_silu")


def gelu(x: te.Tensor) -> te.Tensor:
    scaled = te.compute(x.shape, lambda *i: x[i] * _const(1 / math.sqrt(2)), name="aotnn_gelu_scale")
    e = erf(scaled)
    return te.compute(x.shape, lambda *i: x[i] * _const(0.5) * (_const(1.0) + e[i]), name="aotnn_gelu")


def softmax(x: te.Tensor, axis: int) -> te.Tensor:
    """softmax along ``axis``: max, exp of the difference, sum, divide."""
    _, shifted, total = _exp_shifted(x, axis)
    return te.compute(x.shape, lambda *i: shifted[i] / total[_drop(i, axis)], name="aotnn_softmax")


def log_softmax(x: te.Tensor, axis: int) -> te.Tensor:
    """log_softmax along ``axis``: ``x - max - log(sum(exp(x - max)))``."""
    diff, _, total = _exp_shifted(x, axis)
    return te.compute(x.shape, lambda *i: diff[i] - tirx.log(total[_drop(i, axis)]), name="aotnn_log_softmax")


def _drop(index, axis: int):
    return tuple(v for k, v in enumerate(index) if k != axis)


def _exp_shifted(x: te.Tensor, axis: int):
    """(x - max, exp(x - max), sum of exp(x - max)) along ``axis``."""
    shape = [int(d) for d in x.shape]
    reduced = [d for k, d in enumerate(shape) if k != axis]

    def at(i, k):
        index = list(i)
        index.insert(axis, k)
        return tuple(index)

    k1 = te.reduce_axis((0, shape[axis]), "k")
    peak = te.compute(reduced, lambda *i: te.max(x[at(i, k1)], axis=k1), name="aotnn_softmax_max")
    diff = te.compute(shape, lambda *i: x[i] - peak[_drop(i, axis)], name="aotnn_softmax_diff")
    shifted = exp(diff)
    k2 = te.reduce_axis((0, shape[axis]), "k")
    total = te.compute(reduced, lambda *i: te.sum(shifted[at(i, k2)], axis=k2), name="aotnn_softmax_sum")
    return diff, shifted, total


UNARY = {"relax.exp": exp, "relax.tanh": tanh, "relax.erf": erf, "relax.sigmoid": sigmoid,
         "relax.nn.silu": silu, "relax.nn.gelu": gelu}


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """float32 exp/tanh/erf/sigmoid/silu/gelu/softmax/log_softmax -> their vectorizable forms."""
    name = call.op.name
    if name not in UNARY and name not in ("relax.nn.softmax", "relax.nn.log_softmax"):
        return False
    if len(call.args) != 1 or dtype_of(var) != _F32 or static_shape(var) is None:
        return False
    x = call.args[0]
    bb = rw.bb
    if name in UNARY:
        if rw.has_twin(x):  # element-wise: keep the channels-last layout
            rw.set_nhwc(var, bb.emit(bb.call_te(UNARY[name], rw.nhwc(x), primfunc_name_hint=name.split(".")[-1])))
        else:
            rw.set_nchw(var, bb.emit(bb.call_te(UNARY[name], rw.nchw(x), primfunc_name_hint=name.split(".")[-1])))
        return True
    rank = len(static_shape(var))
    axis = int(call.attrs.axis) % rank
    make = softmax if name == "relax.nn.softmax" else log_softmax
    rw.set_nchw(var, bb.emit(bb.call_te(make, rw.nchw(x), axis, primfunc_name_hint=name.split(".")[-1])))
    return True
