"""``mindspore.numpy`` comparisons and logic: bool results, broadcast operands."""
from __future__ import annotations

from .. import ops
from ..common.tensor import Tensor
from ._convert import as_tensor, float_input, operand, with_dtype

__all__ = ['equal', 'not_equal', 'less', 'less_equal', 'greater', 'greater_equal', 'logical_and', 'logical_or',
           'logical_xor', 'logical_not', 'isnan', 'isinf', 'isfinite', 'isclose']


def _compare(name: str, op):
    def function(x1, x2, dtype=None):
        a, b = operand(x1, f"{name}: x1"), operand(x2, f"{name}: x2")
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            a = as_tensor(a, f"{name}: x1")
        return with_dtype(op(a, b), dtype)
    function.__name__ = name
    function.__doc__ = f"Element-wise ``{name}`` of ``x1`` and ``x2`` (broadcast): a bool Tensor."
    return function


equal = _compare("equal", ops.equal)
not_equal = _compare("not_equal", ops.not_equal)
less = _compare("less", ops.less)
less_equal = _compare("less_equal", ops.less_equal)
greater = _compare("greater", ops.greater)
greater_equal = _compare("greater_equal", ops.greater_equal)
logical_and = _compare("logical_and", ops.logical_and)
logical_or = _compare("logical_or", ops.logical_or)
logical_xor = _compare("logical_xor", ops.logical_xor)


def logical_not(a, dtype=None):
    """Element-wise NOT of a bool Tensor."""
    return with_dtype(ops.logical_not(as_tensor(a, "logical_not: a")), dtype)


def isnan(x, dtype=None):
    """True where ``x`` is NaN."""
    x = as_tensor(x, "isnan: x")
    return with_dtype(ops.not_equal(x, x), dtype)


def isinf(x, dtype=None):
    """True where ``x`` is +inf or -inf."""
    x = float_input(as_tensor(x, "isinf: x"))
    return with_dtype(ops.equal(ops.abs(x), float("inf")), dtype)


def isfinite(x, dtype=None):
    """True where ``x`` is neither NaN nor infinite."""
    x = float_input(as_tensor(x, "isfinite: x"))
    return with_dtype(ops.less(ops.abs(x), float("inf")), dtype)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` element-wise (NaNs equal when ``equal_nan``)."""
    a, b = float_input(as_tensor(a, "isclose: a")), float_input(as_tensor(b, "isclose: b"))
    # equal values (infinities included, whose difference is NaN) are close
    close = ops.logical_or(ops.equal(a, b),
                           ops.less_equal(ops.abs(ops.sub(a, b)), ops.add(ops.mul(ops.abs(b), rtol), atol)))
    if equal_nan:
        close = ops.logical_or(close, ops.logical_and(ops.not_equal(a, a), ops.not_equal(b, b)))
    return close
