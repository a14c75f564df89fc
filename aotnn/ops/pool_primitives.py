"""Pooling primitives: ``ops.MaxPool`` and ``ops.AvgPool`` ('valid' or TF-style 'same')."""
from __future__ import annotations

from . import functional as F
from .primitives import Primitive

__all__ = ['MaxPool', 'AvgPool']


def _hw(value, name: str, cls: str) -> tuple[int, int]:
    """An int, (h, w) or (1, 1, h, w) as (h, w)."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not (isinstance(value, (tuple, list)) and len(value) in (2, 4) and all(isinstance(v, int) for v in value)):
        raise TypeError(f"{cls}: {name} must be an int or a tuple of 2 or 4 ints, got {value!r}")
    if any(v < 1 for v in value[-2:]):
        raise ValueError(f"{cls}: {name} must be positive, got {value!r}")
    return tuple(value[-2:])


class _Pool(Primitive):
    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        super().__init__()
        cls = type(self).__name__
        self.kernel_size, self.strides = _hw(kernel_size, "kernel_size", cls), _hw(strides, "strides", cls)
        if not isinstance(pad_mode, str) or pad_mode.lower() not in ("valid", "same"):
            raise ValueError(f"{cls}: pad_mode must be 'VALID' or 'SAME' (any case), got {pad_mode!r}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"{cls}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self.pad_mode, self.data_format = pad_mode.lower(), data_format


class MaxPool(_Pool):
    """``ops.MaxPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)`` on a 4-D input."""

    def __call__(self, x):
        return F.max_pool2d(x, self.kernel_size, self.strides, self.pad_mode, 0, False, self.data_format)


class AvgPool(_Pool):
    """``ops.AvgPool(kernel_size=1, strides=1, pad_mode='valid', data_format='NCHW')(x)``; 'same' leaves the
    padding out of each average."""

    def __call__(self, x):
        return F.avg_pool2d(x, self.kernel_size, self.strides, self.pad_mode, 0, False, None, self.data_format)
