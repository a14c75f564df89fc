"""Lowering rules for convolutions."""
from __future__ import annotations

from tvm import relax

from ..capture import static_shape
from ..errors import CaptureError
from .common import as_pair
from .linalg import same_dtype
from .registry import rule

PAD_MODES = ("same", "valid", "pad")


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TF-style 'same' padding: output ceil(size / stride), the odd pixel padded at the end."""
    out = -(-size // stride)
    needed = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size)
    return needed // 2, needed - needed // 2


def explicit_padding(padding, what: str = "padding") -> tuple[int, int, int, int]:
    """MindSpore's padding (int or (top, bottom, left, right)) as (top, bottom, left, right)."""
    if isinstance(padding, int):
        return (padding,) * 4
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        return tuple(int(p) for p in padding)
    if isinstance(padding, (tuple, list)) and len(padding) == 2:
        return int(padding[0]), int(padding[0]), int(padding[1]), int(padding[1])
    raise CaptureError(f"{what}: expected an int or a tuple of 4 ints, got {padding!r}")


def window_padding(shape_hw, kernel, stride, dilation, pad_mode: str, padding) -> tuple[int, int, int, int]:
    """Padding as Relax wants it, (top, left, bottom, right), for a 2-D window op."""
    if pad_mode not in PAD_MODES:
        raise CaptureError(f"pad_mode: expected one of {PAD_MODES}, got {pad_mode!r}")
    if pad_mode == "valid":
        return 0, 0, 0, 0
    if pad_mode == "pad":
        top, bottom, left, right = explicit_padding(padding)
        return top, left, bottom, right
    top, bottom = same_padding(shape_hw[0], kernel[0], stride[0], dilation[0])
    left, right = same_padding(shape_hw[1], kernel[1], stride[1], dilation[1])
    return top, left, bottom, right


@rule("conv2d")
def conv2d(x, weight, bias=None, stride=1, pad_mode="same", padding=0, dilation=1, groups=1,
           data_format="NCHW"):
    same_dtype("conv2d", x, weight)
    if data_format not in ("NCHW", "NHWC"):
        raise CaptureError(f"data_format: expected 'NCHW' or 'NHWC', got {data_format!r}")
    stride, dilation = as_pair(stride, "stride"), as_pair(dilation, "dilation")
    x_shape, w_shape = static_shape(x), static_shape(weight)
    if len(x_shape) != 4:
        raise CaptureError(f"conv2d: input must be 4-D ({data_format}), got shape {x_shape}")
    hw = x_shape[2:] if data_format == "NCHW" else x_shape[1:3]
    kernel = w_shape[2:] if data_format == "NCHW" else w_shape[1:3]
    pad = window_padding(hw, kernel, stride, dilation, pad_mode, padding)
    kernel_layout = "OIHW" if data_format == "NCHW" else "OHWI"
    out = relax.op.nn.conv2d(x, weight, strides=stride, padding=pad, dilation=dilation, groups=groups,
                             data_layout=data_format, kernel_layout=kernel_layout)
    if bias is not None:
        same_dtype("conv2d", x, bias)
        out = relax.op.add(out, relax.op.reshape(bias, (1, -1, 1, 1) if data_format == "NCHW" else (1, 1, 1, -1)))
    return out
