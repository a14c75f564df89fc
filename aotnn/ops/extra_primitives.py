"""More MindSpore primitive classes: ``Slice``, ``ReduceAll``/``ReduceAny``/``ReduceStd``, ``BroadcastTo``,
``Range``, ``ReverseV2``, ``TensorShape``, ``Logit``, ``Dropout``, ``Dropout2D``."""
from __future__ import annotations

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F
from .array_ops import flip
from .primitives import Primitive
from .tensor_math_ops import all as _all
from .tensor_math_ops import any as _any
from .tensor_math_ops import std as _std

__all__ = ['Slice', 'ReduceAll', 'ReduceAny', 'ReduceStd', 'BroadcastTo', 'Range', 'ReverseV2', 'TensorShape',
           'Logit', 'Dropout', 'Dropout2D']


class Slice(Primitive):
    """``ops.Slice()(input_x, begin, size)``: the block starting at ``begin`` of ``size`` (-1: to the end)."""

    def __call__(self, input_x, begin, size):
        if len(begin) != input_x.ndim or len(size) != input_x.ndim:
            raise ValueError(f"Slice: begin and size need {input_x.ndim} entries, got {begin} and {size}")
        index = tuple(slice(b, input_x.shape[d] if s == -1 else b + s) for d, (b, s) in enumerate(zip(begin, size)))
        for d, (b, s) in enumerate(zip(begin, size)):
            if b < 0 or (s != -1 and (s <= 0 or b + s > input_x.shape[d])):
                raise ValueError(f"Slice: begin {begin} / size {size} fall outside shape {input_x.shape}")
        return F.getitem(input_x, index)


class _Truth(Primitive):
    _fn = None

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = keep_dims

    def __call__(self, x, axis=()):
        return type(self)._fn(x, None if axis == () else axis, self.keep_dims)


ReduceAll = type("ReduceAll", (_Truth,), {"_fn": staticmethod(_all), "__doc__": "``ops.ReduceAll(keep_dims)(x, axis)``."})
ReduceAny = type("ReduceAny", (_Truth,), {"_fn": staticmethod(_any), "__doc__": "``ops.ReduceAny(keep_dims)(x, axis)``."})


class ReduceStd(Primitive):
    """``ops.ReduceStd(axis=[], unbiased=True, keep_dims=False)(x)``: (standard deviation, mean); an empty
    ``axis`` reduces every axis."""

    def __init__(self, axis=[], unbiased: bool = True, keep_dims: bool = False):  # noqa: B006 (MindSpore's default)
        super().__init__()
        self.axis = None if axis in ((), []) else tuple(axis) if isinstance(axis, list) else axis
        self.unbiased, self.keep_dims = unbiased, keep_dims

    def __call__(self, input_x):
        deviation = _std(input_x, self.axis, 1 if self.unbiased else 0, self.keep_dims)
        return deviation, F.mean(input_x, self.axis, self.keep_dims)


class BroadcastTo(Primitive):
    """``ops.BroadcastTo(shape)(x)``."""

    def __init__(self, shape):
        super().__init__()
        self.shape = tuple(shape)

    def __call__(self, x):
        return F.broadcast_to(x, self.shape)


class Range(Primitive):
    """``ops.Range(maxlen)(start, limit, delta)``: values from ``start`` below ``limit`` by ``delta`` (the
    scalars are known ahead of time)."""

    def __init__(self, maxlen: int = 1000000):
        super().__init__()
        self.maxlen = maxlen

    def __call__(self, start, limit, delta):
        values = [v.asnumpy().item() if isinstance(v, Tensor) else v for v in (start, limit, delta)]
        dtype = start.dtype if isinstance(start, Tensor) else None
        out = np.arange(*values)
        if out.size > self.maxlen:
            raise ValueError(f"Range: {out.size} values exceed maxlen {self.maxlen}")
        return Tensor._from_numpy(out.astype(mstype.to_numpy(dtype) if dtype is not None else
                                             (np.float32 if out.dtype.kind == "f" else np.int64)))


class ReverseV2(Primitive):
    """``ops.ReverseV2(axis)(input_x)``: reversed along each axis of ``axis``."""

    def __init__(self, axis):
        super().__init__()
        self.axis = tuple(axis)

    def __call__(self, input_x):
        return flip(input_x, self.axis)


class TensorShape(Primitive):
    """``ops.TensorShape()(input_x)``: the shape as an int64 1-D Tensor."""

    def __call__(self, input_x):
        return Tensor._from_numpy(np.asarray(input_x.shape, np.int64))


class Logit(Primitive):
    """``ops.Logit(eps=-1.0)(x)``: ``log(x / (1 - x))``, ``x`` first clamped to [eps, 1 - eps] when eps >= 0."""

    def __init__(self, eps: float = -1.0):
        super().__init__()
        self.eps = float(eps)

    def __call__(self, x):
        if self.eps >= 0:
            x = F.clip_by_value(x, self.eps, 1.0 - self.eps)
        return F.log(F.div(x, F.sub(1.0, x)))


class Dropout(Primitive):
    """``ops.Dropout(keep_prob=0.5)(x)``: (``x`` with elements kept with probability ``keep_prob`` and scaled
    by 1 / keep_prob, the float mask of kept elements)."""

    def __init__(self, keep_prob: float = 0.5, Seed0: int = 0, Seed1: int = 0):  # noqa: N803 (MindSpore's names)
        super().__init__()
        if not 0 < keep_prob <= 1:
            raise ValueError(f"Dropout: keep_prob must be in (0, 1], got {keep_prob}")
        self.keep_prob = float(keep_prob)

    def _mask_shape(self, x):
        return x.shape

    def __call__(self, x):
        kept = F.cast(F.less(F.uniform_random(self._mask_shape(x)), self.keep_prob), x.dtype)
        return F.mul(F.mul(x, kept), 1.0 / self.keep_prob), kept


class Dropout2D(Dropout):
    """``ops.Dropout2D(keep_prob=0.5)(x)``: whole (N, C) channels of an NCHW ``x`` kept or zeroed; returns
    (output, bool mask of the channels' kept elements)."""

    def __init__(self, keep_prob: float = 0.5):
        super().__init__(keep_prob)

    def _mask_shape(self, x):
        return tuple(x.shape[:2]) + (1,) * (x.ndim - 2)

    def __call__(self, x):
        out, kept = super().__call__(x)
        return out, F.cast(F.broadcast_to(kept, x.shape), mstype.bool_)
