"""Padding layers: ``nn.Pad``."""
from __future__ import annotations

from ... import ops
from ..cell import Cell

__all__ = ['Pad']

_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


class Pad(Cell):
    """Pads the input by ``paddings[D] = (before, after)`` along each dimension D.

    Output size of dimension D: ``paddings[D][0] + x.shape[D] + paddings[D][1]``.

    Args:
        paddings (tuple): one (before, after) pair of non-negative ints per input dimension, at most 4 pairs.
        mode (str): 'CONSTANT' (zeros), 'REFLECT' (mirror about the edge element, which is not repeated;
            paddings smaller than the dimension) or 'SYMMETRIC' (mirror about the edge, which is repeated;
            paddings at most the dimension). Default: 'CONSTANT'.

    Inputs:
        - **x** (Tensor) - a tensor of rank ``len(paddings)``.

    Outputs:
        Tensor, the padded ``x``.

    Raises:
        TypeError: ``paddings`` not a tuple, or holding non-ints.
        ValueError: more than 4 pairs, a pair not of length 2, a negative value, or ``mode`` not one of
            'CONSTANT', 'REFLECT', 'SYMMETRIC'; at call time, an input rank other than ``len(paddings)`` or
            paddings too large for the mirror modes.
    """

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if mode not in _MODES:
            raise ValueError(f"For 'Pad', the 'mode' must be one of {list(_MODES)}, but got {mode!r}.")
        if not isinstance(paddings, tuple):
            raise TypeError(f"For 'Pad', the 'paddings' must be a tuple, but got {type(paddings).__name__}.")
        for pair in paddings:
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"For 'Pad', the 'paddings' must have shape (n, 2), but got {paddings!r}.")
            if any(isinstance(p, bool) or not isinstance(p, int) for p in pair):
                raise TypeError(f"For 'Pad', the 'paddings' items must be ints, but got {paddings!r}.")
            if any(p < 0 for p in pair):
                raise ValueError(f"For 'Pad', the 'paddings' must be non-negative, but got {paddings!r}.")
        if len(paddings) > 4:
            raise ValueError(f"For 'Pad', only 'paddings' up to 4 dims is supported, but got {len(paddings)}.")
        self.paddings = tuple(tuple(pair) for pair in paddings)
        self.mode = mode

    def construct(self, x):
        if x.ndim != len(self.paddings):
            raise ValueError(f"For 'Pad', the input rank must equal len(paddings) = {len(self.paddings)}, "
                             f"but got shape {x.shape}.")
        for axis, (size, (before, after)) in enumerate(zip(x.shape, self.paddings)):
            limit = {"REFLECT": size - 1, "SYMMETRIC": size}.get(self.mode)
            if limit is not None and max(before, after) > limit:
                raise ValueError(f"For 'Pad', {self.mode} paddings of dimension {axis} (size {size}) must be at "
                                 f"most {limit}, but got ({before}, {after}).")
        if self.mode == "CONSTANT":
            return ops.Pad(self.paddings)(x)
        return ops.MirrorPad(self.mode)(x, self.paddings)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"
