"""MindSpore's functional special functions, logsumexp and matrix ops (diagonals, det, inverse)."""
from __future__ import annotations

from typing import Any

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['lgamma', 'digamma', 'igamma', 'igammac', 'lbeta', 'logsumexp', 'matrix_diag', 'matrix_diag_part',
           'matrix_set_diag', 'det', 'matrix_determinant', 'inverse', 'matrix_inverse']

_HALF_OR_SINGLE = (mstype.float16, mstype.float32)


def _float(value: Any, op: str, name: str, allowed=_HALF_OR_SINGLE) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    if value.dtype not in allowed:
        raise TypeError(f"{op}: {name} must have dtype in {[str(d) for d in allowed]}, got {value.dtype}")
    return value


def _same_dtype(op: str, x: Tensor, y: Tensor) -> None:
    if x.dtype != y.dtype:
        raise TypeError(f"{op}: inputs must have one dtype, got {x.dtype} and {y.dtype}")


def lgamma(input):  # noqa: A002 (MindSpore's argument name)
    """log|Gamma(x)| element-wise (Lanczos approximation; +inf at non-positive integers and +-inf).

    Raises:
        TypeError: input not a float16/float32 Tensor.
    """
    return apply("lgamma", _float(input, "lgamma", "input"))


def digamma(input):  # noqa: A002
    """The digamma function psi(x) = d lgamma(x) / dx element-wise (nan at non-positive integers).

    Raises:
        TypeError: input not a float16/float32 Tensor.
    """
    return apply("digamma", _float(input, "digamma", "input"))


def igamma(input, other):  # noqa: A002
    """Lower regularized incomplete gamma P(a, x) with a = ``input``, x = ``other`` (broadcast).

    Raises:
        TypeError: inputs not float16/float32 Tensors of one dtype.
    """
    _float(input, "igamma", "input"), _float(other, "igamma", "other")
    _same_dtype("igamma", input, other)
    return apply("igamma", input, other)


def igammac(input, other):  # noqa: A002
    """Upper regularized incomplete gamma Q(a, x) = 1 - P(a, x)."""
    return 1 - igamma(input, other)


def lbeta(x, y):
    """log|Beta(x, y)| = lgamma(x) + lgamma(y) - lgamma(x + y), accurate for large arguments too.

    Raises:
        TypeError: inputs not float16/float32 Tensors of one dtype.
    """
    _float(x, "lbeta", "x"), _float(y, "lbeta", "y")
    _same_dtype("lbeta", x, y)
    return apply("lbeta", x, y)


def logsumexp(input, axis, keep_dims: bool = False):  # noqa: A002
    """log(sum(exp(input))) over ``axis`` (an int, a tuple of ints, or () for every axis).

    Raises:
        TypeError: input not a float Tensor, axis not an int/tuple/list, keep_dims not a bool.
    """
    _float(input, "logsumexp", "input", mstype.float_type)
    if isinstance(axis, bool) or not isinstance(axis, (int, tuple, list)):
        raise TypeError(f"logsumexp: axis must be an int, a tuple or a list, got {type(axis).__name__}")
    if not isinstance(keep_dims, bool):
        raise TypeError(f"logsumexp: keep_dims must be a bool, got {type(keep_dims).__name__}")
    axis = tuple(axis) if isinstance(axis, list) else axis
    for a in (axis if isinstance(axis, tuple) else (axis,)):
        if not -max(input.ndim, 1) <= a < max(input.ndim, 1):
            raise ValueError(f"logsumexp: axis must be in [{-input.ndim}, {input.ndim}), got {a}")
    return apply("logsumexp", input, axis, keep_dims)


def _tensor(value: Any, op: str, name: str, min_rank: int) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    if value.ndim < min_rank:
        raise ValueError(f"{op}: {name} must have at least {min_rank} dimension(s), got shape {value.shape}")
    return value


def matrix_diag(x):
    """(..., N) -> (..., N, N): ``x`` on the main diagonal, zeros elsewhere."""
    return apply("matrix_diag", _tensor(x, "matrix_diag", "x", 1))


def matrix_diag_part(x):
    """(..., M, N) -> (..., min(M, N)): the main diagonal."""
    return apply("matrix_diag_part", _tensor(x, "matrix_diag_part", "x", 2))


def matrix_set_diag(x, diagonal):
    """``x`` (..., M, N) with its main diagonal replaced by ``diagonal`` (..., min(M, N)).

    Raises:
        TypeError: not Tensors, or dtypes differ.
        ValueError: x of rank < 2, or diagonal of the wrong shape.
    """
    _tensor(x, "matrix_set_diag", "x", 2)
    _tensor(diagonal, "matrix_set_diag", "diagonal", 1)
    _same_dtype("matrix_set_diag", x, diagonal)
    expected = x.shape[:-2] + (min(x.shape[-2:]),)
    if diagonal.shape != expected:
        raise ValueError(f"matrix_set_diag: diagonal must have shape {expected}, got {diagonal.shape}")
    return apply("matrix_set_diag", x, diagonal)


def _square(x, op: str) -> Tensor:
    _tensor(x, op, "input", 2)
    _float(x, op, "input", mstype.float_type)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: input must be (..., N, N) square matrices, got shape {x.shape}")
    return x


def det(input):  # noqa: A002
    """Determinant of each square matrix of ``input`` (..., N, N) -> (...)."""
    return apply("det", _square(input, "det"))


def inverse(input):  # noqa: A002
    """Inverse of each square matrix of ``input`` (..., N, N)."""
    return apply("inverse", _square(input, "inverse"))


matrix_determinant = det
matrix_inverse = inverse
