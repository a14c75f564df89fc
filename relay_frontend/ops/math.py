"""Lowering rules for special functions (lgamma, digamma, igamma, lbeta) and logsumexp.

The special functions are written from their series with element-wise Relax ops only, so they
legalize on every target. They compute in float32 (float16 inputs are widened, the result is
narrowed back), as MindSpore's layers do.
"""
from __future__ import annotations

import math

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit, normalize_axes
from .registry import rule

_op = relax.op

# Lanczos approximation, g = 7, nine terms (Numerical Recipes / Godfrey's coefficients).
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
# Minimax coefficients of the Stirling correction lgamma(x) - stirling(x), in powers of 1/x^2.
_STIRLING_CORRECTION = (-0.165322962780713e-02, 0.837308034031215e-03, -0.595202931351870e-03,
                        0.793650666825390e-03, -0.277777777760991e-02, 0.833333333333333e-01)
_IGAMMA_SERIES_BLOCK = 16  # the series sums BLOCK**2 terms
_IGAMMA_FRACTION_DEPTH = 32  # float32-exact continued fraction for a up to ~300


class E:
    """A float32 Relax value with arithmetic operators; every operation is emitted at once."""

    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = expr

    @staticmethod
    def wrap(value) -> E:
        return value if isinstance(value, E) else E(relax.const(float(value), "float32"))

    def _bin(self, fn, other, swap=False) -> E:
        a, b = self.expr, E.wrap(other).expr
        return E(emit(fn(b, a) if swap else fn(a, b)))

    def __add__(self, o): return self._bin(_op.add, o)
    def __radd__(self, o): return self._bin(_op.add, o, True)
    def __sub__(self, o): return self._bin(_op.subtract, o)
    def __rsub__(self, o): return self._bin(_op.subtract, o, True)
    def __mul__(self, o): return self._bin(_op.multiply, o)
    def __rmul__(self, o): return self._bin(_op.multiply, o, True)
    def __truediv__(self, o): return self._bin(_op.divide, o)
    def __rtruediv__(self, o): return self._bin(_op.divide, o, True)
    def __neg__(self): return E(emit(_op.negative(self.expr)))
    def __lt__(self, o): return self._bin(_op.less, o)
    def __le__(self, o): return self._bin(_op.less_equal, o)
    def __gt__(self, o): return self._bin(_op.greater, o)
    def __ge__(self, o): return self._bin(_op.greater_equal, o)
    def eq(self, o): return self._bin(_op.equal, o)
    def __and__(self, o): return self._bin(_op.logical_and, o)
    def __or__(self, o): return self._bin(_op.logical_or, o)

    def apply(self, fn) -> E:
        return E(emit(fn(self.expr)))


def where(cond: E, a, b) -> E:
    return E(emit(_op.where(cond.expr, E.wrap(a).expr, E.wrap(b).expr)))


def log(x: E) -> E: return x.apply(_op.log)
def exp(x: E) -> E: return x.apply(_op.exp)
def floor(x: E) -> E: return x.apply(_op.floor)
def sin(x: E) -> E: return x.apply(_op.sin)
def cos(x: E) -> E: return x.apply(_op.cos)
def absolute(x: E) -> E: return x.apply(_op.abs)
def isinf(x: E) -> E: return x.apply(_op.isinf)


def log1p(x: E) -> E:
    """log(1 + x), accurate for small x: log(w) * x / (w - 1) with w = 1 + x rounded."""
    w = x + 1.0
    return where(w.eq(1.0), x, log(w) * x / (w - 1.0))


def _float_input(x, op: str) -> E:
    if dtype_of(x) not in ("float16", "float32"):
        raise CaptureError(f"{op}: input must be float16 or float32, got {dtype_of(x)}")
    return E(x if dtype_of(x) == "float32" else emit(_op.astype(x, "float32")))


def _result(value: E, like) -> relax.Expr:
    return value.expr if dtype_of(like) == "float32" else _op.astype(value.expr, dtype_of(like))


def _lanczos_sum(z: E) -> tuple[E, E]:
    """A(z) = c0 + sum c_i / (z + i) and its derivative A'(z)."""
    total, derivative = E.wrap(_LANCZOS[0]), E.wrap(0.0)
    for i, coefficient in enumerate(_LANCZOS[1:], start=1):
        inverse = 1.0 / (z + float(i))
        total = total + inverse * coefficient
        derivative = derivative - inverse * inverse * coefficient
    return total, derivative


def lgamma_value(x: E) -> E:
    """log|Gamma(x)|: Lanczos for x >= 0.5, Euler's reflection below; +inf at poles and at +-inf."""
    reflect = x < 0.5
    w = where(reflect, 1.0 - x, x)
    z = w - 1.0
    t = z + (_LANCZOS_G + 0.5)
    series, _ = _lanczos_sum(z)
    direct = (z + 0.5) * log(t) - t + log(series) + 0.5 * math.log(2.0 * math.pi)
    frac = x - floor(x)  # |sin(pi x)| = |sin(pi frac)|, without the precision loss of large |x|
    # the unused reflection at integers x >= 0.5 would be inf, and its gradient 0 * inf = nan
    safe = where(reflect, frac, 0.5)
    reflected = math.log(math.pi) - log(absolute(sin(safe * math.pi))) - direct
    pole = (x <= 0.0) & frac.eq(0.0)
    out = where(reflect, reflected, direct)
    return where(pole | isinf(x), math.inf, out)


def digamma_value(x: E) -> E:
    """psi(x): derivative of the Lanczos lgamma for x >= 0.5, reflection below; nan at the poles."""
    reflect = x < 0.5
    w = where(reflect, 1.0 - x, x)
    z = w - 1.0
    t = z + (_LANCZOS_G + 0.5)
    series, derivative = _lanczos_sum(z)
    direct = log(t) + derivative / series - _LANCZOS_G / t
    frac = x - floor(x)
    angle = where(reflect, frac, 0.5) * math.pi  # keeps the unused branch (and its gradient) finite
    reflected = direct - math.pi * cos(angle) / sin(angle)
    pole = (x < 0.0) & frac.eq(0.0)  # at 0 the reflection gives -inf, as the limit from the right
    return where(pole, math.nan, where(reflect, reflected, direct))


@rule("lgamma")
def lgamma(x):
    """Natural log of the absolute value of the gamma function."""
    return _result(lgamma_value(_float_input(x, "lgamma")), x)


@rule("digamma")
def digamma(x):
    """The digamma function psi(x) = d/dx lgamma(x)."""
    return _result(digamma_value(_float_input(x, "digamma")), x)


def _broadcast_pair(a, b, op: str):
    if dtype_of(a) != dtype_of(b):
        raise CaptureError(f"{op}: inputs must have one dtype, got {dtype_of(a)} and {dtype_of(b)}")
    shape = np.broadcast_shapes(static_shape(a), static_shape(b))
    a = a if static_shape(a) == shape else emit(_op.broadcast_to(a, list(shape)))
    b = b if static_shape(b) == shape else emit(_op.broadcast_to(b, list(shape)))
    return _float_input(a, op), _float_input(b, op)


def _prefix_sum(x, block: int):
    """Inclusive prefix sums along the last axis, of length block**2, as two small triangular matmuls:
    sums inside blocks, then the running totals of the blocks. (Relax's cumsum has no kernel on every
    target, and a shifted-add scan multiplies its expression when fused.)"""
    shape = static_shape(x)
    dtype = dtype_of(x)
    blocks = emit(_op.reshape(x, list(shape[:-1]) + [block, block]))
    inclusive = relax.const(np.triu(np.ones((block, block), dtype)))
    exclusive = relax.const(np.triu(np.ones((block, block), dtype), 1))
    within = emit(_op.matmul(blocks, inclusive))
    last = _op.take(within, relax.const(np.array([block - 1], "int64")), axis=len(shape), mode="clip")
    totals = emit(_op.reshape(last, list(shape[:-1]) + [block]))
    offsets = emit(_op.matmul(totals, exclusive))
    return emit(_op.reshape(_op.add(within, _op.expand_dims(offsets, -1)), list(shape)))


def _igamma_series(a: E, x: E, log_prefix: E) -> E:
    """P(a, x) = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n)), terms summed in log space."""
    steps = relax.const(np.arange(1, _IGAMMA_SERIES_BLOCK ** 2 + 1, dtype="float32"))
    a_k = _op.add(_op.expand_dims(a.expr, -1), steps)
    log_ratio = emit(_op.subtract(_op.expand_dims(log(x).expr, -1), _op.log(a_k)))
    log_terms = _prefix_sum(log_ratio, _IGAMMA_SERIES_BLOCK)
    tail = E(emit(_op.sum(_op.exp(log_terms), axis=-1)))
    return exp(log_prefix) * (tail + 1.0) / a


def _igammac_fraction(a: E, x: E, log_prefix: E) -> E:
    """Q(a, x) = x^a e^-x / Gamma(a) / (b0 + a1/(b1 + a2/(b2 + ...))), a_i = -i(i - a), b_i = x + 2i + 1 - a,
    evaluated backwards from a fixed depth."""
    tail = E.wrap(0.0)
    for i in range(_IGAMMA_FRACTION_DEPTH, 0, -1):
        a_i = (a - float(i)) * float(i)  # -i(i - a)
        tail = a_i / (x - a + float(2 * i + 1) + tail)
    return exp(log_prefix) / (x - a + 1.0 + tail)


@rule("igamma")
def igamma(a, x):
    """Lower regularized incomplete gamma P(a, x): a power series for x < a + 1, else 1 - Q(a, x) from
    Legendre's continued fraction. nan where a < 0 or x < 0."""
    a_in = a
    a, x = _broadcast_pair(a, x, "igamma")
    log_prefix = a * log(x) - x - lgamma_value(a)
    series = _igamma_series(a, x, log_prefix)
    fraction = 1.0 - _igammac_fraction(a, x, log_prefix)
    out = where(x < a + 1.0, series, fraction)
    out = where(x.eq(0.0), 0.0, where(a.eq(0.0) | isinf(x), 1.0, out))
    out = where((x < 0.0) | (a < 0.0), math.nan, out)
    return _result(out, a_in)


def _stirling_correction(t: E) -> E:
    inverse = 1.0 / t
    inverse_squared = inverse * inverse
    accum = E.wrap(_STIRLING_CORRECTION[0])
    for coefficient in _STIRLING_CORRECTION[1:]:
        accum = accum * inverse_squared + coefficient
    return accum * inverse


@rule("lbeta")
def lbeta(x, y):
    """log|Beta(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y), with the large Stirling terms cancelled
    analytically when an argument is 8 or more (no catastrophic cancellation)."""
    x_in = x
    x, y = _broadcast_pair(x, y, "lbeta")
    smaller = x < y
    small, large = where(smaller, x, y), where(smaller, y, x)
    total = small + large
    corr_large, corr_total = _stirling_correction(large), _stirling_correction(total)
    log1p_ratio = log1p(small / large)
    both_large = (0.5 * math.log(2.0 * math.pi) - 0.5 * log(large) + _stirling_correction(small) + corr_large
                  - corr_total + (small - 0.5) * log(small / total) - large * log1p_ratio)
    lgamma_small = lgamma_value(small)
    one_large = (lgamma_small + corr_large - corr_total - (total - 0.5) * log1p_ratio - small * log(large)
                 + small)
    both_small = lgamma_small + lgamma_value(large) - lgamma_value(total)
    out = where(small < 8.0, where(large < 8.0, both_small, one_large), both_large)
    return _result(out, x_in)


@rule("logsumexp")
def logsumexp(x, axis=None, keep_dims: bool = False):
    """log(sum(exp(x))) over ``axis`` (None or () for all), shifted by the maximum for stability."""
    if np.dtype(dtype_of(x)).kind != "f":
        raise CaptureError(f"logsumexp: input must be a float tensor, got {dtype_of(x)}")
    axes = normalize_axes(axis, len(static_shape(x)))
    peak = emit(_op.max(x, axis=axes, keepdims=True))
    peak = emit(_op.where(_op.isfinite(peak), peak, relax.const(0, dtype_of(x))))
    out = _op.add(_op.log(_op.sum(_op.exp(_op.subtract(x, peak)), axis=axes, keepdims=True)), peak)
    if keep_dims:
        return out
    shape = static_shape(x)
    kept = [d for i, d in enumerate(shape) if axes is not None and i not in axes]
    return _op.reshape(emit(out), kept)  # (squeeze has no gradient rule)
