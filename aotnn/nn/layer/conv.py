"""Convolution layers."""
from __future__ import annotations

__all__ = ['Conv2d']

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ..cell import Cell
from ._checks import int_or_pair, one_of, positive_int


class Conv2d(Cell):
    """2-D convolution.

    Args:
        in_channels: input channels.
        out_channels: output channels.
        kernel_size: int or (height, width).
        stride: int or pair. Default: 1.
        pad_mode: 'same' (output = ceil(input / stride), TF-style), 'valid' or 'pad'. Default: 'same'.
        padding: with 'pad': int or (top, bottom, left, right). Default: 0.
        dilation: int or pair. Default: 1.
        group: groups; in and out channels must divide by it. Default: 1.
        has_bias: whether to add a bias. Default: False.
        weight_init: initializer of the (out, in/group, kh, kw) weight. Default: 'normal'.
        bias_init: initializer of the bias; None means 'zeros'. Default: None.
        data_format: 'NCHW' or 'NHWC'. Default: 'NCHW'.
    Raises:
        ValueError: an argument out of range; padding other than 0 without pad_mode='pad'.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, pad_mode: str = "same",
                 padding=0, dilation=1, group: int = 1, has_bias: bool = False, weight_init="normal",
                 bias_init=None, data_format: str = "NCHW", dtype=mstype.float32):
        super().__init__()
        self.in_channels = positive_int(in_channels, "in_channels", "Conv2d")
        self.out_channels = positive_int(out_channels, "out_channels", "Conv2d")
        self.kernel_size = int_or_pair(kernel_size, "kernel_size", "Conv2d")
        self.stride = int_or_pair(stride, "stride", "Conv2d")
        self.dilation = int_or_pair(dilation, "dilation", "Conv2d")
        self.pad_mode = one_of(pad_mode.lower() if isinstance(pad_mode, str) else pad_mode,
                               ("same", "valid", "pad"), "pad_mode", "Conv2d")
        self.data_format = one_of(data_format, ("NCHW", "NHWC"), "data_format", "Conv2d")
        self.group = positive_int(group, "group", "Conv2d")
        if in_channels % group or out_channels % group:
            raise ValueError(f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by group ({group})")
        if isinstance(padding, int):
            padding_values = (padding,)
        elif isinstance(padding, (tuple, list)) and len(padding) == 4:
            padding_values = tuple(padding)
        else:
            raise ValueError(f"Conv2d: padding must be an int or a tuple of 4 ints, got {padding!r}")
        if any(not isinstance(p, int) or p < 0 for p in padding_values):
            raise ValueError(f"Conv2d: padding values must be non-negative ints, got {padding!r}")
        if self.pad_mode != "pad" and any(padding_values):
            raise ValueError(f"Conv2d: padding must be 0 when pad_mode is {self.pad_mode!r}, got {padding!r}")
        self.padding = padding
        self.has_bias = bool(has_bias)
        self.weight_init, self.bias_init = weight_init, bias_init
        kh, kw = self.kernel_size
        shape = ([out_channels, in_channels // group, kh, kw] if data_format == "NCHW"
                 else [out_channels, kh, kw, in_channels // group])
        self.weight = Parameter(initializer(weight_init, shape, dtype), name="weight")
        bias_value = initializer("zeros" if bias_init is None else bias_init, [out_channels], dtype)
        self.bias = Parameter(bias_value, name="bias") if has_bias else None

    def construct(self, x):
        channel_axis = 1 if self.data_format == "NCHW" else 3
        if x.ndim != 4 or x.shape[channel_axis] != self.in_channels:
            raise ValueError(f"Conv2d: expected a 4-D {self.data_format} input with {self.in_channels} "
                             f"channels, got shape {x.shape}")
        return ops.conv2d(x, self.weight, self.bias if self.has_bias else None, self.stride, self.pad_mode,
                          self.padding, self.dilation, self.group, self.data_format)

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}, weight_init={self.weight_init}, bias_init={self.bias_init}, "
                f"format={self.data_format}")
