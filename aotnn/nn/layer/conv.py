"""Convolution layers: Conv1d/2d/3d, their transposes, Conv2dBnAct and Unfold.

Geometry (MindSpore's): 'same' gives ``ceil(size / stride)`` (transposes: ``size * stride``), padding
TF-style with the odd pixel at the end; 'valid' pads nothing; 'pad' uses ``padding``. 1-D layers keep
MindSpore's 4-D weights: (out, in/group, 1, k), and (in, out/group, 1, k) for the transpose.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.primitives import Primitive
from ..cell import Cell
from ._checks import check_bool, strict_positive_int
from ._default_init import default_bias_init, default_weight_init, weight_fan_in
from .normalization import BatchNorm2d

__all__ = ['Conv1d', 'Conv2d', 'Conv3d', 'Conv1dTranspose', 'Conv2dTranspose', 'Conv3dTranspose',
           'Conv2dBnAct', 'Unfold']

_PAD_MODES = ("same", "valid", "pad")


# -- argument checks -------------------------------------------------------------------------------
def _int_tuple(value: Any, count: int, name: str, cls: str, minimum: int = 1) -> tuple[int, ...]:
    """An int or a tuple of ``count`` ints, each at least ``minimum``, as a tuple of ``count`` ints."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (int(value),) * count
    if not isinstance(value, (tuple, list)) or any(isinstance(v, bool) or not isinstance(v, (int, np.integer))
                                                   for v in value):
        raise TypeError(f"For '{cls}', the '{name}' must be an int or a tuple of {count} ints, but got {value!r}.")
    if len(value) != count:
        raise ValueError(f"For '{cls}', the '{name}' must be an int or a tuple of {count} ints, but got {value!r}.")
    if any(v < minimum for v in value):
        raise ValueError(f"For '{cls}', the '{name}' values must be at least {minimum}, but got {value!r}.")
    return tuple(int(v) for v in value)


def _padding(padding: Any, lengths: tuple[int, ...], pad_mode: str, cls: str):
    """Validate ``padding`` (an int or a tuple of one of ``lengths``); non-zero only with 'pad'."""
    if isinstance(padding, bool) or not isinstance(padding, (int, np.integer, tuple, list)):
        raise TypeError(f"For '{cls}', the 'padding' must be an int or a tuple of ints, but got {padding!r}.")
    values = (padding,) if isinstance(padding, (int, np.integer)) else tuple(padding)
    if not isinstance(padding, (int, np.integer)) and len(values) not in lengths:
        raise ValueError(f"For '{cls}', the 'padding' tuple must have {' or '.join(map(str, lengths))} items, "
                         f"but got {padding!r}.")
    if any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in values):
        raise TypeError(f"For '{cls}', the 'padding' items must be ints, but got {padding!r}.")
    if any(p < 0 for p in values):
        raise ValueError(f"For '{cls}', the 'padding' must be non-negative, but got {padding!r}.")
    if pad_mode != "pad" and any(values):
        raise ValueError(f"For '{cls}', the 'padding' must be 0 when 'pad_mode' is {pad_mode!r}, but got {padding!r}.")
    return tuple(int(p) for p in padding) if isinstance(padding, (tuple, list)) else int(padding)


def _pad_mode(pad_mode: Any, cls: str) -> str:
    if not isinstance(pad_mode, str):
        raise TypeError(f"For '{cls}', the 'pad_mode' must be a str, but got {type(pad_mode).__name__}.")
    if pad_mode.lower() not in _PAD_MODES:
        raise ValueError(f"For '{cls}', the 'pad_mode' must be one of {_PAD_MODES}, but got {pad_mode!r}.")
    return pad_mode.lower()


def _expand_1d_weight(init: Any, rank: int) -> Any:
    """Conv1d accepts a 3-D weight Tensor; the parameter keeps MindSpore's 4-D layout."""
    if isinstance(init, (Tensor, np.ndarray)) and len(init.shape) == rank - 1:
        data = init.asnumpy() if isinstance(init, Tensor) else init
        return Tensor(np.expand_dims(data, 2), init.dtype if isinstance(init, Tensor) else None)
    return init


# -- shared base -------------------------------------------------------------------------------------
class _Conv(Cell):
    """Validates the common arguments and creates ``weight`` (and ``bias``)."""

    _spatial = 2
    _padding_lengths: tuple[int, ...] = (2, 4)
    _transposed = False
    _format = "NCHW"

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                 has_bias, weight_init, bias_init, data_format, dtype):
        super().__init__()
        cls = type(self).__name__
        self.in_channels = strict_positive_int(in_channels, "in_channels", cls)
        self.out_channels = strict_positive_int(out_channels, "out_channels", cls)
        self.group = strict_positive_int(group, "group", cls)
        self.kernel_size = _int_tuple(kernel_size, self._spatial, "kernel_size", cls)
        self.stride = _int_tuple(stride, self._spatial, "stride", cls)
        self.dilation = _int_tuple(dilation, self._spatial, "dilation", cls)
        self.pad_mode = _pad_mode(pad_mode, cls)
        self.padding = _padding(padding, self._padding_lengths, self.pad_mode, cls)
        self.has_bias = check_bool(bool(has_bias) if isinstance(has_bias, np.bool_) else has_bias, "has_bias", cls)
        if in_channels % group or out_channels % group:
            raise ValueError(f"For '{cls}', the 'in_channels' ({in_channels}) and 'out_channels' ({out_channels}) "
                             f"must be divisible by 'group' ({group}).")
        self.data_format = data_format
        self.weight_init, self.bias_init = weight_init, bias_init
        shape = self._weight_shape()
        self.weight = Parameter(initializer(default_weight_init(weight_init), shape, dtype), name="weight")
        if self.has_bias:
            bias_value = initializer(default_bias_init(bias_init, weight_fan_in(shape)), [out_channels], dtype)
            self.bias = Parameter(bias_value, name="bias")
        else:
            self.bias = None

    def _weight_shape(self) -> list[int]:
        if self._transposed:
            return [self.in_channels, self.out_channels // self.group, *self.kernel_size]
        if self.data_format == "NHWC":
            return [self.out_channels, *self.kernel_size, self.in_channels // self.group]
        return [self.out_channels, self.in_channels // self.group, *self.kernel_size]

    def _check_input(self, x, rank: int, channel_axis: int = 1) -> None:
        if x.ndim != rank or x.shape[channel_axis] != self.in_channels:
            raise ValueError(f"For '{type(self).__name__}', the input must be {rank}-D with {self.in_channels} "
                             f"channels ({self.data_format}), but got shape {x.shape}.")

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
                f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
                f"has_bias={self.has_bias}, weight_init={self.weight_init}, bias_init={self.bias_init}, "
                f"format={self.data_format}")


# -- convolutions ------------------------------------------------------------------------------------
class Conv2d(_Conv):
    """2-D convolution: ``out_j = sum_i ccor(W_ij, X_i) + b_j``.

    Args:
        in_channels (int): input channels C_in.
        out_channels (int): output channels C_out.
        kernel_size (Union[int, tuple[int]]): int or (height, width).
        stride (Union[int, tuple[int]]): int or pair. Default: 1.
        pad_mode (str): 'same' (output ceil(input / stride), TF-style), 'valid' or 'pad'. Default: 'same'.
        padding (Union[int, tuple[int]]): with 'pad': an int, (h, w) or (top, bottom, left, right). Default: 0.
        dilation (Union[int, tuple[int]]): int or pair. Default: 1.
        group (int): groups; in and out channels must divide by it (group == channels: depthwise). Default: 1.
        has_bias (bool): whether to add a bias. Default: False.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): initializer of the weight,
            (out, in/group, kh, kw), or (out, kh, kw, in/group) for NHWC. Default: None, MindSpore 2.x's
            HeUniform(negative_slope=sqrt(5)) over fan_in.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): initializer of the bias. Default: None,
            Uniform(1 / sqrt(fan_in)) (MindSpore 2.x).
        data_format (str): 'NCHW' or 'NHWC'. Default: 'NCHW'.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W), or (N, H, W, C_in) for NHWC.

    Outputs:
        Tensor (N, C_out, H_out, W_out), or (N, H_out, W_out, C_out).

    Raises:
        TypeError: ``in_channels``, ``out_channels`` or ``group`` not an int; ``kernel_size``, ``stride``,
            ``padding`` or ``dilation`` neither an int nor a tuple; ``has_bias`` not a bool.
        ValueError: a size below 1; negative padding; an unknown ``pad_mode`` or ``data_format``; a padding
            tuple of the wrong length; non-zero padding without 'pad'; channels not divisible by ``group``.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCHW",
                 dtype=mstype.float32):
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"For 'Conv2d', the 'data_format' must be 'NCHW' or 'NHWC', but got {data_format!r}.")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, data_format, dtype)

    def construct(self, x):
        self._check_input(x, 4, 1 if self.data_format == "NCHW" else 3)
        return ops.conv2d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding, self.dilation,
                          self.group, self.data_format)


class Conv1d(_Conv):
    """1-D convolution of (N, C_in, L).

    Args:
        kernel_size (int): kernel width k. ``stride`` (int, default 1), ``dilation`` (int, default 1).
        padding (Union[int, tuple[int]]): with 'pad': an int or (left, right). Default: 0.
        weight_init: initializer of the (out, in/group, 1, k) weight (a 3-D Tensor is accepted). Default: None
            (as :class:`Conv2d`).
        Others as :class:`Conv2d` (no data_format).

    Inputs:
        - **x** (Tensor) - (N, C_in, L).

    Outputs:
        Tensor (N, C_out, L_out): 'same' ceil(L / stride), 'valid' ceil((L - dilation * (k - 1)) / stride),
        'pad' floor((L + 2 * padding - dilation * (k - 1) - 1) / stride) + 1.

    Raises:
        TypeError: ``kernel_size``, ``stride``, ``padding`` or ``dilation`` not an int; see :class:`Conv2d`.
        ValueError: see :class:`Conv2d`.
    """

    _padding_lengths = (1, 2)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, dtype=mstype.float32):
        for name, value in (("kernel_size", kernel_size), ("stride", stride), ("dilation", dilation)):
            _int_tuple(value, 1, name, "Conv1d")
        # MindSpore runs 1-D as 2-D on a height-1 image and keeps the (1, k) sizes
        super().__init__(in_channels, out_channels, (1, _one(kernel_size)), (1, _one(stride)), pad_mode, padding,
                         (1, _one(dilation)), group, has_bias, _expand_1d_weight(weight_init, 4), bias_init,
                         "NCHW", dtype)

    def construct(self, x):
        self._check_input(x, 3)
        return ops.conv1d(x, self.weight, self.bias, self.stride[1], self.pad_mode, self.padding, self.dilation[1],
                          self.group)


class Conv3d(_Conv):
    """3-D convolution of (N, C_in, D, H, W).

    Args:
        kernel_size, stride, dilation (Union[int, tuple[int]]): int or (depth, height, width).
        padding (Union[int, tuple[int]]): with 'pad': an int, (d, h, w) or (head, tail, top, bottom, left, right).
        data_format (str): 'NCDHW' only. Default: 'NCDHW'.
        Others as :class:`Conv2d`.

    Inputs:
        - **x** (Tensor) - (N, C_in, D, H, W).

    Outputs:
        Tensor (N, C_out, D_out, H_out, W_out).

    Raises:
        ValueError: ``data_format`` not 'NCDHW'; see :class:`Conv2d`.
    """

    _spatial = 3
    _padding_lengths = (3, 6)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, data_format="NCDHW",
                 dtype=mstype.float32):
        if data_format != "NCDHW":
            raise ValueError(f"For 'Conv3d', the 'data_format' must be 'NCDHW', but got {data_format!r}.")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, data_format, dtype)

    def construct(self, x):
        self._check_input(x, 5)
        return ops.conv3d(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding, self.dilation,
                          self.group)


# -- transposed convolutions -------------------------------------------------------------------------
class _ConvTranspose(_Conv):
    _transposed = True

    def _set_output_padding(self, output_padding: Any) -> None:
        cls = type(self).__name__
        count = 1 if isinstance(self, Conv1dTranspose) else len(self.kernel_size)
        self.output_padding = _int_tuple(output_padding, count, "output_padding", cls, minimum=0)
        if self.pad_mode != "pad" and any(self.output_padding):
            raise ValueError(f"For '{cls}', the 'output_padding' must be 0 when 'pad_mode' is {self.pad_mode!r}, "
                             f"but got {output_padding!r}.")


class Conv2dTranspose(_ConvTranspose):
    """2-D transposed convolution (the gradient of Conv2d with respect to its input).

    Output height (width alike), with ``f = dilation * (k - 1) + 1``: 'same' ``H * stride``; 'valid'
    ``max(H * stride, (H - 1) * stride + f)``; 'pad' ``(H - 1) * stride - (top + bottom) + f + output_padding``.

    Args:
        in_channels (int), out_channels (int), kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
            bias_init: as :class:`Conv2d` (NCHW only).
        weight_init: initializer of the (in, out/group, kh, kw) weight. Default: None, HeUniform(sqrt(5)) with
            fan_in = out/group * kh * kw (MindSpore 2.x); the bias then defaults to Uniform(1 / sqrt(fan_in)).
        output_padding (Union[int, tuple[int]]): extra rows/columns at the bottom/right, 'pad' only. Default: 0.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError, ValueError: as :class:`Conv2d`; ``output_padding`` negative or set without 'pad'.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, output_padding=0,
                 dtype=mstype.float32):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, "NCHW", dtype)
        self._set_output_padding(output_padding)

    def construct(self, x):
        self._check_input(x, 4)
        return ops.conv2d_transpose(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                                    self.output_padding, self.dilation, self.group)


class Conv1dTranspose(_ConvTranspose):
    """1-D transposed convolution of (N, C_in, L); the weight is (in, out/group, 1, k).

    Output length: 'same' ``L * stride``; 'valid' ``max(L * stride, (L - 1) * stride + dilation * (k - 1) + 1)``;
    'pad' ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + 1 + output_padding``.

    Args:
        kernel_size, stride, dilation (int): as :class:`Conv1d`; ``padding``: an int or (left, right).
        output_padding (int): extra positions at the end, 'pad' only. Default: 0.
        Others as :class:`Conv2dTranspose`.

    Raises:
        TypeError, ValueError: as :class:`Conv1d`.
    """

    _padding_lengths = (1, 2)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init=None, bias_init=None, output_padding=0,
                 dtype=mstype.float32):
        for name, value in (("kernel_size", kernel_size), ("stride", stride), ("dilation", dilation)):
            _int_tuple(value, 1, name, "Conv1dTranspose")
        # MindSpore runs 1-D as 2-D on a height-1 image and keeps the (1, k) sizes
        super().__init__(in_channels, out_channels, (1, _one(kernel_size)), (1, _one(stride)), pad_mode, padding,
                         (1, _one(dilation)), group, has_bias, _expand_1d_weight(weight_init, 4), bias_init,
                         "NCHW", dtype)
        self._set_output_padding(output_padding)

    def construct(self, x):
        self._check_input(x, 3)
        return ops.conv1d_transpose(x, self.weight, self.bias, self.stride[1], self.pad_mode, self.padding,
                                    self.output_padding[0], self.dilation[1], self.group)


class Conv3dTranspose(_ConvTranspose):
    """3-D transposed convolution of (N, C_in, D, H, W); the weight is (in, out/group, kd, kh, kw).

    Output sizes as :class:`Conv2dTranspose`, per axis.

    Args:
        padding (Union[int, tuple[int]]): with 'pad': an int, (d, h, w) or (head, tail, top, bottom, left, right).
        output_padding (Union[int, tuple[int]]): extra size at the end of each axis, 'pad' only. Default: 0.
        data_format (str): 'NCDHW' only. Default: 'NCDHW'.
        Others as :class:`Conv3d`.

    Raises:
        TypeError, ValueError: as :class:`Conv3d`.
    """

    _spatial = 3
    _padding_lengths = (3, 6)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, output_padding=0, has_bias=False, weight_init=None, bias_init=None,
                 data_format="NCDHW", dtype=mstype.float32):
        if data_format != "NCDHW":
            raise ValueError(f"For 'Conv3dTranspose', the 'data_format' must be 'NCDHW', but got {data_format!r}.")
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, data_format, dtype)
        self._set_output_padding(output_padding)

    def construct(self, x):
        self._check_input(x, 5)
        return ops.conv3d_transpose(x, self.weight, self.bias, self.stride, self.pad_mode, self.padding,
                                    self.output_padding, self.dilation, self.group)


def _one(value: Any) -> int:
    return int(value[0]) if isinstance(value, (tuple, list)) else value


# -- combined and patches ---------------------------------------------------------------------------
class Conv2dBnAct(Cell):
    """Conv2d, then an optional BatchNorm2d, then an optional activation.

    Args:
        in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, has_bias,
            weight_init, bias_init: as :class:`Conv2d` (``bias_init`` defaults to 'zeros').
        has_bn (bool): add a BatchNorm2d. Default: False.
        momentum (float): BatchNorm's momentum, in [0, 1]. Default: 0.997.
        eps (float): BatchNorm's epsilon. Default: 1e-5.
        activation (Union[str, Cell, Primitive]): an activation name ('relu', 'leakyrelu', ...), a Cell, a
            Primitive or None. Default: None.
        alpha (float): the slope of 'leakyrelu' below 0. Default: 0.2.
        after_fake (bool): kept for quantisation-aware training (unused here). Default: True.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError: ``has_bn`` or ``after_fake`` not a bool; ``activation`` of another type; see :class:`Conv2d`.
        KeyError: an unknown activation name.
        ValueError: see :class:`Conv2d`.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode="same", padding=0, dilation=1,
                 group=1, has_bias=False, weight_init="normal", bias_init="zeros", has_bn=False, momentum=0.997,
                 eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.conv = Conv2d(in_channels, out_channels, kernel_size=kernel_size, stride=stride, pad_mode=pad_mode,
                           padding=padding, dilation=dilation, group=group, has_bias=has_bias,
                           weight_init=weight_init, bias_init=bias_init)
        self.has_bn = check_bool(has_bn, "has_bn", "Conv2dBnAct")
        self.after_fake = check_bool(after_fake, "after_fake", "Conv2dBnAct")
        self.has_act = activation is not None
        if has_bn:
            self.batchnorm = BatchNorm2d(out_channels, eps, momentum)
        self.activation = _activation(activation, alpha)

    def construct(self, x):
        x = self.conv(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x


def _activation(activation: Any, alpha: float):
    if activation is None or isinstance(activation, (Cell, Primitive)):
        return activation
    if not isinstance(activation, str):
        raise TypeError(f"For 'Conv2dBnAct', the 'activation' must be str, Cell or Primitive, "
                        f"but got {type(activation).__name__}.")
    from .activation import LeakyReLU, get_activation
    if activation.lower() == "leakyrelu":
        if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool):
            raise TypeError(f"For 'Conv2dBnAct', the 'alpha' must be a float, but got {type(alpha).__name__}.")
        return LeakyReLU(alpha)
    return get_activation(activation, "Conv2dBnAct")


class Unfold(Cell):
    """Extracts image patches (MindSpore's ExtractImagePatches) from an NCHW input.

    Output channel ``(i * ksize_col + j) * C + c`` of output pixel (r, s) is input pixel
    ``(c, r * stride_row + i * rate_row, s * stride_col + j * rate_col)`` (with 'same', of the zero-padded input).

    Args:
        ksizes (Union[tuple[int], list[int]]): [1, ksize_row, ksize_col, 1].
        strides (Union[tuple[int], list[int]]): [1, stride_row, stride_col, 1].
        rates (Union[tuple[int], list[int]]): [1, rate_row, rate_col, 1], the dilation inside a patch.
        padding (str): 'valid' (patches inside the image) or 'same' (TF-style zero padding, output
            ceil(size / stride)); case-insensitive. Default: 'valid'.

    Inputs:
        - **x** (Tensor) - (N, C, H, W).

    Outputs:
        Tensor (N, ksize_row * ksize_col * C, out_row, out_col), with 'valid'
        ``out_row = (H - (ksize_row + (ksize_row - 1) * (rate_row - 1))) // stride_row + 1``.

    Raises:
        TypeError: ``ksizes``, ``strides`` or ``rates`` neither a tuple nor a list.
        ValueError: one of them not [1, row, col, 1] with row, col >= 1; ``padding`` not 'same'/'valid'.
    """

    def __init__(self, ksizes, strides, rates, padding="valid"):
        super().__init__()
        self.ksizes = _patch_arg(ksizes, "ksize")
        self.strides = _patch_arg(strides, "stride")
        self.rates = _patch_arg(rates, "rate")
        if not isinstance(padding, str) or padding.lower() not in ("same", "valid"):
            raise ValueError(f"For 'Unfold', the 'padding' must be 'same' or 'valid', but got {padding!r}.")
        self.padding = padding.lower()

    def construct(self, x):
        if x.ndim != 4:
            raise ValueError(f"For 'Unfold', the input must be 4-D (NCHW), but got shape {x.shape}.")
        return ops.unfold(x, self.ksizes[1:3], self.strides[1:3], self.rates[1:3], self.padding)

    def extend_repr(self) -> str:
        return f"ksizes={self.ksizes}, strides={self.strides}, rates={self.rates}, padding={self.padding}"


def _patch_arg(value: Any, name: str) -> tuple[int, int, int, int]:
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"For 'Unfold', the '{name}s' must be a tuple or list, but got {type(value).__name__}.")
    if len(value) != 4 or value[0] != 1 or value[3] != 1:
        raise ValueError(f"For 'Unfold', the '{name}s' must be [1, {name}_row, {name}_col, 1], but got {value!r}.")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in value[1:3]):
        raise ValueError(f"For 'Unfold', the {name}_row and {name}_col must be positive ints, but got {value!r}.")
    return tuple(value)
