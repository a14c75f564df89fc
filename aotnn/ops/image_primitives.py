"""MindSpore's image primitives: bilinear resizing."""
from __future__ import annotations

from .image_ops import resize_bilinear
from .primitives import Primitive

__all__ = ['ResizeBilinear', 'ResizeBilinearV2']


class ResizeBilinearV2(Primitive):
    """``ops.ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)``."""

    def __init__(self, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__()
        self.align_corners, self.half_pixel_centers = align_corners, half_pixel_centers

    def __call__(self, x, size):
        return resize_bilinear(x, tuple(size), self.align_corners, self.half_pixel_centers)


class ResizeBilinear(ResizeBilinearV2):
    """MindSpore 1.x ``ops.ResizeBilinear(size, align_corners=False, half_pixel_centers=False)(x)``."""

    def __init__(self, size, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__(align_corners, half_pixel_centers)
        self.size = tuple(size)

    def __call__(self, x):
        return resize_bilinear(x, self.size, self.align_corners, self.half_pixel_centers)
