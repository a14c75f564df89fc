"""Padding primitives: ``ops.Pad`` (zeros) and ``ops.MirrorPad`` (REFLECT / SYMMETRIC)."""
from __future__ import annotations

import numpy as np

from ..common.tensor import Tensor
from ._dispatch import apply
from .primitives import Primitive

__all__ = ['Pad', 'MirrorPad']


def _pairs(paddings, name: str) -> tuple[tuple[int, int], ...]:
    if isinstance(paddings, Tensor):
        if paddings.is_symbolic:
            raise TypeError(f"{name}: paddings must be known ahead of time, got a Tensor computed in the graph")
        paddings = paddings.asnumpy()
    array = np.asarray(paddings)
    if array.ndim != 2 or array.shape[1] != 2 or array.dtype.kind not in "iu":
        raise ValueError(f"{name}: paddings must be (before, after) int pairs of shape (n, 2), got {paddings!r}")
    if (array < 0).any():
        raise ValueError(f"{name}: paddings must be non-negative, got {paddings!r}")
    return tuple((int(b), int(a)) for b, a in array)


class Pad(Primitive):
    """``ops.Pad(paddings)(x)``: pads dimension D of ``x`` with ``paddings[D] = (before, after)`` zeros.

    Args:
        paddings (tuple): one (before, after) pair of non-negative ints per dimension of ``x``.

    Raises:
        TypeError: ``paddings`` not a tuple.
        ValueError: ``paddings`` not of shape (n, 2) or negative; at call time, n differs from the input rank.
    """

    def __init__(self, paddings):
        super().__init__()
        if not isinstance(paddings, tuple):
            raise TypeError(f"Pad: paddings must be a tuple, got {type(paddings).__name__}")
        self.paddings = _pairs(paddings, "Pad")

    def __call__(self, x):
        return apply("pad", x, self.paddings, "constant", 0)


class MirrorPad(Primitive):
    """``ops.MirrorPad(mode)(x, paddings)``: pads by mirroring, 'REFLECT' (the edge element is not repeated;
    paddings smaller than the dimension) or 'SYMMETRIC' (repeated; paddings at most the dimension).

    Args:
        mode (str): 'REFLECT' or 'SYMMETRIC'. Default: 'REFLECT'.

    Inputs:
        - **x** (Tensor) - the input.
        - **paddings** (Union[Tensor, tuple]) - int (before, after) pairs of shape (rank, 2), known ahead of time.

    Raises:
        ValueError: an unknown ``mode``; ``paddings`` malformed or too large.
    """

    def __init__(self, mode="REFLECT"):
        super().__init__()
        if mode not in ("REFLECT", "SYMMETRIC"):
            raise ValueError(f"MirrorPad: mode must be 'REFLECT' or 'SYMMETRIC', got {mode!r}")
        self.mode = mode

    def __call__(self, x, paddings):
        return apply("pad", x, _pairs(paddings, "MirrorPad"), self.mode.lower(), 0)
