"""``mindspore.numpy`` math: element-wise arithmetic and functions, matrix products, reductions.

Every function dispatches to ``aotnn.ops``: run eagerly (compiled) on concrete tensors, captured inside
``construct``.
"""
from __future__ import annotations

import builtins
from typing import Any

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._convert import as_tensor, float_input, operand, promote, with_dtype

__all__ = ['add', 'subtract', 'multiply', 'divide', 'true_divide', 'floor_divide', 'remainder', 'mod', 'power',
           'float_power', 'maximum', 'minimum', 'negative', 'positive', 'absolute', 'abs', 'square', 'sqrt',
           'reciprocal', 'exp', 'log', 'log2', 'log10', 'log1p', 'expm1', 'sin', 'cos', 'tan', 'tanh', 'sinh',
           'cosh', 'floor', 'ceil', 'sign', 'clip', 'matmul', 'dot', 'outer', 'tensordot', 'sum', 'mean', 'amax',
           'amin', 'max', 'min', 'var', 'std', 'argmax', 'argmin', 'cumsum']


def _binary(name: str, op, floats: bool = False):
    def function(x1, x2, dtype=None):
        a, b = operand(x1, f"{name}: x1"), operand(x2, f"{name}: x2")
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = as_tensor(a, f"{name}: x1")
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            a, b = promote(a, b)
        if floats:
            a = float_input(a) if isinstance(a, Tensor) else float(a)
            b = float_input(b) if isinstance(b, Tensor) else float(b)
        return with_dtype(op(a, b), dtype)
    function.__name__ = name
    function.__doc__ = (f"Element-wise ``{name}`` of ``x1`` and ``x2`` (Tensors, numbers or array-likes, broadcast)"
                        f"{', in float32 for int inputs' if floats else ''}; cast to ``dtype`` when given.")
    return function


def _unary(name: str, op, floats: bool = True):
    def function(x, dtype=None):
        x = as_tensor(x, f"{name}: x")
        return with_dtype(op(float_input(x) if floats else x), dtype)
    function.__name__ = name
    function.__doc__ = (f"Element-wise ``{name}`` of ``x``{' (int inputs in float32)' if floats else ''}; "
                        f"cast to ``dtype`` when given.")
    return function


add = _binary("add", ops.add)
subtract = _binary("subtract", ops.sub)
multiply = _binary("multiply", ops.mul)
divide = _binary("divide", ops.div, floats=True)
true_divide = divide
floor_divide = _binary("floor_divide", ops.floor_div)
remainder = _binary("remainder", ops.fmod_floor)
mod = remainder
power = _binary("power", ops.pow)
float_power = _binary("float_power", ops.pow, floats=True)
maximum = _binary("maximum", ops.maximum)
minimum = _binary("minimum", ops.minimum)

negative = _unary("negative", ops.neg, floats=False)
absolute = _unary("absolute", ops.abs, floats=False)
abs = absolute  # noqa: A001 (numpy's name)
square = _unary("square", ops.square, floats=False)
sign = _unary("sign", ops.sign, floats=False)
sqrt = _unary("sqrt", ops.sqrt)
exp = _unary("exp", ops.exp)
log = _unary("log", ops.log)
log2 = _unary("log2", lambda x: ops.div(ops.log(x), 0.6931471805599453))
log10 = _unary("log10", lambda x: ops.div(ops.log(x), 2.302585092994046))
log1p = _unary("log1p", lambda x: ops.log(ops.add(x, 1.0)))
expm1 = _unary("expm1", lambda x: ops.sub(ops.exp(x), 1.0))
reciprocal = _unary("reciprocal", lambda x: ops.div(1.0, x))
sin = _unary("sin", ops.sin)
cos = _unary("cos", ops.cos)
tan = _unary("tan", lambda x: ops.div(ops.sin(x), ops.cos(x)))
tanh = _unary("tanh", ops.tanh)
sinh = _unary("sinh", lambda x: ops.mul(ops.sub(ops.exp(x), ops.exp(ops.neg(x))), 0.5))
cosh = _unary("cosh", lambda x: ops.mul(ops.add(ops.exp(x), ops.exp(ops.neg(x))), 0.5))
floor = _unary("floor", ops.floor)
ceil = _unary("ceil", ops.ceil)


def positive(a, dtype=None):
    """``a`` itself (cast to ``dtype`` when given)."""
    return with_dtype(as_tensor(a, "positive: a"), dtype)


def clip(x, xmin, xmax, dtype=None):
    """``x`` limited to [xmin, xmax] (either bound may be None, not both).

    Raises:
        ValueError: both bounds None.
    """
    if xmin is None and xmax is None:
        raise ValueError("clip: xmin and xmax cannot both be None")
    x = as_tensor(x, "clip: x")
    out = x
    if xmin is not None:
        out = ops.maximum(out, operand(xmin, "clip: xmin"))
    if xmax is not None:
        out = ops.minimum(out, operand(xmax, "clip: xmax"))
    return with_dtype(out, dtype)


def matmul(x1, x2, dtype=None):
    """Matrix product of ``x1`` and ``x2`` (batched over leading axes; 1-D operands as vectors)."""
    a, b = promote(as_tensor(x1, "matmul: x1"), as_tensor(x2, "matmul: x2"))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: operands must not be scalars")
    squeeze = []
    if a.ndim == 1:
        a, squeeze = ops.reshape(a, (1, -1)), squeeze + [-2]
    if b.ndim == 1:
        b, squeeze = ops.reshape(b, (-1, 1)), squeeze + [-1]
    out = ops.matmul(a, b)
    if squeeze:
        out = ops.reshape(out, tuple(out.shape[:-2]) + tuple(
            s for axis, s in zip((-2, -1), out.shape[-2:]) if axis not in squeeze))
    return with_dtype(out, dtype)


def dot(a, b):
    """numpy's ``dot``: products of scalars, inner product of vectors, matrix product, and for N-D ``a`` a
    sum over its last axis and the second-to-last of ``b``."""
    a, b = promote(as_tensor(a, "dot: a"), as_tensor(b, "dot: b"))
    if a.ndim == 0 or b.ndim == 0:
        return ops.mul(a, b)
    if b.ndim <= 2:
        return matmul(a, b)
    return tensordot(a, b, ((a.ndim - 1,), (b.ndim - 2,)))


def outer(a, b):
    """Outer product of the flattened ``a`` and ``b``."""
    a, b = as_tensor(a, "outer: a"), as_tensor(b, "outer: b")
    return ops.mul(ops.reshape(a, (-1, 1)), ops.reshape(b, (1, -1)))


def tensordot(a, b, axes=2):
    """Sum of products over ``axes``: an int N (the last N of ``a`` with the first N of ``b``) or a pair of
    axis sequences.

    Raises:
        ValueError: summed axes of different lengths.
    """
    a, b = promote(as_tensor(a, "tensordot: a"), as_tensor(b, "tensordot: b"))
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    axes_a = [x % a.ndim for x in axes_a]
    axes_b = [x % b.ndim for x in axes_b]
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j] for i, j in zip(axes_a, axes_b)):
        raise ValueError(f"tensordot: summed axes {axes_a} of {a.shape} and {axes_b} of {b.shape} do not match")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [j for j in range(b.ndim) if j not in axes_b]
    size = 1
    for i in axes_a:
        size *= a.shape[i]
    left = ops.reshape(ops.transpose(a, tuple(free_a + axes_a)), (-1, size))
    right = ops.reshape(ops.transpose(b, tuple(axes_b + free_b)), (size, -1))
    return ops.reshape(ops.matmul(left, right), tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


def _axis(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def sum(a, axis=None, dtype=None, keepdims=False, initial=None):  # noqa: A001
    """Sum over ``axis`` (every axis when None), plus ``initial``; ints and bools sum in int64 as numpy."""
    a = as_tensor(a, "sum: a")
    if dtype is None and not a.dtype.is_float:
        dtype = mstype.int64
    out = ops.reduce_sum(a if dtype is None else ops.cast(a, dtype), _axis(axis), keepdims)
    return out if initial is None else ops.add(out, initial)


def mean(a, axis=None, keepdims=False, dtype=None):
    """Mean over ``axis``, computed in float32 for ints and cast back to the input dtype (as MindSpore)."""
    a = as_tensor(a, "mean: a")
    out = ops.mean(float_input(a), _axis(axis), keepdims)
    return with_dtype(out, dtype if dtype is not None else (None if a.dtype.is_float else a.dtype))


def _extreme(name: str, op):
    def function(a, axis=None, keepdims=False, initial=None, where=True):
        if where is not True:
            raise ValueError(f"{name}: only where=True is supported")
        out = op(as_tensor(a, f"{name}: a"), _axis(axis), keepdims)
        return out if initial is None else (ops.maximum if name in ("amax", "max") else ops.minimum)(out, initial)
    function.__name__ = name
    function.__doc__ = f"The {'largest' if 'max' in name else 'smallest'} element over ``axis``, against ``initial``."
    return function


amax = max = _extreme("amax", ops.amax)  # noqa: A001
amin = min = _extreme("amin", ops.amin)  # noqa: A001


def var(x, axis=None, ddof=0, keepdims=False):
    """Variance over ``axis``: ``sum((x - mean)**2) / (n - ddof)`` in float32 for int inputs."""
    x = float_input(as_tensor(x, "var: x"))
    axes = tuple(range(x.ndim)) if axis is None else (axis,) if isinstance(axis, int) else tuple(axis)
    count = 1
    for a in axes:
        count *= x.shape[a]
    centred = ops.sub(x, ops.mean(x, axes, True))
    return ops.div(ops.reduce_sum(ops.square(centred), axes, keepdims), float(builtins.max(count - ddof, 0)))


def std(x, axis=None, ddof=0, keepdims=False):
    """Standard deviation: ``sqrt(var(x, axis, ddof, keepdims))``."""
    return ops.sqrt(var(x, axis, ddof, keepdims))


def argmax(a, axis=None):
    """Index of the largest element (of the flattened ``a`` when ``axis`` is None); int64."""
    return ops.argmax(as_tensor(a, "argmax: a"), axis)


def argmin(a, axis=None):
    """Index of the smallest element (of the flattened ``a`` when ``axis`` is None); int32, as MindSpore
    2.x's ``mindspore.numpy.argmin`` (its ``argmax`` gives int64)."""
    return ops.cast(ops.argmin(as_tensor(a, "argmin: a"), axis), mstype.int32)


def cumsum(a, axis=None, dtype=None):
    """Running sum along ``axis`` (of the flattened ``a`` when None), in ``dtype`` when given."""
    a = as_tensor(a, "cumsum: a")
    if axis is None:
        a, axis = ops.reshape(a, (-1,)), 0
    return ops.cumsum(a, axis, dtype)
