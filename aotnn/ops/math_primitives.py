"""MindSpore's primitives for special functions and matrix determinant/inverse."""
from __future__ import annotations

from . import math_ops as M
from .primitives import Primitive

__all__ = ['Lgamma', 'Digamma', 'Igamma', 'Igammac', 'MatrixDeterminant', 'MatrixInverse']


class Lgamma(Primitive):
    """``ops.Lgamma()(x)``: log|Gamma(x)|."""

    def __call__(self, x):
        return M.lgamma(x)


class Digamma(Primitive):
    """``ops.Digamma()(x)``: d/dx log Gamma(x)."""

    def __call__(self, x):
        return M.digamma(x)


class Igamma(Primitive):
    """``ops.Igamma()(a, x)``: lower regularized incomplete gamma P(a, x)."""

    def __call__(self, a, x):
        return M.igamma(a, x)


class Igammac(Primitive):
    """``ops.Igammac()(a, x)``: upper regularized incomplete gamma Q(a, x) = 1 - P(a, x)."""

    def __call__(self, a, x):
        return M.igammac(a, x)


class MatrixDeterminant(Primitive):
    """``ops.MatrixDeterminant()(x)``: determinants of (..., N, N) matrices."""

    def __call__(self, x):
        return M.det(x)


class MatrixInverse(Primitive):
    """``ops.MatrixInverse(adjoint=False)(x)``: inverses of (..., N, N) matrices (of their conjugate
    transposes with ``adjoint``; real inputs: transposes)."""

    def __init__(self, adjoint: bool = False):
        super().__init__()
        if not isinstance(adjoint, bool):
            raise TypeError(f"MatrixInverse: adjoint must be a bool, got {type(adjoint).__name__}")
        self.adjoint = adjoint

    def __call__(self, x):
        out = M.inverse(x)
        if self.adjoint:
            axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
            from .functional import transpose
            out = transpose(out, axes)
        return out
