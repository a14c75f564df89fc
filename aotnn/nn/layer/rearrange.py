"""MindSpore 2.x rearranging layers: PixelShuffle, PixelUnshuffle, ChannelShuffle and Unflatten."""
from __future__ import annotations

from ... import ops
from ..cell import Cell

__all__ = ['PixelShuffle', 'PixelUnshuffle', 'ChannelShuffle', 'Unflatten']


class PixelShuffle(Cell):
    """(..., C r^2, H, W) -> (..., C, H r, W r); see :func:`aotnn.ops.pixel_shuffle`.

    Args:
        upscale_factor (int): r, positive.
    """

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input):  # noqa: A002 (MindSpore's argument name)
        return ops.pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(Cell):
    """(..., C, H r, W r) -> (..., C r^2, H, W); see :func:`aotnn.ops.pixel_unshuffle`.

    Args:
        downscale_factor (int): r, positive.
    """

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def construct(self, input):  # noqa: A002
        return ops.pixel_unshuffle(input, self.downscale_factor)


class ChannelShuffle(Cell):
    """Shuffles the channels of (N, C, *) inputs across ``groups``; see :func:`aotnn.ops.channel_shuffle`.

    Args:
        groups (int): divides C.

    Raises:
        ValueError: ``groups`` not a positive int.
    """

    def __init__(self, groups: int):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError(f"For 'ChannelShuffle', the 'groups' must be a positive int, but got {groups!r}.")
        self.groups = groups

    def construct(self, x):
        return ops.channel_shuffle(x, self.groups)


class Unflatten(Cell):
    """Expands axis ``axis`` into the shape ``unflattened_size`` (its product must equal the axis length).

    Args:
        axis (int): the axis expanded.
        unflattened_size (Union[tuple[int], list[int]]): the new axes; one entry may be -1.

    Raises:
        TypeError: ``axis`` not an int, ``unflattened_size`` not a tuple/list of ints.
        ValueError: at call time, a size whose product differs from the axis length.
    """

    def __init__(self, axis: int, unflattened_size):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'Unflatten', the 'axis' must be an int, but got {type(axis).__name__}.")
        if not isinstance(unflattened_size, (tuple, list)) or not unflattened_size or any(
                isinstance(s, bool) or not isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"For 'Unflatten', the 'unflattened_size' must be a tuple of ints, but got "
                            f"{unflattened_size!r}.")
        self.axis, self.unflattened_size = axis, tuple(unflattened_size)

    def construct(self, input):  # noqa: A002
        if not -input.ndim <= self.axis < input.ndim:
            raise ValueError(f"For 'Unflatten', 'axis' {self.axis} is out of range for shape {input.shape}.")
        axis = self.axis % input.ndim
        sizes = list(self.unflattened_size)
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        if sizes.count(-1) == 1 and known and input.shape[axis] % known == 0:
            sizes[sizes.index(-1)] = input.shape[axis] // known
        product = 1
        for s in sizes:
            product *= s
        if sizes.count(-1) or product != input.shape[axis]:
            raise ValueError(f"For 'Unflatten', 'unflattened_size' {self.unflattened_size} does not fit axis "
                             f"{self.axis} of length {input.shape[axis]}.")
        return ops.reshape(input, tuple(input.shape[:axis]) + tuple(sizes) + tuple(input.shape[axis + 1:]))
