"""MindSpore's image ops: bilinear resizing."""
from __future__ import annotations

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['resize_bilinear']


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
