"""Lowering rules for pooling."""
from __future__ import annotations

from tvm import relax

from ..capture import static_shape
from ..errors import CaptureError
from .common import as_pair
from .conv import window_padding
from .registry import rule


def _pool_args(x, kernel_size, stride, pad_mode, padding, data_format):
    if data_format not in ("NCHW", "NHWC"):
        raise CaptureError(f"data_format: expected 'NCHW' or 'NHWC', got {data_format!r}")
    shape = static_shape(x)
    if len(shape) != 4:
        raise CaptureError(f"pool2d: input must be 4-D, got shape {shape}")
    kernel, stride = as_pair(kernel_size, "kernel_size"), as_pair(stride, "stride")
    hw = shape[2:] if data_format == "NCHW" else shape[1:3]
    pad = window_padding(hw, kernel, stride, (1, 1), pad_mode.lower(), padding)
    return kernel, stride, pad


@rule("max_pool2d")
def max_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, data_format="NCHW"):
    kernel, stride, pad = _pool_args(x, kernel_size, stride, pad_mode, padding, data_format)
    return relax.op.nn.max_pool2d(x, kernel, stride, pad, ceil_mode=bool(ceil_mode), layout=data_format)


@rule("avg_pool2d")
def avg_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
               count_include_pad=None, data_format="NCHW"):
    """Average pooling; by default padding counts for 'pad' and not for 'same', as in MindSpore."""
    kernel, stride, pad = _pool_args(x, kernel_size, stride, pad_mode, padding, data_format)
    if count_include_pad is None:
        count_include_pad = pad_mode.lower() == "pad"
    return relax.op.nn.avg_pool2d(x, kernel, stride, pad, ceil_mode=bool(ceil_mode),
                                  count_include_pad=bool(count_include_pad), layout=data_format)


@rule("global_avg_pool2d")
def global_avg_pool2d(x, keep_dims=True):
    return relax.op.mean(x, axis=[2, 3], keepdims=bool(keep_dims))
