"""MindSpore 2.x functional math: comparison aliases (``eq``, ``gt``...), more element-wise functions
(``sinh``, ``asin``, ``trunc``, ``log2``, ``xlogy``...), NaN/inf tests, products (``bmm``, ``addmm``,
``outer``, ``dot``), statistics (``std``, ``var``, ``nansum``, ``count_nonzero``, ``all``/``any``) and
indexing helpers (``index_select``, ``take``, ``tensor_split``, ``argsort``, ``diagonal``)."""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F
from ._dispatch import apply

__all__ = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'logical_xor', 'true_divide', 'floor_divide', 'remainder', 'fmod',
           'float_power', 'sinh', 'cosh', 'asin', 'acos', 'asinh', 'acosh', 'atanh', 'trunc', 'frac', 'log2',
           'log10', 'log1p', 'expm1', 'erfc', 'deg2rad', 'xlogy', 'lerp', 'addcmul', 'addcdiv', 'isnan', 'isinf',
           'isfinite', 'isclose', 'nan_to_num', 'bmm', 'addmm', 'baddbmm', 'outer', 'dot', 't', 'ravel', 'std',
           'var', 'nansum', 'count_nonzero', 'all', 'any', 'index_select', 'take', 'tensor_split', 'argsort',
           'diagonal', 'inv']


def _tensor(value: Any, op: str, name: str = "input") -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _floating(value: Any, op: str, name: str = "input") -> Tensor:
    _tensor(value, op, name)
    return value if value.dtype.is_float else F.cast(value, mstype.float32)


def eq(input, other): return F.equal(input, other)  # noqa: A002,E704 (MindSpore's names)
def ne(input, other): return F.not_equal(input, other)  # noqa: A002,E704
def gt(input, other): return F.greater(input, other)  # noqa: A002,E704
def ge(input, other): return F.greater_equal(input, other)  # noqa: A002,E704
def lt(input, other): return F.less(input, other)  # noqa: A002,E704
def le(input, other): return F.less_equal(input, other)  # noqa: A002,E704
def true_divide(dividend, divisor): return F.div(dividend, divisor)  # noqa: E704
def floor_divide(input, other): return F.floor_div(input, other)  # noqa: A002,E704
def remainder(input, other): return F.fmod_floor(input, other)  # noqa: A002,E704


def logical_xor(input, other):  # noqa: A002
    """True where exactly one of two bool tensors is True."""
    a, b = F.cast(input, mstype.bool_), F.cast(other, mstype.bool_)
    # (a or b) and not (a and b): the CPU code generator cannot compare bools with not_equal
    return F.logical_and(F.logical_or(a, b), F.logical_not(F.logical_and(a, b)))


def fmod(input, other):  # noqa: A002
    """C-style remainder: ``input - trunc(input / other) * other`` (the sign follows ``input``)."""
    quotient = trunc(F.div(input, other)) if isinstance(input, Tensor) else None
    if quotient is None:
        raise TypeError(f"fmod: input must be a Tensor, got {type(input).__name__}")
    return F.sub(input, F.mul(F.cast(quotient, input.dtype) if input.dtype.is_float else quotient, other))


def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` computed in float (float32 here; MindSpore uses float64 where available)."""
    base = _floating(input, "float_power") if isinstance(input, Tensor) else float(input)
    power = _floating(exponent, "float_power", "exponent") if isinstance(exponent, Tensor) else float(exponent)
    return F.pow(base, power)


# composed from exp / log / sqrt / atan: the CPU code generator has no sinh, asin... intrinsics
def sinh(input):  # noqa: A002
    """Element-wise hyperbolic sine, (e^x - e^-x) / 2."""
    x = _floating(input, "sinh")
    return F.mul(F.sub(F.exp(x), F.exp(F.neg(x))), 0.5)


def cosh(input):  # noqa: A002
    """Element-wise hyperbolic cosine, (e^x + e^-x) / 2."""
    x = _floating(input, "cosh")
    return F.mul(F.add(F.exp(x), F.exp(F.neg(x))), 0.5)


def asin(input):  # noqa: A002
    """Element-wise arcsine, atan(x / sqrt(1 - x^2)) (NaN outside [-1, 1])."""
    x = _floating(input, "asin")
    return apply("atan", F.div(x, F.sqrt(F.sub(1.0, F.square(x)))))


def acos(input):  # noqa: A002
    """Element-wise arccosine, pi / 2 - asin(x)."""
    return F.sub(math.pi / 2, asin(input))


def asinh(input):  # noqa: A002
    """Element-wise inverse hyperbolic sine, sign(x) log(|x| + sqrt(x^2 + 1))."""
    x = _floating(input, "asinh")
    magnitude = F.abs(x)
    return F.mul(F.sign(x), F.log(F.add(magnitude, F.sqrt(F.add(F.square(magnitude), 1.0)))))


def acosh(input):  # noqa: A002
    """Element-wise inverse hyperbolic cosine, log(x + sqrt(x^2 - 1)) (NaN below 1)."""
    x = _floating(input, "acosh")
    return F.log(F.add(x, F.sqrt(F.sub(F.square(x), 1.0))))


def atanh(input):  # noqa: A002
    """Element-wise inverse hyperbolic tangent, log((1 + x) / (1 - x)) / 2."""
    x = _floating(input, "atanh")
    return F.mul(F.log(F.div(F.add(x, 1.0), F.sub(1.0, x))), 0.5)


def trunc(input):  # noqa: A002
    """Rounds toward zero element-wise."""
    return apply("trunc", _tensor(input, "trunc"))


def frac(x):
    """The fractional part ``x - trunc(x)`` (sign of ``x``)."""
    return F.sub(x, trunc(x))


def log2(input): return F.div(F.log(_floating(input, "log2")), math.log(2.0))  # noqa: A002,E704
def log10(input): return F.div(F.log(_floating(input, "log10")), math.log(10.0))  # noqa: A002,E704
def log1p(input): return F.log(F.add(_floating(input, "log1p"), 1.0))  # noqa: A002,E704
def expm1(input): return F.sub(F.exp(_floating(input, "expm1")), 1.0)  # noqa: A002,E704
def erfc(input): return F.sub(1.0, F.erf(_floating(input, "erfc")))  # noqa: A002,E704
def deg2rad(x): return F.mul(_floating(x, "deg2rad", "x"), math.pi / 180.0)  # noqa: E704
def inv(x): return F.div(1.0, _floating(x, "inv", "x"))  # noqa: E704


def xlogy(input, other):  # noqa: A002
    """``input * log(other)``, 0 where ``input`` is 0."""
    x, y = _floating(input, "xlogy"), _floating(other, "xlogy", "other")
    zero = F.equal(x, 0.0)
    return F.select(zero, F.zeros_like(F.mul(x, y)), F.mul(x, F.log(F.select(zero, F.ones_like(y), y))))


def lerp(input, end, weight):  # noqa: A002
    """``input + weight * (end - input)``."""
    return F.add(input, F.mul(weight, F.sub(end, input)))


def addcmul(input, tensor1, tensor2, value=1):  # noqa: A002
    """``input + value * tensor1 * tensor2``."""
    return F.add(input, F.mul(F.mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, value=1):  # noqa: A002
    """``input + value * tensor1 / tensor2``."""
    return F.add(input, F.mul(F.div(tensor1, tensor2), value))


def isnan(input): return apply("isnan", _tensor(input, "isnan"))  # noqa: A002,E704
def isinf(input): return apply("isinf", _tensor(input, "isinf"))  # noqa: A002,E704
def isfinite(input): return apply("isfinite", _tensor(input, "isfinite"))  # noqa: A002,E704


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """``|input - other| <= atol + rtol * |other|`` element-wise (NaNs equal when ``equal_nan``)."""
    a, b = _floating(input, "isclose"), _floating(other, "isclose", "other")
    # equal values (infinities included, whose difference is NaN) are close
    close = F.logical_or(F.equal(a, b), F.less_equal(F.abs(F.sub(a, b)), F.add(F.mul(F.abs(b), rtol), atol)))
    if equal_nan:
        close = F.logical_or(close, F.logical_and(isnan(a), isnan(b)))
    return close


def nan_to_num(input, nan=None, posinf=None, neginf=None):  # noqa: A002
    """NaN -> ``nan`` (0), +inf -> ``posinf`` (the dtype's max), -inf -> ``neginf`` (the dtype's min)."""
    x = _tensor(input, "nan_to_num")
    info = np.finfo(mstype.to_numpy(x.dtype))
    out = F.select(isnan(x), F.fill(x.dtype, x.shape, 0.0 if nan is None else nan), x)
    out = F.select(F.logical_and(isinf(out), F.greater(out, 0.0)),
                   F.fill(x.dtype, x.shape, float(info.max) if posinf is None else posinf), out)
    return F.select(F.logical_and(isinf(out), F.less(out, 0.0)),
                    F.fill(x.dtype, x.shape, float(info.min) if neginf is None else neginf), out)


def bmm(input_x, mat2):
    """Batched matrix product of (..., n, m) and (..., m, p)."""
    if _tensor(input_x, "bmm", "input_x").ndim < 3 or _tensor(mat2, "bmm", "mat2").ndim < 3:
        raise ValueError(f"bmm: inputs must be at least 3-D, got shapes {input_x.shape} and {mat2.shape}")
    return F.matmul(input_x, mat2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)``."""
    return F.add(F.mul(input, beta), F.mul(F.matmul(mat1, mat2), alpha))


def baddbmm(input, batch1, batch2, beta=1, alpha=1):  # noqa: A002
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    return F.add(F.mul(input, beta), F.mul(bmm(batch1, batch2), alpha))


def outer(input, vec2):  # noqa: A002
    """Outer product of two 1-D tensors."""
    return F.mul(F.reshape(_tensor(input, "outer"), (-1, 1)), F.reshape(_tensor(vec2, "outer", "vec2"), (1, -1)))


def dot(input, other):  # noqa: A002
    """Inner product of two 1-D tensors."""
    if _tensor(input, "dot").ndim != 1 or _tensor(other, "dot", "other").ndim != 1:
        raise ValueError(f"dot: inputs must be 1-D, got shapes {input.shape} and {other.shape}")
    return F.reduce_sum(F.mul(input, other))


def t(input):  # noqa: A002
    """A 2-D tensor transposed (1-D unchanged)."""
    if _tensor(input, "t").ndim > 2:
        raise ValueError(f"t: input must be at most 2-D, got shape {input.shape}")
    return F.transpose(input, (1, 0)) if input.ndim == 2 else input


def ravel(input):  # noqa: A002
    """``input`` flattened to 1-D."""
    return F.reshape(_tensor(input, "ravel"), (-1,))


def _axes(x: Tensor, axis) -> tuple[int, ...]:
    if axis is None or axis == ():
        return tuple(range(x.ndim))
    return tuple(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis))


def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Variance ``sum((x - mean)^2) / (n - ddof)`` over ``axis`` (every axis when None)."""
    x = _floating(input, "var")
    axes = _axes(x, axis)
    count = 1
    for a in axes:
        count *= x.shape[a]
    centred = F.sub(x, F.mean(x, axes, True))
    return F.div(F.reduce_sum(F.square(centred), axes, keepdims), float(builtins.max(count - int(ddof), 0)))


def std(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """Standard deviation ``sqrt(var(input, axis, ddof, keepdims))``."""
    return F.sqrt(var(input, axis, ddof, keepdims))


def nansum(input, axis=None, keepdims=False, *, dtype=None):  # noqa: A002
    """Sum over ``axis`` treating NaN as 0."""
    x = _tensor(input, "nansum")
    if dtype is not None:
        x = F.cast(x, dtype)
    cleaned = F.select(isnan(x), F.zeros_like(x), x) if x.dtype.is_float else x
    return F.reduce_sum(cleaned, axis, keepdims)


def count_nonzero(x, axis=(), keep_dims=False, dtype=mstype.int32):
    """Number of non-zero elements over ``axis`` (every axis for ())."""
    nonzero = F.cast(F.not_equal(_tensor(x, "count_nonzero", "x"), 0), mstype.int32)
    return F.cast(F.reduce_sum(nonzero, None if axis == () else axis, keep_dims), dtype)


def all(input, axis=None, keep_dims=False):  # noqa: A001,A002 (MindSpore's names)
    """Whether every element over ``axis`` is true."""
    truth = F.cast(F.not_equal(_tensor(input, "all"), 0), mstype.int32)
    return F.cast(F.amin(truth, axis, keep_dims), mstype.bool_)


def any(input, axis=None, keep_dims=False):  # noqa: A001,A002
    """Whether some element over ``axis`` is true."""
    truth = F.cast(F.not_equal(_tensor(input, "any"), 0), mstype.int32)
    return F.cast(F.amax(truth, axis, keep_dims), mstype.bool_)


def index_select(input, axis, index):  # noqa: A002
    """The slices of ``input`` along ``axis`` at the 1-D int ``index``."""
    if _tensor(index, "index_select", "index").ndim != 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {index.shape}")
    return F.gather(_tensor(input, "index_select"), index, axis)


def take(input, index):  # noqa: A002
    """Elements of the flattened ``input`` at ``index`` (any shape; the output has its shape)."""
    flat = ravel(input)
    shape = _tensor(index, "take", "index").shape
    return F.reshape(F.gather(flat, F.reshape(index, (-1,)), 0), shape)


def tensor_split(input, indices_or_sections, axis=0):  # noqa: A002
    """``input`` split along ``axis`` into ``indices_or_sections`` nearly equal pieces (the first ones one
    longer) or at the given indices."""
    from .array_ops import split

    x = _tensor(input, "tensor_split")
    length = x.shape[axis]
    if isinstance(indices_or_sections, int) and not isinstance(indices_or_sections, bool):
        if indices_or_sections <= 0:
            raise ValueError(f"tensor_split: sections must be positive, got {indices_or_sections}")
        base, extra = divmod(length, indices_or_sections)
        sizes = [base + 1] * extra + [base] * (indices_or_sections - extra)
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), length) for i in indices_or_sections] + [length]
        sizes = [builtins.max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
    if 0 in sizes:
        raise ValueError(f"tensor_split: empty pieces are not supported, got sizes {sizes}")
    return split(x, sizes, axis)


def argsort(input, axis=-1, descending=False):  # noqa: A002
    """int32 indices that sort ``input`` along ``axis`` (stable)."""
    from .selection_ops import sort

    return sort(input, axis, descending)[1]


def diagonal(input, offset=0, dim1=0, dim2=1):  # noqa: A002
    """The ``offset`` diagonal of the (dim1, dim2) planes, moved to the last axis."""
    x = _tensor(input, "diagonal")
    a, b = dim1 % x.ndim, dim2 % x.ndim
    if a == b:
        raise ValueError(f"diagonal: dim1 and dim2 must differ, got {dim1} and {dim2}")
    rest = [d for d in range(x.ndim) if d not in (a, b)]
    moved = F.transpose(x, tuple(rest + [a, b]))
    rows, cols = x.shape[a], x.shape[b]
    start_r, start_c = (0, offset) if offset >= 0 else (-offset, 0)
    count = builtins.max(builtins.min(rows - start_r, cols - start_c), 0)
    if count == 0:
        raise ValueError(f"diagonal: offset {offset} selects no element of a {rows}x{cols} plane")
    flat = F.reshape(moved, tuple(x.shape[d] for d in rest) + (rows * cols,))
    positions = Tensor._from_numpy((np.arange(count) + start_r) * cols + np.arange(count) + start_c)
    return F.gather(flat, positions, len(rest))
