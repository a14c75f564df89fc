"""Convolution primitives: ``ops.Conv2D``."""
from __future__ import annotations

from . import functional as F
from .primitives import Primitive

__all__ = ['Conv2D']


def _hw(value, name: str) -> tuple[int, int]:
    """An int, (h, w) or (1, 1, h, w) as (h, w)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) in (2, 4) and all(isinstance(v, int) for v in value):
        return tuple(value[-2:])
    raise TypeError(f"Conv2D: {name} must be an int or a tuple of 2 or 4 ints, got {value!r}")


class Conv2D(Primitive):
    """``ops.Conv2D(out_channel, kernel_size, ...)(x, weight)``: 2-D convolution without bias.

    Args:
        out_channel (int): output channels (checked against the weight).
        kernel_size (Union[int, tuple[int]]): checked against the weight.
        mode (int): 1 (cross-correlation), the only mode. Default: 1.
        pad_mode (str): 'valid', 'same' or 'pad'. Default: 'valid'.
        pad (Union[int, tuple[int]]): with 'pad': an int or (top, bottom, left, right). Default: 0.
        stride (Union[int, tuple[int]]): int, (h, w) or (1, 1, h, w). Default: 1.
        dilation (Union[int, tuple[int]]): int, (h, w) or (1, 1, h, w). Default: 1.
        group (int): Default: 1.
        data_format (str): 'NCHW' or 'NHWC'. Default: 'NCHW'.

    Raises:
        TypeError: a size neither an int nor a tuple.
        ValueError: ``mode`` not 1, an unknown ``pad_mode``, or a weight that disagrees with
            ``out_channel``/``kernel_size``.
    """

    def __init__(self, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1, dilation=1, group=1,
                 data_format="NCHW"):
        super().__init__()
        if mode != 1:
            raise ValueError(f"Conv2D: mode must be 1, got {mode!r}")
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError(f"Conv2D: pad_mode must be 'valid', 'same' or 'pad', got {pad_mode!r}")
        self.out_channel, self.kernel_size = out_channel, _hw(kernel_size, "kernel_size")
        self.pad_mode, self.pad = pad_mode.lower(), pad
        self.stride, self.dilation = _hw(stride, "stride"), _hw(dilation, "dilation")
        self.group, self.data_format = group, data_format

    def __call__(self, x, weight):
        kernel = weight.shape[2:] if self.data_format == "NCHW" else weight.shape[1:3]
        if weight.shape[0] != self.out_channel or tuple(kernel) != self.kernel_size:
            raise ValueError(f"Conv2D: weight of shape {weight.shape} disagrees with out_channel={self.out_channel}, "
                             f"kernel_size={self.kernel_size}")
        return F.conv2d(x, weight, None, self.stride, self.pad_mode, self.pad, self.dilation, self.group,
                        self.data_format)
