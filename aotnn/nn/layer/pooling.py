"""Pooling layers."""
from __future__ import annotations

__all__ = ['MaxPool2d', 'AvgPool2d']

from ... import ops
from ..cell import Cell
from ._checks import int_or_pair, one_of


class _Pool2d(Cell):
    def __init__(self, kernel_size=1, stride=1, pad_mode: str = "valid", data_format: str = "NCHW"):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = int_or_pair(kernel_size, "kernel_size", name)
        self.stride = int_or_pair(stride, "stride", name)
        self.pad_mode = one_of(pad_mode.lower() if isinstance(pad_mode, str) else pad_mode,
                               ("same", "valid"), "pad_mode", name)
        self.data_format = one_of(data_format, ("NCHW", "NHWC"), "data_format", name)

    def _check_input(self, x) -> None:
        if x.ndim != 4:
            raise ValueError(f"{type(self).__name__}: expected a 4-D input, got shape {x.shape}")

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode.upper()}"


class MaxPool2d(_Pool2d):
    """2-D max pooling.

    Args:
        kernel_size: int or pair. Default: 1.
        stride: int or pair. Default: 1.
        pad_mode: 'valid' or 'same' (TF-style, extra padding at the end). Default: 'valid'.
        data_format: 'NCHW' or 'NHWC'. Default: 'NCHW'.
    """

    def construct(self, x):
        self._check_input(x)
        return ops.max_pool2d(x, self.kernel_size, self.stride, self.pad_mode, 0, False, self.data_format)


class AvgPool2d(_Pool2d):
    """2-D average pooling; with 'same' the padding is left out of each average.

    Args:
        kernel_size: int or pair. Default: 1.
        stride: int or pair. Default: 1.
        pad_mode: 'valid' or 'same'. Default: 'valid'.
        data_format: 'NCHW' or 'NHWC'. Default: 'NCHW'.
    """

    def construct(self, x):
        self._check_input(x)
        return ops.avg_pool2d(x, self.kernel_size, self.stride, self.pad_mode, 0, False, None, self.data_format)
