"""Activation layers."""
from __future__ import annotations

from ... import ops
from ..cell import Cell


class ReLU(Cell):
    """``max(x, 0)`` element-wise."""

    def construct(self, x):
        return ops.relu(x)


class Softmax(Cell):
    """Softmax along ``axis``.

    Args:
        axis: the axis (int, or a one-element tuple). Default: -1.
    """

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis[0] if isinstance(axis, (tuple, list)) else axis

    def construct(self, x):
        return ops.softmax(x, self.axis)
