"""Convolution primitives: ``ops.Conv2D`` and ``ops.Conv2DTranspose`` (``Conv2DBackpropInput``)."""
from __future__ import annotations

from . import functional as F
from .conv_ops import conv2d_transpose
from .primitives import Primitive

__all__ = ['Conv2D', 'Conv2DTranspose', 'Conv2DBackpropInput']

import math


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


def _pads(pad) -> tuple[int, int, int, int]:
    if isinstance(pad, int) and not isinstance(pad, bool):
        return (pad,) * 4
    if isinstance(pad, (tuple, list)) and len(pad) == 4 and all(isinstance(p, int) and p >= 0 for p in pad):
        return tuple(pad)
    raise ValueError(f"Conv2DTranspose: pad must be a non-negative int or (top, bottom, left, right), got {pad!r}")


class Conv2DTranspose(Primitive):
    """``ops.Conv2DTranspose(out_channel, kernel_size, pad_mode='valid', pad=0, ..., stride=1, dilation=1,
    group=1)(dout, weight, input_size)``: the gradient of a 2-D convolution with respect to its input
    (MindSpore's Conv2DBackpropInput), i.e. a transposed convolution whose output has shape ``input_size``.

    ``weight`` is the forward convolution's (out_channel, C / group, kh, kw) kernel and ``dout`` its
    (N, out_channel, h, w) output; ``input_size`` = (N, C, H, W).

    Raises:
        ValueError: a bad ``pad_mode``, ``pad`` or ``data_format``; at call time an ``input_size`` that no
            output padding reaches.
    """

    def __init__(self, out_channel, kernel_size, pad_mode="valid", pad=0, pad_list=None, mode=1, stride=1,
                 dilation=1, group=1, data_format="NCHW"):
        super().__init__()
        if str(pad_mode).lower() not in ("valid", "same", "pad"):
            raise ValueError(f"Conv2DTranspose: pad_mode must be 'valid', 'same' or 'pad', got {pad_mode!r}")
        if data_format != "NCHW":
            raise ValueError(f"Conv2DTranspose: only data_format 'NCHW' is supported, got {data_format!r}")
        self.out_channel, self.kernel_size = out_channel, _hw(kernel_size, "kernel_size")
        self.pad_mode, self.stride, self.dilation = str(pad_mode).lower(), _hw(stride, "stride"), _hw(dilation, "dilation")
        self.pad = _pads(pad_list if pad_list is not None else pad)
        self.group = group

    def _forward_pads(self, size: int, axis: int) -> tuple[int, int]:
        if self.pad_mode == "pad":
            return self.pad[2 * axis], self.pad[2 * axis + 1]
        if self.pad_mode == "valid":
            return 0, 0
        k, s, d = self.kernel_size[axis], self.stride[axis], self.dilation[axis]
        total = max((math.ceil(size / s) - 1) * s + d * (k - 1) + 1 - size, 0)
        return total // 2, total - total // 2

    def __call__(self, dout, weight, input_size):
        size = tuple(int(v) for v in input_size)
        if len(size) != 4:
            raise ValueError(f"Conv2DTranspose: input_size must be (N, C, H, W), got {input_size!r}")
        pads, extra = [], []
        for axis in range(2):
            before, after = self._forward_pads(size[2 + axis], axis)
            k, s, d = self.kernel_size[axis], self.stride[axis], self.dilation[axis]
            natural = (dout.shape[2 + axis] - 1) * s - before - after + d * (k - 1) + 1
            if not 0 <= size[2 + axis] - natural < max(s, d):
                raise ValueError(f"Conv2DTranspose: input_size {size} cannot come from dout shape {dout.shape} "
                                 f"with these kernel, stride, dilation and pads")
            pads += [before, after]
            extra.append(size[2 + axis] - natural)
        return conv2d_transpose(dout, weight, None, self.stride, "pad", tuple(pads), tuple(extra), self.dilation,
                                self.group)


Conv2DBackpropInput = Conv2DTranspose
