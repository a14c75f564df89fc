"""Functional padding, ``ops.pad`` (MindSpore 2.x: pairs given from the last axis backwards)."""
from __future__ import annotations

from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['pad']

_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input_x, padding, mode="constant", value=None):
    """Pad ``input_x``: ``padding`` is (left, right) for the last axis, then (top, bottom) for the one before...

    Args:
        input_x (Tensor): the input.
        padding (Union[tuple[int], list[int]]): an even number of non-negative ints, at most 2 * rank.
        mode (str): 'constant', 'reflect', 'replicate' or 'circular'. Default: 'constant'.
        value (Union[int, float]): the fill value of 'constant'. Default: None (0).

    Returns:
        Tensor.

    Raises:
        TypeError: ``padding`` not a tuple/list of ints, or ``value`` set for a mode other than 'constant'.
        ValueError: odd length, too many values, negative values, or an unknown ``mode``.
    """
    if not isinstance(input_x, Tensor):
        raise TypeError(f"pad: input_x must be a Tensor, got {type(input_x).__name__}")
    if not isinstance(padding, (tuple, list)) or not all(isinstance(p, int) for p in padding):
        raise TypeError(f"pad: padding must be a tuple or list of ints, got {padding!r}")
    if len(padding) % 2 or len(padding) > 2 * input_x.ndim:
        raise ValueError(f"pad: padding must hold an even number of ints, at most {2 * input_x.ndim}, "
                         f"got {len(padding)}")
    if any(p < 0 for p in padding):
        raise ValueError(f"pad: padding values must be non-negative, got {padding!r}")
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be one of {_MODES}, got {mode!r}")
    if value is not None and mode != "constant":
        raise TypeError(f"pad: value is only used by mode 'constant', got mode {mode!r}")
    pairs = [(0, 0)] * input_x.ndim
    for i in range(len(padding) // 2):
        pairs[input_x.ndim - 1 - i] = (padding[2 * i], padding[2 * i + 1])
    return apply("pad", input_x, tuple(pairs), mode, 0 if value is None else value)
