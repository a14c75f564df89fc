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


def _is_nan(value):
    return tirx.isnan(value)


def exp(x: te.Tensor) -> te.Tensor:
    """exp(x), vectorizable, libm's answers for inf, -inf and NaN."""
    fast = topi.fast_exp(x)

    def element(*i):
        v = x[i]
        value = tirx.Select(v > _const(_EXP_HIGH), _const(math.inf), fast[i])
        value = tirx.Select(v < _const(_EXP_LOW), _const(0.0), value)
        return tirx.Select(_is_nan(v), v, value)

    return te.compute(x.shape, element, name="aotnn_exp")


def _guarded(x: te.Tensor, fast: te.Tensor, name: str) -> te.Tensor:
    """``fast`` (already exact at +-inf) with NaN passed through."""
    return te.compute(x.shape, lambda *i: tirx.Select(_is_nan(x[i]), x[i], fast[i]), name=name)


def tanh(x: te.Tensor) -> te.Tensor:
    return _guarded(x, topi.fast_tanh(x), "aotnn_tanh")


# Numerical Recipes' erfc: t exp(-z^2 + P(t)), t = 1 / (1 + z/2); fractional error below 1.2e-7
_ERFC = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
         1.48851587, -0.82215223, 0.17087277)


def erf(x: te.Tensor) -> te.Tensor:
    """erf(x): TVM's rational form near 0 (accurate relative to the small result), ``1 - erfc`` from
    |x| = 0.5 on (accurate to about an ulp of the result near +-1, where ``1 + erf`` cancels)."""
    near_zero = topi.fast_erf(x)
    z = te.compute(x.shape, lambda *i: tirx.abs(x[i]), name="aotnn_erf_abs")
    t = te.compute(x.shape, lambda *i: _const(1.0) / (_const(1.0) + _const(0.5) * z[i]), name="aotnn_erf_t")

    def poly(*i):
        value = _const(_ERFC[-1])
        for c in reversed(_ERFC[:-1]):
            value = value * t[i] + _const(c)
        return value - z[i] * z[i]

    tail = exp(te.compute(x.shape, poly, name="aotnn_erf_poly"))

    def element(*i):
        one_minus_erfc = _const(1.0) - t[i] * tail[i]
        far = tirx.Select(x[i] < _const(0.0), -one_minus_erfc, one_minus_erfc)
        value = tirx.Select(z[i] < _const(0.5), near_zero[i], far)
        return tirx.Select(_is_nan(x[i]), x[i], value)

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
