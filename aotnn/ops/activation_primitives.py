"""MindSpore's activation primitives (``ops.GeLU()(x)``, ``P.Elu(alpha)(x)``...)."""
from __future__ import annotations

from . import activation_ops as A
from .primitives import Primitive

__all__ = ['GeLU', 'Gelu', 'FastGeLU', 'FastGelu', 'Elu', 'CeLU', 'HSwish', 'HSigmoid', 'PReLU', 'SoftShrink',
           'HShrink', 'Softplus', 'Softsign', 'Mish']


class GeLU(Primitive):
    """``ops.GeLU()(x)``: the tanh approximation of GELU."""

    def __call__(self, x):
        return A.gelu(x, approximate='tanh')


class FastGeLU(Primitive):
    """``ops.FastGeLU()(x)``."""

    def __call__(self, x):
        return A.fast_gelu(x)


class Elu(Primitive):
    """``ops.Elu(alpha=1.0)(x)``."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def __call__(self, x):
        return A.elu(x, self.alpha)


class CeLU(Elu):
    """``ops.CeLU(alpha=1.0)(x)``."""

    def __call__(self, x):
        return A.celu(x, self.alpha)


class HSwish(Primitive):
    def __call__(self, x):
        return A.hardswish(x)


class HSigmoid(Primitive):
    def __call__(self, x):
        return A.hardsigmoid(x)


class PReLU(Primitive):
    """``ops.PReLU()(x, weight)``."""

    def __call__(self, x, weight):
        return A.prelu(x, weight)


class SoftShrink(Primitive):
    """``ops.SoftShrink(lambd=0.5)(x)``."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def __call__(self, x):
        return A.softshrink(x, self.lambd)


class HShrink(SoftShrink):
    """``ops.HShrink(lambd=0.5)(x)``."""

    def __call__(self, x):
        return A.hardshrink(x, self.lambd)


class Softplus(Primitive):
    def __call__(self, x):
        return A.softplus(x)


class Softsign(Primitive):
    def __call__(self, x):
        return A.softsign(x)


class Mish(Primitive):
    def __call__(self, x):
        return A.mish(x)


Gelu = GeLU  # MindSpore 1.x spellings
FastGelu = FastGeLU
