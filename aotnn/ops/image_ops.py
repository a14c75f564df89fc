"""MindSpore's image ops: bilinear and nearest-neighbour resizing, and ``interpolate``."""
from __future__ import annotations

import math

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['resize_bilinear', 'resize_nearest_neighbor', 'interpolate']


def resize_bilinear(x, size, align_corners: bool = False, half_pixel_centers: bool = False):
    """Bilinear resize of an NCHW float tensor to ``size`` = (new_height, new_width).

    Args:
        x (Tensor): (N, C, H, W), float16 or float32.
        size (Union[tuple[int], list[int]]): (new_height, new_width), positive.
        align_corners (bool): map corner pixels onto corner pixels: src = dst * (in - 1) / (out - 1).
            Default: False, src = dst * in / out.
        half_pixel_centers (bool): pixel centres at +0.5: src = (dst + 0.5) * in / out - 0.5.
            Cannot be combined with align_corners. Default: False.
    Returns:
        Tensor (N, C, new_height, new_width) of x's dtype.
    Raises:
        TypeError: x not a float16/float32 Tensor; size not a tuple/list; flags not bools.
        ValueError: x not 4-D; size not two positive ints; both flags True.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"resize_bilinear: x must be a Tensor, got {type(x).__name__}")
    if x.dtype not in (mstype.float16, mstype.float32):
        raise TypeError(f"resize_bilinear: x must be float16 or float32, got {x.dtype}")
    if x.ndim != 4:
        raise ValueError(f"resize_bilinear: x must be 4-D (N, C, H, W), got shape {x.shape}")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"resize_bilinear: size must be a tuple or a list, got {type(size).__name__}")
    if len(size) != 2 or any(isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in size):
        raise ValueError(f"resize_bilinear: size must be two positive ints, got {size!r}")
    for name, flag in (("align_corners", align_corners), ("half_pixel_centers", half_pixel_centers)):
        if not isinstance(flag, bool):
            raise TypeError(f"resize_bilinear: {name} must be a bool, got {type(flag).__name__}")
    if align_corners and half_pixel_centers:
        raise ValueError("resize_bilinear: half_pixel_centers=True requires align_corners=False")
    return apply("resize_bilinear", x, tuple(size), align_corners, half_pixel_centers)


def resize_nearest_neighbor(input_x, size, align_corners: bool = False):
    """Nearest-neighbour resize of the spatial axes of ``input_x`` (N, C, *spatial) to ``size``.

    Each output position reads input index floor(dst * in / out), or with ``align_corners``
    round(dst * (in - 1) / (out - 1)).

    Raises:
        TypeError: input_x not a Tensor, size not a tuple/list, align_corners not a bool.
        ValueError: size not positive ints, one per spatial axis (1 to 3 of them).
    """
    if not isinstance(input_x, Tensor):
        raise TypeError(f"resize_nearest_neighbor: input_x must be a Tensor, got {type(input_x).__name__}")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"resize_nearest_neighbor: size must be a tuple or a list, got {type(size).__name__}")
    if not 1 <= len(size) <= 3 or len(size) != input_x.ndim - 2 or any(
            isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in size):
        raise ValueError(f"resize_nearest_neighbor: size must hold one positive int per spatial axis of "
                         f"input_x (shape {input_x.shape}), got {size!r}")
    if not isinstance(align_corners, bool):
        raise TypeError(f"resize_nearest_neighbor: align_corners must be a bool, got {type(align_corners).__name__}")
    return apply("resize_nearest", input_x, tuple(size), align_corners)


_INTERPOLATE_MODES = ("nearest", "bilinear")


def _interpolate_size(input, size, scale_factor) -> tuple[int, ...]:  # noqa: A002
    spatial = input.ndim - 2
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: exactly one of size and scale_factor must be given")
    if size is not None:
        sizes = (size,) * spatial if isinstance(size, int) else tuple(size)
        if len(sizes) != spatial or any(isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in sizes):
            raise ValueError(f"interpolate: size must be {spatial} positive int(s), got {size!r}")
        return sizes
    scales = (scale_factor,) * spatial if isinstance(scale_factor, (int, float)) else tuple(scale_factor)
    if len(scales) != spatial or any(s <= 0 for s in scales):
        raise ValueError(f"interpolate: scale_factor must be {spatial} positive number(s), got {scale_factor!r}")
    return tuple(int(math.floor(n * s)) for n, s in zip(input.shape[2:], scales))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None):
    """Resize the spatial axes of ``input`` (N, C, *spatial) to ``size`` or by ``scale_factor``.

    Args:
        input (Tensor): (N, C, W), (N, C, H, W) or (N, C, D, H, W) for 'nearest'; (N, C, H, W) for 'bilinear'.
        size (Union[int, tuple[int]]): the output spatial size. Default: None.
        scale_factor (Union[float, tuple[float]]): output size = floor(input size * scale_factor). Default: None.
        mode (str): 'nearest' (index floor(dst * in / out)) or 'bilinear'. Default: 'nearest'.
        align_corners (bool): for 'bilinear', map corner pixels onto corner pixels; otherwise pixel centres
            are aligned (half-pixel offsets). Must be None or False for 'nearest'. Default: None.
        recompute_scale_factor (bool): accepted; output sizes are always computed from ``scale_factor``.

    Raises:
        TypeError: input not a Tensor.
        ValueError: both or neither of size / scale_factor, a bad size, an unsupported mode or rank.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode not in _INTERPOLATE_MODES:
        raise ValueError(f"interpolate: mode must be one of {_INTERPOLATE_MODES}, got {mode!r}")
    if not 3 <= input.ndim <= 5:
        raise ValueError(f"interpolate: input must be 3-D to 5-D, got shape {input.shape}")
    out_size = _interpolate_size(input, size, scale_factor)
    if mode == "nearest":
        if align_corners:
            raise ValueError("interpolate: align_corners can only be set for 'bilinear'")
        return resize_nearest_neighbor(input, list(out_size))
    if input.ndim != 4:
        raise ValueError(f"interpolate: 'bilinear' needs a 4-D input, got shape {input.shape}")
    aligned = bool(align_corners)
    return resize_bilinear(input, list(out_size), aligned, not aligned)
