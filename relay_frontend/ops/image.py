"""Lowering rules for image resizing.

Bilinear resizing is separable: along each axis an output pixel reads two neighbouring input
pixels and blends them. With static shapes, the neighbours and blend weights are numpy constants
of the graph, so one rule covers every coordinate mode (TVM's resize2d rejects align_corners
with an output size of 1) and the arithmetic is TensorFlow's (``a + (b - a) * w``, width first),
which MindSpore's kernels follow.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit
from .registry import rule

_op = relax.op


def _source_coordinates(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    """Where each output pixel lands on the input grid (float32, as the kernels compute it).

    default:            src = dst * in / out
    align_corners:      src = dst * (in - 1) / (out - 1), 0 when out is 1
    half_pixel_centers: src = (dst + 0.5) * in / out - 0.5
    """
    dst = np.arange(out_size, dtype=np.float32)
    if align_corners:
        scale = np.float32((in_size - 1) / (out_size - 1)) if out_size > 1 else np.float32(0)
        return dst * scale
    scale = np.float32(in_size / out_size)
    if half_pixel:
        return (dst + np.float32(0.5)) * scale - np.float32(0.5)
    return dst * scale


def _resize_axis(x, axis: int, out_size: int, align_corners: bool, half_pixel: bool):
    in_size = static_shape(x)[axis]
    if in_size == out_size:  # every mode maps an unchanged axis onto itself
        return x
    src = _source_coordinates(in_size, out_size, align_corners, half_pixel)
    low = np.floor(src)
    weight = (src - low).astype(np.float32)
    lower = np.clip(low, 0, in_size - 1).astype("int64")
    upper = np.clip(np.ceil(src), 0, in_size - 1).astype("int64")
    weight_shape = [1] * len(static_shape(x))
    weight_shape[axis] = out_size
    first = _op.take(x, relax.const(lower), axis=axis, mode="clip")
    second = _op.take(x, relax.const(upper), axis=axis, mode="clip")
    blend = relax.const(weight.reshape(weight_shape))
    return emit(_op.add(first, _op.multiply(_op.subtract(second, first), blend)))


@rule("resize_bilinear")
def resize_bilinear(x, size, align_corners: bool = False, half_pixel_centers: bool = False):
    """Bilinear resize of an NCHW tensor to ``size`` = (height, width)."""
    shape = static_shape(x)
    if len(shape) != 4:
        raise CaptureError(f"resize_bilinear: input must be 4-D NCHW, got shape {shape}")
    if align_corners and half_pixel_centers:
        raise CaptureError("resize_bilinear: align_corners and half_pixel_centers cannot both be True")
    height, width = (int(s) for s in size)
    dtype = dtype_of(x)
    out = x if dtype == "float32" else emit(_op.astype(x, "float32"))
    out = _resize_axis(out, 3, width, bool(align_corners), bool(half_pixel_centers))
    out = _resize_axis(out, 2, height, bool(align_corners), bool(half_pixel_centers))
    return out if dtype == "float32" else _op.astype(out, dtype)


def _nearest_sources(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    """Input index read by each output position: floor(dst * in / out), or with align_corners
    round(dst * (in - 1) / (out - 1)) (MindSpore's ResizeNearestNeighbor, PyTorch's 'nearest')."""
    dst = np.arange(out_size, dtype=np.float64)
    if align_corners:
        scale = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = np.floor(dst * scale + 0.5)
    else:
        src = np.floor(dst * (in_size / out_size))
    return np.clip(src, 0, in_size - 1).astype("int64")


@rule("resize_nearest")
def resize_nearest(x, size, align_corners: bool = False):
    """Nearest-neighbour resize of the trailing ``len(size)`` axes of ``x`` (N, C, *spatial) to ``size``."""
    shape = static_shape(x)
    size = [int(s) for s in size]
    if len(shape) != len(size) + 2 or any(s <= 0 for s in size):
        raise CaptureError(f"resize_nearest: expected an (N, C, *spatial) input with {len(size)} spatial axes "
                           f"and positive sizes, got shape {shape} and size {tuple(size)}")
    out = x
    for axis, out_size in enumerate(size, start=2):
        if shape[axis] != out_size:
            source = relax.const(_nearest_sources(shape[axis], out_size, bool(align_corners)))
            out = emit(_op.take(out, source, axis=axis, mode="clip"))
    return out
