"""Activation layers."""
from __future__ import annotations

__all__ = ['ReLU', 'Softmax', 'get_activation']

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


_ACTIVATIONS = {"relu": ReLU, "softmax": Softmax}


def get_activation(name, prim_name=None):
    """The activation Cell called ``name`` ('relu', 'softmax', ...), or None for None.

    Raises:
        KeyError: unknown name; the message lists the known ones.
    """
    if name is None:
        return None
    if not isinstance(name, str) or name.lower() not in _ACTIVATIONS:
        raise KeyError(f"name: expected one of {sorted(_ACTIVATIONS)}, got {name!r}")
    return _ACTIVATIONS[name.lower()]()
