"""Dropout, and the channel-wise Dropout1d / Dropout2d / Dropout3d."""
from __future__ import annotations

__all__ = ['Dropout', 'Dropout1d', 'Dropout2d', 'Dropout3d']

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell


class Dropout(Cell):
    r"""Dropout layer for the input.

    During training each element is zeroed with probability :math:`1 - keep\_prob` (that is ``p``) and the
    kept ones are scaled by :math:`\frac{1}{keep\_prob}`; in inference (the default until ``set_train()``)
    the layer returns its input. The mask is drawn from ``ops.uniform_random`` afresh on every call:
    ``aotnn.set_seed`` makes the sequence of masks reproducible.

    Give the rate in one of two ways, not both: ``keep_prob`` (the old, deprecated form: the kept fraction)
    or ``p`` (the dropped fraction). With neither, half the elements are dropped.

    Args:
        keep_prob (float): the keep rate, in (0, 1]. Default: None.
        p (Union[float, int]): the drop rate, in [0, 1). Default: None.
        dtype (mindspore.dtype): accepted for compatibility; unused. Default: mindspore.float32.

    Inputs:
        - **x** (Tensor) - float16 or float32, at least one dimension.

    Outputs:
        Tensor of the shape and dtype of ``x``.

    Raises:
        ValueError: If both `keep_prob` and `p` are given.
        TypeError: If `keep_prob` is not a float, or `p` not a float or int.
        ValueError: If `keep_prob` is not in range (0, 1], or `p` not in range [0, 1).
        TypeError: If the dtype of `x` is neither float16 nor float32.
        ValueError: If `x` has no dimension.
    """

    def __init__(self, keep_prob=None, p=None, dtype=mstype.float32):
        super().__init__()
        if keep_prob is not None and p is not None:
            raise ValueError("For 'Dropout', the 'keep_prob' and 'p' cannot be set at the same time; "
                             f"use 'p' only, but got keep_prob={keep_prob} and p={p}.")
        if keep_prob is not None:
            if isinstance(keep_prob, bool) or not isinstance(keep_prob, float):
                raise TypeError("For 'Dropout', the 'keep_prob' must be float, "
                                f"but got {type(keep_prob).__name__}.")
            if keep_prob <= 0 or keep_prob > 1:
                raise ValueError(f"For 'Dropout', the 'keep_prob' must be a number in range (0, 1], "
                                 f"but got {keep_prob}.")
        else:
            if p is None:
                p = 0.5
            if isinstance(p, bool) or not isinstance(p, (float, int)):
                raise TypeError(f"For 'Dropout', the 'p' must be float or int, but got {type(p).__name__}.")
            if p < 0 or p >= 1:
                raise ValueError(f"For 'Dropout', the 'p' must be a number in range [0, 1), but got {p}.")
        self.p = p
        self.keep_prob = keep_prob
        self.dtype = dtype
        self._keep = float(keep_prob) if keep_prob is not None else 1.0 - float(p)

    def construct(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'Dropout', the 'x' must be a Tensor, but got {type(x).__name__}.")
        if x.dtype not in (mstype.float16, mstype.float32):
            raise TypeError(f"For 'Dropout', the dtype of 'x' must be float16 or float32, but got {x.dtype}.")
        if x.ndim < 1:
            raise ValueError(f"For 'Dropout', the rank of 'x' must be at least 1, but got shape {x.shape}.")
        if not self.training or self._keep == 1.0:
            return x
        kept = ops.less(ops.uniform_random(x.shape), self._keep)
        return x * ops.cast(kept, x.dtype) * (1.0 / self._keep)

    def extend_repr(self) -> str:
        return f"keep_prob={self.keep_prob}" if self.p is None else f"p={self.p}"


class _ChannelDropout(Cell):
    """Zeroes whole channels: during training each (sample, channel) slice of an (N, C, *spatial) or
    (C, *spatial) input is dropped with probability ``p`` and the kept ones are scaled by 1 / (1 - p)."""
    _spatial = 1

    def __init__(self, p: float = 0.5):
        super().__init__()
        name = type(self).__name__
        if isinstance(p, bool) or not isinstance(p, (float, int)):
            raise TypeError(f"For '{name}', the 'p' must be float or int, but got {type(p).__name__}.")
        if p < 0 or p >= 1:
            raise ValueError(f"For '{name}', the 'p' must be a number in range [0, 1), but got {p}.")
        self.p = p
        self._keep = 1.0 - float(p)

    def construct(self, x):
        name = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{name}', the 'x' must be a Tensor, but got {type(x).__name__}.")
        if x.dtype not in (mstype.float16, mstype.float32):
            raise TypeError(f"For '{name}', the dtype of 'x' must be float16 or float32, but got {x.dtype}.")
        if x.ndim not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(f"For '{name}', the input must be {self._spatial + 1}-D or {self._spatial + 2}-D, "
                             f"but got shape {x.shape}.")
        if not self.training or self._keep == 1.0:
            return x
        mask_shape = tuple(x.shape[:x.ndim - self._spatial]) + (1,) * self._spatial
        kept = ops.less(ops.uniform_random(mask_shape), self._keep)
        return x * ops.cast(kept, x.dtype) * (1.0 / self._keep)

    def extend_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(_ChannelDropout):
    """Channel dropout of (N, C, L) or (C, L) inputs: each channel is zeroed with probability ``p`` in training.

    Args:
        p (float): the drop rate, in [0, 1). Default: 0.5.

    Raises:
        TypeError: ``p`` not a number; x not float16/float32.
        ValueError: ``p`` outside [0, 1); x not 2-D or 3-D.
    """
    _spatial = 1


class Dropout2d(_ChannelDropout):
    """Channel dropout of (N, C, H, W) or (C, H, W) inputs: each channel is zeroed with probability ``p``
    in training.

    Args:
        p (float): the drop rate, in [0, 1). Default: 0.5.

    Raises:
        TypeError: ``p`` not a number; x not float16/float32.
        ValueError: ``p`` outside [0, 1); x not 3-D or 4-D.
    """
    _spatial = 2


class Dropout3d(_ChannelDropout):
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W) inputs: each channel is zeroed with probability ``p``
    in training.

    Args:
        p (float): the drop rate, in [0, 1). Default: 0.5.

    Raises:
        TypeError: ``p`` not a number; x not float16/float32.
        ValueError: ``p`` outside [0, 1); x not 4-D or 5-D.
    """
    _spatial = 3
