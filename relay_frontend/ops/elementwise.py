"""Lowering rules for element-wise arithmetic, comparison and activation ops."""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of
from .common import cast, emit, promote
from .registry import rule

_op = relax.op


def _binary(name: str, fn) -> None:
    rule(name)(lambda a, b: fn(*promote(a, b)))


for _name, _fn in {
    "add": _op.add, "sub": _op.subtract, "mul": _op.multiply, "maximum": _op.maximum,
    "minimum": _op.minimum, "equal": _op.equal, "not_equal": _op.not_equal, "less": _op.less,
    "less_equal": _op.less_equal, "greater": _op.greater, "greater_equal": _op.greater_equal,
    "floor_div": _op.floor_divide, "mod": _op.floor_mod, "logical_and": _op.logical_and,
    "logical_or": _op.logical_or,
}.items():
    _binary(_name, _fn)


@rule("div")
def div(a, b):
    """True division: integer operands give float32, as MindSpore's ``ops.div``."""
    a, b = promote(a, b)
    if np.dtype(dtype_of(a)).kind != "f":
        a, b = cast(a, "float32"), cast(b, "float32")
    return _op.divide(a, b)


@rule("pow")
def power(a, b):
    a, b = promote(a, b)
    return _op.power(a, b)


for _name, _fn in {
    "neg": _op.negative, "abs": _op.abs, "floor": _op.floor, "ceil": _op.ceil, "round": _op.round,
    "sign": _op.sign, "square": _op.square, "logical_not": _op.logical_not, "relu": _op.nn.relu,
    "trunc": _op.trunc, "isnan": _op.isnan, "isinf": _op.isinf, "isfinite": _op.isfinite,
}.items():
    rule(_name)(_fn)


def _transcendental(fn):
    """float16 inputs are computed in float32 and rounded once, as MindSpore's kernels do."""
    def lower(x):
        if dtype_of(x) == "float16":
            return cast(emit(fn(cast(x, "float32"))), "float16")
        return fn(x)
    return lower


for _name, _fn in {
    "exp": _op.exp, "log": _op.log, "sqrt": _op.sqrt, "rsqrt": _op.rsqrt, "sin": _op.sin, "cos": _op.cos,
    "tanh": _op.tanh, "sigmoid": _op.sigmoid, "erf": _op.erf, "atan": _op.atan, "tan": _op.tan,
}.items():
    rule(_name)(_transcendental(_fn))


@rule("cast")
def astype(x, dtype: str):
    return cast(x, dtype)


@rule("clip")
def clip(x, min_value, max_value):
    out = x
    if min_value is not None:
        out = _op.maximum(*promote(out, min_value))
        if max_value is not None:
            out = emit(out)  # promote reads its dtype below
    if max_value is not None:
        out = _op.minimum(*promote(out, max_value))
    return out


@rule("where")
def where(condition, x, y):
    x, y = promote(x, y)
    return _op.where(condition, x, y)
