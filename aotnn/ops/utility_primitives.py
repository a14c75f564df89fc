"""MindSpore's primitives for one-hot encoding, rolling and triangular masks."""
from __future__ import annotations

from . import utility_ops as U
from .primitives import Primitive

__all__ = ['OneHot', 'Roll', 'Tril', 'Triu']


class OneHot(Primitive):
    """``ops.OneHot(axis=-1)(indices, depth, on_value, off_value)``; the result has on_value's dtype."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis

    def __call__(self, indices, depth, on_value, off_value):
        return U.one_hot(indices, depth, on_value, off_value, self.axis)


class Roll(Primitive):
    """``ops.Roll(shift, axis)(x)``: elements shifted along axes with wrap-around."""

    def __init__(self, shift, axis):
        super().__init__()
        self.shift, self.axis = shift, axis

    def __call__(self, x):
        return U.roll(x, self.shift, self.axis)


class Tril(Primitive):
    """``ops.Tril(diagonal=0)(x)``: zeros above the diagonal-th diagonal."""

    def __init__(self, diagonal: int = 0):
        super().__init__()
        self.diagonal = diagonal

    def __call__(self, x):
        return U.tril(x, self.diagonal)


class Triu(Tril):
    """``ops.Triu(diagonal=0)(x)``: zeros below the diagonal-th diagonal."""

    def __call__(self, x):
        return U.triu(x, self.diagonal)
