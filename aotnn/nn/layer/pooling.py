"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d and the adaptive pools.

pad_mode (case-insensitive): 'valid' pads nothing; 'same' gives ``ceil(size / stride)`` with TF-style
padding (the odd pixel at the end), which average pooling leaves out of each average; 'pad' pads
``padding`` zeros (-inf for max) on both sides, and average pooling counts them unless
``count_include_pad=False``. ``padding``, ``ceil_mode``, ``dilation`` and ``return_indices`` need 'pad'
(``ceil_mode`` and ``count_include_pad`` also work with 'valid' for average pooling). 1-D layers pool
a height-1 image, as MindSpore does.
"""
from __future__ import annotations

from typing import Any

from ... import ops
from ..cell import Cell

__all__ = ['MaxPool1d', 'MaxPool2d', 'AvgPool1d', 'AvgPool2d', 'AdaptiveAvgPool1d', 'AdaptiveAvgPool2d',
           'AdaptiveAvgPool3d', 'AdaptiveMaxPool1d', 'AdaptiveMaxPool2d']


def _sizes(value: Any, count: int, name: str, cls: str, minimum: int = 1) -> tuple[int, ...]:
    """An int, or a tuple/list of 1 or ``count`` ints, as ``count`` ints."""
    lengths = (1, count)
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,)
    if not isinstance(value, (tuple, list)) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise TypeError(f"For '{cls}', the '{name}' must be an int or a tuple of ints, but got {value!r}.")
    if len(value) not in lengths:
        raise ValueError(f"For '{cls}', the '{name}' must be an int or a tuple of "
                         f"{' or '.join(map(str, lengths))} ints, but got {value!r}.")
    if any(v < minimum for v in value):
        raise ValueError(f"For '{cls}', the '{name}' values must be at least {minimum}, but got {value!r}.")
    return tuple(value) * count if len(value) == 1 else tuple(value)


def _check_bool(value: Any, name: str, cls: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


class _Pool(Cell):
    """Checks what every max/avg pool shares; ``nd`` is 1 or 2 (1-D pools keep MindSpore's (1, k) sizes)."""

    _nd = 2

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, data_format):
        super().__init__()
        cls = type(self).__name__
        if self._nd == 1:
            for name, value in (("kernel_size", kernel_size), ("stride", stride)):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise TypeError(f"For '{cls}', the '{name}' must be an int, but got {value!r}.")
            kernel_size, stride = (1, kernel_size), (1, stride)
        self.kernel_size = _sizes(kernel_size, 2, "kernel_size", cls)
        self.stride = _sizes(stride, 2, "stride", cls)
        if not isinstance(pad_mode, str):
            raise TypeError(f"For '{cls}', the 'pad_mode' must be a str, but got {type(pad_mode).__name__}.")
        if pad_mode.lower() not in ("valid", "same", "pad"):
            raise ValueError(f"For '{cls}', the 'pad_mode' must be 'valid', 'same' or 'pad' (case-insensitive), "
                             f"but got {pad_mode!r}.")
        self.pad_mode = pad_mode.lower()
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"For '{cls}', the 'data_format' must be 'NCHW' or 'NHWC', but got {data_format!r}.")
        self.data_format = data_format
        self.padding = _sizes(padding, self._nd, "padding", cls, minimum=0)
        self.ceil_mode = _check_bool(ceil_mode, "ceil_mode", cls)
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError(f"For '{cls}', the 'padding' must be 0 unless 'pad_mode' is 'pad', but got {padding!r}.")

    def _ranks(self) -> tuple[int, int]:
        return (2, 3) if self._nd == 1 else (3, 4)

    def _to_4d(self, x):
        """The input as a batched 4-D image (1-D pools: height 1)."""
        low, high = self._ranks()
        if x.ndim not in (low, high):
            raise ValueError(f"For '{type(self).__name__}', the input must have rank {low} or {high}, "
                             f"but got shape {x.shape}.")
        shape = (1,) * (high - x.ndim) + tuple(x.shape)
        if self._nd == 1:
            shape = shape[:2] + (1,) + shape[2:]
        return x if shape == tuple(x.shape) else ops.reshape(x, shape)

    def _back(self, out, x):
        """The pooled 4-D result in the input's rank."""
        shape = tuple(out.shape)
        if self._nd == 1:
            shape = shape[:2] + shape[3:]
        if x.ndim == self._ranks()[0]:
            shape = shape[1:]
        return out if shape == tuple(out.shape) else ops.reshape(out, shape)

    def _pads(self) -> tuple[int, int]:
        return (0, self.padding[0]) if self._nd == 1 else self.padding

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode.upper()}"


def _padding_or_format(padding, data_format):
    """The 4th positional argument is data_format in seed 000's order and padding in MindSpore 2.x's."""
    return (0, padding) if isinstance(padding, str) else (padding, data_format)


class MaxPool2d(_Pool):
    """2-D max pooling: ``out(N, C, h, w) = max over the kernel window of x(N, C, s0*h + d0*m, s1*w + d1*n)``.

    Args:
        kernel_size (Union[int, tuple[int]]): int or (height, width). Default: 1.
        stride (Union[int, tuple[int]]): int or pair. Default: 1.
        pad_mode (str): 'valid', 'same' or 'pad'. Default: 'valid'.
        padding (Union[int, tuple[int]]): with 'pad': an int or (h, w), on both sides. Default: 0.
            (In seed 000's positional order the 4th argument is ``data_format``; a str there is taken as one.)
        dilation (Union[int, tuple[int]]): spacing of the window's elements, 'pad' only. Default: 1.
        return_indices (bool): also return the int64 position of each maximum in its H * W plane, 'pad' only.
            Default: False.
        ceil_mode (bool): ceil instead of floor for the output size, 'pad' only. Default: False.
        data_format (str): 'NCHW' or 'NHWC' ('NHWC' not with 'pad'). Default: 'NCHW'.

    Inputs:
        - **x** (Tensor) - (N, C, H, W) or (C, H, W).

    Outputs:
        Tensor, or (Tensor, int64 Tensor) with ``return_indices``.

    Raises:
        TypeError: ``kernel_size``, ``stride``, ``padding`` or ``dilation`` neither an int nor a tuple; a flag
            not a bool.
        ValueError: sizes below 1; unknown ``pad_mode`` or ``data_format``; ``padding``, ``dilation``,
            ``return_indices`` or ``ceil_mode`` set without 'pad'; 'pad' with 'NHWC'; input not 3-D or 4-D.
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, data_format="NCHW"):
        padding, data_format = _padding_or_format(padding, data_format)
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        cls = type(self).__name__
        self.dilation = _sizes(dilation, self._nd, "dilation", cls)
        self.return_indices = _check_bool(return_indices, "return_indices", cls)
        if self.pad_mode != "pad" and (any(d != 1 for d in self.dilation) or return_indices or ceil_mode):
            raise ValueError(f"For '{cls}', 'dilation', 'return_indices' and 'ceil_mode' need pad_mode 'pad', "
                             f"but got pad_mode {pad_mode!r}.")
        if self.pad_mode == "pad" and data_format == "NHWC":
            raise ValueError(f"For '{cls}', 'NHWC' is not supported with pad_mode 'pad'.")

    def construct(self, x):
        dilation = (1, self.dilation[0]) if self._nd == 1 else self.dilation
        out = ops.max_pool2d(self._to_4d(x), self.kernel_size, self.stride, self.pad_mode, self._pads(),
                             self.ceil_mode, self.data_format, dilation, self.return_indices)
        if self.return_indices:
            return self._back(out[0], x), self._back(out[1], x)
        return self._back(out, x)


class MaxPool1d(MaxPool2d):
    """1-D max pooling of (N, C, L) or (C, L).

    Args:
        kernel_size (int): window length. Default: 1.
        stride (int): Default: 1.
        pad_mode (str): 'valid', 'same' or 'pad'. Default: 'valid'.
        padding (Union[int, tuple[int]]): with 'pad': zeros (-inf) on both ends. Default: 0.
        dilation (int): 'pad' only. Default: 1.
        return_indices (bool): also return the int64 position of each maximum, 'pad' only. Default: False.
        ceil_mode (bool): 'pad' only. Default: False.

    Raises:
        TypeError: ``kernel_size`` or ``stride`` not an int.
        ValueError: as :class:`MaxPool2d`; input not 2-D or 3-D.
    """

    _nd = 1

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices, ceil_mode, "NCHW")


class AvgPool2d(_Pool):
    """2-D average pooling.

    Args:
        kernel_size (Union[int, tuple[int]]): int or (height, width). Default: 1.
        stride (Union[int, tuple[int]]): int or pair. Default: 1.
        pad_mode (str): 'valid', 'same' (padding left out of the averages) or 'pad'. Default: 'valid'.
        padding (Union[int, tuple[int]]): with 'pad': an int or (h, w), on both sides. Default: 0.
            (In seed 000's positional order the 4th argument is ``data_format``; a str there is taken as one.)
        ceil_mode (bool): ceil instead of floor for the output size. Default: False.
        count_include_pad (bool): count the 'pad' padding in the averages. Default: True.
        divisor_override (int): divide every window sum by this instead. Default: None.
        data_format (str): 'NCHW' or 'NHWC' (only with the defaults of the four arguments above). Default: 'NCHW'.

    Inputs:
        - **x** (Tensor) - (N, C, H, W) or (C, H, W).

    Raises:
        TypeError: ``kernel_size`` or ``stride`` neither an int nor a tuple; a flag not a bool.
        ValueError: sizes below 1; unknown ``pad_mode`` or ``data_format``; padding without 'pad';
            ``divisor_override`` 0; 'NHWC' with padding, ceil_mode, count_include_pad=False or
            divisor_override; input not 3-D or 4-D.
    """

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None, data_format="NCHW"):
        padding, data_format = _padding_or_format(padding, data_format)
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        cls = type(self).__name__
        self.count_include_pad = _check_bool(count_include_pad, "count_include_pad", cls)
        if divisor_override is not None and (isinstance(divisor_override, bool)
                                             or not isinstance(divisor_override, int)):
            raise TypeError(f"For '{cls}', the 'divisor_override' must be an int, but got {divisor_override!r}.")
        if divisor_override == 0:
            raise ValueError(f"For '{cls}', the 'divisor_override' can not be 0.")
        self.divisor_override = divisor_override
        extras = self.pad_mode == "pad" or ceil_mode or not count_include_pad or divisor_override is not None
        if data_format == "NHWC" and extras:
            raise ValueError(f"For '{cls}', 'NHWC' supports only pad_mode 'same'/'valid' with the default "
                             f"ceil_mode, count_include_pad and divisor_override.")

    def construct(self, x):
        out = ops.avg_pool2d(self._to_4d(x), self.kernel_size, self.stride, self.pad_mode, self._pads(),
                             self.ceil_mode, self.count_include_pad, self.data_format, self.divisor_override)
        return self._back(out, x)


class AvgPool1d(AvgPool2d):
    """1-D average pooling of (N, C, L) or (C, L).

    Args:
        kernel_size (int): window length. Default: 1.
        stride (int): Default: 1.
        pad_mode (str): 'valid', 'same' (padding left out of the averages) or 'pad'. Default: 'valid'.
        padding (Union[int, tuple[int]]): with 'pad': zeros on both ends. Default: 0.
        ceil_mode (bool): Default: False.
        count_include_pad (bool): count the 'pad' padding in the averages. Default: True.

    Raises:
        TypeError: ``kernel_size`` or ``stride`` not an int.
        ValueError: as :class:`AvgPool2d`; input not 2-D or 3-D.
    """

    _nd = 1

    def __init__(self, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad, None, "NCHW")


# -- adaptive pooling -------------------------------------------------------------------------------
def _output_size(output_size: Any, count: int, cls: str):
    """An int, None, or a tuple of ``count`` entries that are ints or None."""
    if output_size is None or (isinstance(output_size, int) and not isinstance(output_size, bool)):
        output_size = (output_size,) * count
    if not isinstance(output_size, (tuple, list)):
        raise TypeError(f"For '{cls}', the 'output_size' must be an int, None or a tuple, "
                        f"but got {type(output_size).__name__}.")
    if len(output_size) != count:
        raise ValueError(f"For '{cls}', the 'output_size' tuple must have {count} items, but got {output_size!r}.")
    for size in output_size:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
            raise TypeError(f"For '{cls}', the 'output_size' items must be int or None, but got {output_size!r}.")
        if size is not None and size < 1:
            raise ValueError(f"For '{cls}', the 'output_size' items must be positive, but got {output_size!r}.")
    return tuple(output_size)


def _int_output_size(output_size: Any, cls: str) -> int:
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise TypeError(f"For '{cls}', the 'output_size' must be an int, but got {type(output_size).__name__}.")
    if output_size < 1:
        raise ValueError(f"For '{cls}', the 'output_size' must be at least 1, but got {output_size}.")
    return output_size


class _Adaptive(Cell):
    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Averages (N, C, L) over ``output_size`` equal windows of L, which must be a multiple of it.

    Args:
        output_size (int): the output length.

    Inputs:
        - **input** (Tensor) - (N, C, L), float16 or float32.

    Raises:
        TypeError: ``output_size`` not an int; input not float16/float32.
        ValueError: ``output_size`` < 1; input not 3-D; L smaller than or not a multiple of ``output_size``.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _int_output_size(output_size, "AdaptiveAvgPool1d")

    def construct(self, input):  # noqa: A002 (MindSpore's argument name)
        return ops.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """Maximum of (N, C, L) over ``output_size`` equal windows of L, which must be a multiple of it.

    Args, inputs and errors as :class:`AdaptiveAvgPool1d`.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _int_output_size(output_size, "AdaptiveMaxPool1d")

    def construct(self, x):
        return ops.adaptive_max_pool1d(x, self.output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """Adaptive average pooling of (N, C, H, W) or (C, H, W) to (H_out, W_out): output (i, j) averages rows
    [floor(i * H / H_out), ceil((i + 1) * H / H_out)) and the columns alike.

    Args:
        output_size (Union[int, tuple]): H_out (for both) or (H_out, W_out); None keeps the input's size.

    Raises:
        TypeError: ``output_size`` entries not int/None; input not float16/32/64.
        ValueError: ``output_size`` a tuple whose length is not 2; input not 3-D or 4-D.
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _output_size(output_size, 2, "AdaptiveAvgPool2d")

    def construct(self, input):  # noqa: A002
        return ops.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """Adaptive average pooling of (N, C, D, H, W) or (C, D, H, W) to (D_out, H_out, W_out).

    Args:
        output_size (Union[int, tuple]): an int for all three, or a tuple of 3 ints or None (keep the size).

    Raises:
        TypeError, ValueError: as :class:`AdaptiveAvgPool2d` (3 items, input 4-D or 5-D).
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = _output_size(output_size, 3, "AdaptiveAvgPool3d")

    def construct(self, input):  # noqa: A002
        return ops.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """Adaptive max pooling of (N, C, H, W) or (C, H, W) to (H_out, W_out), windows as :class:`AdaptiveAvgPool2d`.

    Args:
        output_size (Union[int, tuple]): H_out or (H_out, W_out); None keeps the input's size.
        return_indices (bool): also return the int64 position of each maximum in its H * W plane. Default: False.

    Raises:
        TypeError: ``output_size`` entries not int/None; ``return_indices`` not a bool; input not float16/32/64.
        ValueError: ``output_size`` a tuple whose length is not 2; input not 3-D or 4-D.
    """

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = _output_size(output_size, 2, "AdaptiveMaxPool2d")
        self.return_indices = _check_bool(return_indices, "return_indices", "AdaptiveMaxPool2d")

    def construct(self, input):  # noqa: A002
        return ops.adaptive_max_pool2d(input, self.output_size, self.return_indices)
