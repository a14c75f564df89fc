"""Lowering rules for activation functions.

Each one is composed from element-wise Relax ops that ``relax.transform.Gradient`` can
differentiate where such a form exists (``maximum``/``minimum``/``where`` rather than ``clip``),
so that training graphs through these activations need no extra gradient rules. Transcendental
ones compute float16 inputs in float32 and cast the result back, as MindSpore's kernels do.
"""
from __future__ import annotations

import math

from tvm import relax

from ..capture import dtype_of, static_shape
from .common import cast, emit
from .registry import rule

_op = relax.op


def _const(value: float, like: relax.Expr) -> relax.Expr:
    return relax.const(value, dtype_of(like))


def _wide(x: relax.Expr) -> relax.Expr:
    """``x`` in float32 when it is float16 (for exp/log/tanh/erf chains), else unchanged."""
    return cast(x, "float32") if dtype_of(x) == "float16" else x


def _narrow(y: relax.Expr, dtype: str) -> relax.Expr:
    y = emit(y)
    return y if dtype_of(y) == dtype else _op.astype(y, dtype)


def _softplus(x: relax.Expr) -> relax.Expr:
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log(1 + exp(-|x|))``."""
    tail = emit(_op.log(_op.add(_const(1.0, x), _op.exp(_op.negative(_op.abs(x))))))
    return _op.add(_op.maximum(x, _const(0.0, x)), tail)


@rule("relu6")
def relu6(x):
    """``min(max(x, 0), 6)``."""
    return _op.minimum(emit(_op.maximum(x, _const(0.0, x))), _const(6.0, x))


@rule("gelu")
def gelu(x, approximate: bool = True):
    """GELU: the tanh approximation ``0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))`` when
    ``approximate``, else the exact ``0.5x(1 + erf(x / sqrt(2)))``.

    The tanh form is computed as the identical ``x * sigmoid(2u)``: ``1 + tanh(u)`` cancels to 0 for
    very negative inputs where the sigmoid keeps the tiny true value, as MindSpore's kernel does.
    """
    dtype, x = dtype_of(x), _wide(x)
    if approximate:
        cube = emit(_op.multiply(x, _op.multiply(x, x)))
        inner = emit(_op.multiply(_op.add(x, _op.multiply(cube, _const(0.044715, x))),
                                  _const(2.0 * math.sqrt(2.0 / math.pi), x)))
        return _narrow(_op.multiply(x, emit(_op.sigmoid(inner))), dtype)
    gate = emit(_op.add(_const(1.0, x), _op.erf(_op.multiply(x, _const(1.0 / math.sqrt(2.0), x)))))
    return _narrow(_op.multiply(_op.multiply(x, _const(0.5, x)), gate), dtype)


@rule("fast_gelu")
def fast_gelu(x):
    """``x / (1 + exp(-1.702|x|)) * exp(0.851(x - |x|))``."""
    dtype, x = dtype_of(x), _wide(x)
    ax = emit(_op.abs(x))
    den = emit(_op.add(_const(1.0, x), _op.exp(_op.multiply(ax, _const(-1.702, x)))))
    tail = emit(_op.exp(_op.multiply(_op.subtract(x, ax), _const(0.851, x))))
    return _narrow(_op.multiply(_op.divide(x, den), tail), dtype)


@rule("elu")
def elu(x, alpha: float = 1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    dtype, x = dtype_of(x), _wide(x)
    zero = _const(0.0, x)
    neg = emit(_op.multiply(_op.subtract(_op.exp(_op.minimum(x, zero)), _const(1.0, x)), _const(alpha, x)))
    return _narrow(_op.where(emit(_op.greater(x, zero)), x, neg), dtype)


@rule("celu")
def celu(x, alpha: float = 1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    dtype, x = dtype_of(x), _wide(x)
    zero = _const(0.0, x)
    scaled = emit(_op.divide(_op.minimum(x, zero), _const(alpha, x)))
    neg = emit(_op.multiply(_op.subtract(_op.exp(scaled), _const(1.0, x)), _const(alpha, x)))
    return _narrow(_op.add(_op.maximum(x, zero), _op.minimum(neg, zero)), dtype)


@rule("leaky_relu")
def leaky_relu(x, alpha: float = 0.2):
    """``x`` where ``x >= 0``, else ``alpha * x``."""
    return _op.where(emit(_op.greater_equal(x, _const(0.0, x))), x, emit(_op.multiply(x, _const(alpha, x))))


@rule("prelu")
def prelu(x, weight):
    """``x`` where ``x >= 0``, else ``weight[c] * x`` with ``c`` the channel (axis 1; the only axis of
    a 1-D input). ``weight`` has one element per channel or a single shared one."""
    rank = len(static_shape(x))
    weight = cast(weight, dtype_of(x))
    if rank >= 2:
        shape = [1] * rank
        shape[1] = static_shape(weight)[0]
        weight = emit(_op.reshape(weight, shape))
    return _op.where(emit(_op.greater_equal(x, _const(0.0, x))), x, emit(_op.multiply(x, weight)))


@rule("hswish")
def hswish(x):
    """``x * relu6(x + 3) / 6``."""
    gate = emit(_op.minimum(_op.maximum(_op.add(x, _const(3.0, x)), _const(0.0, x)), _const(6.0, x)))
    return _op.multiply(x, emit(_op.divide(gate, _const(6.0, x))))


@rule("hsigmoid")
def hsigmoid(x):
    """``max(0, min(1, (x + 3) / 6))``."""
    scaled = emit(_op.divide(_op.add(x, _const(3.0, x)), _const(6.0, x)))
    return _op.maximum(emit(_op.minimum(scaled, _const(1.0, x))), _const(0.0, x))


@rule("hshrink")
def hshrink(x, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    keep = emit(_op.greater(_op.abs(x), _const(lambd, x)))
    return _op.where(keep, x, emit(_op.zeros_like(x)))


@rule("softshrink")
def softshrink(x, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    lam = _const(lambd, x)
    upper = emit(_op.maximum(_op.subtract(x, lam), _const(0.0, x)))
    lower = emit(_op.minimum(_op.add(x, lam), _const(0.0, x)))
    return _op.add(upper, lower)


@rule("logsigmoid")
def logsigmoid(x):
    """``log(1 / (1 + exp(-x)))``, computed as ``-softplus(-x)``."""
    dtype, x = dtype_of(x), _wide(x)
    return _narrow(_op.negative(emit(_softplus(emit(_op.negative(x))))), dtype)


@rule("softplus")
def softplus(x):
    """``log(1 + exp(x))``."""
    dtype, x = dtype_of(x), _wide(x)
    return _narrow(_softplus(x), dtype)


@rule("silu")
def silu(x):
    """``x * sigmoid(x)``."""
    dtype, x = dtype_of(x), _wide(x)
    return _narrow(_op.multiply(x, emit(_op.sigmoid(x))), dtype)


@rule("mish")
def mish(x):
    """``x * tanh(softplus(x))``."""
    dtype, x = dtype_of(x), _wide(x)
    return _narrow(_op.multiply(x, emit(_op.tanh(emit(_softplus(x))))), dtype)


@rule("softsign")
def softsign(x):
    """``x / (1 + |x|)``."""
    return _op.divide(x, emit(_op.add(_op.abs(x), _const(1.0, x))))


@rule("hardtanh")
def hardtanh(x, min_val: float = -1.0, max_val: float = 1.0):
    """``min(max(x, min_val), max_val)``."""
    return _op.minimum(emit(_op.maximum(x, _const(min_val, x))), _const(max_val, x))


@rule("threshold")
def threshold(x, thr: float, value: float):
    """``x`` where ``x > thr``, else ``value``."""
    fill = emit(_op.full_like(x, _const(value, x)))
    return _op.where(emit(_op.greater(x, _const(thr, x))), x, fill)
