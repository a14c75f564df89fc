"""Utility layers: norm clipping, L2 norm, one-hot, roll, triangular masks, L1 regularization."""
from __future__ import annotations

__all__ = ['ClipByNorm', 'Norm', 'OneHot', 'Roll', 'Tril', 'Triu', 'L1Regularizer']

import math

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell


def _axis(axis, cls: str, allow_none: bool) -> int | tuple | None:
    if axis is None and allow_none:
        return None
    if isinstance(axis, bool) or not isinstance(axis, (int, tuple)):
        expected = "None, an int or a tuple" if allow_none else "an int or a tuple"
        raise TypeError(f"{cls}: axis must be {expected}, got {type(axis).__name__}")
    if isinstance(axis, tuple) and any(isinstance(a, bool) or not isinstance(a, int) for a in axis):
        raise TypeError(f"{cls}: axis elements must be ints, got {axis!r}")
    return axis


def _float_tensor(x, name: str, cls: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{cls}: {name} must be a Tensor, got {type(x).__name__}")
    if x.dtype not in (mstype.float16, mstype.float32):
        raise TypeError(f"{cls}: {name} must be float16 or float32, got {x.dtype}")
    return x


class ClipByNorm(Cell):
    r"""Scales x down so that its L2-norm (over ``axis``) is at most ``clip_norm``:

    .. math::
        output = \frac{clip\_norm \cdot x}{\max(L_2(x), clip\_norm)}

    Args:
        axis (Union[None, int, tuple(int)]): axes of the norm; None for all. Default: None.

    Inputs:
        - **x** (Tensor) - float16 or float32.
        - **clip_norm** (Tensor) - shape () or (1,), or broadcastable to x.
    Outputs:
        Tensor of x's shape, float32.
    Raises:
        TypeError: axis not None/int/tuple; x not float16/float32.
    """

    def __init__(self, axis=None):
        super().__init__()
        self.axis = _axis(axis, "ClipByNorm", allow_none=True)

    def construct(self, x, clip_norm):
        _float_tensor(x, "x", "ClipByNorm")
        x32 = ops.cast(x, mstype.float32)
        clip = ops.cast(clip_norm, mstype.float32) if isinstance(clip_norm, Tensor) else float(clip_norm)
        l2norm = ops.sqrt(ops.reduce_sum(x32 * x32, self.axis, True))
        return (x32 * clip) / ops.maximum(l2norm, clip)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Norm(Cell):
    r"""Euclidean norm over ``axis``: :math:`\sqrt{\sum x_i^2}`.

    Args:
        axis (Union[tuple, int]): axes to reduce; () for all. Default: ().
        keep_dims (bool): keep reduced axes with length 1. Default: False.

    Inputs:
        - **x** (Tensor) - float16 or float32.
    Outputs:
        Tensor of x's dtype.
    Raises:
        TypeError: axis not an int/tuple; keep_dims not a bool.
    """

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        self.axis = _axis(axis, "Norm", allow_none=False)
        if not isinstance(keep_dims, bool):
            raise TypeError(f"Norm: keep_dims must be a bool, got {type(keep_dims).__name__}")
        self.keep_dims = keep_dims

    def construct(self, x):
        _float_tensor(x, "x", "Norm")
        axis = None if self.axis == () else self.axis
        return ops.sqrt(ops.reduce_sum(ops.square(x), axis, self.keep_dims))

    def extend_repr(self) -> str:
        return f"axis={self.axis}, keep_dims={self.keep_dims}"


class OneHot(Cell):
    """One-hot encoding: ``on_value`` where the new axis position equals the index, else ``off_value``.

    Args:
        axis (int): position of the new axis, -1 for last. Default: -1.
        depth (int): length of the new axis. Default: 1.
        on_value (float): value at the index. Default: 1.0.
        off_value (float): value elsewhere. Default: 0.0.
        dtype (mindspore.dtype): dtype of the result. Default: mindspore.float32.

    Inputs:
        - **indices** (Tensor) - int32 or int64; out-of-range indices give all ``off_value``.
    Outputs:
        Tensor of rank indices.ndim + 1, of ``dtype``.
    Raises:
        TypeError: axis or depth not an int; indices not int32/int64.
        ValueError: depth < 0; axis outside [-1, indices.ndim].
    """

    def __init__(self, axis=-1, depth=1, on_value=1.0, off_value=0.0, dtype=mstype.float32):
        super().__init__()
        for name, value in (("axis", axis), ("depth", depth)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"OneHot: {name} must be an int, got {type(value).__name__}")
        if depth < 0:
            raise ValueError(f"OneHot: depth must be >= 0, got {depth}")
        if axis < -1:
            raise ValueError(f"OneHot: axis must be >= -1, got {axis}")
        self.axis, self.depth = axis, depth
        self.dtype = mstype.normalize(dtype)
        self.on_value, self.off_value = on_value, off_value

    def construct(self, indices):
        if not isinstance(indices, Tensor) or indices.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"OneHot: indices must be an int32 or int64 Tensor, got "
                            f"{getattr(indices, 'dtype', type(indices).__name__)}")
        on = Tensor(self.on_value, self.dtype)
        off = Tensor(self.off_value, self.dtype)
        return ops.one_hot(indices, self.depth, on, off, self.axis)

    def extend_repr(self) -> str:
        return (f"axis={self.axis}, depth={self.depth}, on_value={self.on_value}, off_value={self.off_value}, "
                f"dtype={self.dtype}")


class Roll(Cell):
    """Rolls elements along axes; those pushed past the end wrap around to the start.

    Args:
        shift (Union[list(int), tuple(int), int]): places to shift along each axis (negative: backwards).
        axis (Union[list(int), tuple(int), int]): the axes, one per shift.

    Inputs:
        - **input_x** (Tensor) - any dtype.
    Outputs:
        Tensor of input_x's shape and dtype.
    Raises:
        TypeError: shift or axis (or an element) not an int.
        ValueError: shift and axis of different lengths; axis out of [-ndim, ndim).
    """

    def __init__(self, shift, axis):
        super().__init__()
        self.shift = _int_list(shift, "shift")
        self.axis = _int_list(axis, "axis")
        if len(self.shift) != len(self.axis):
            raise ValueError(f"Roll: shift and axis must have one length, got {len(self.shift)} and {len(self.axis)}")

    def construct(self, input_x):
        if not isinstance(input_x, Tensor):
            raise TypeError(f"Roll: input_x must be a Tensor, got {type(input_x).__name__}")
        for a in self.axis:
            if not -input_x.ndim <= a < input_x.ndim:
                raise ValueError(f"Roll: axis must be in [{-input_x.ndim}, {input_x.ndim}), got {a}")
        return ops.roll(input_x, self.shift, self.axis)

    def extend_repr(self) -> str:
        return f"shift={self.shift}, axis={self.axis}"


def _int_list(value, name: str) -> list[int]:
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list)):
        raise TypeError(f"Roll: {name} must be an int, a tuple or a list, got {type(value).__name__}")
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"Roll: {name} elements must be ints, got {type(item).__name__}")
    return items


class _Triangle(Cell):
    _fn = None

    def construct(self, x, k=0):
        name = type(self).__name__
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}: x must be a Tensor, got {type(x).__name__}")
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"{name}: k must be an int, got {type(k).__name__}")
        if x.ndim < 2:
            raise ValueError(f"{name}: x must be at least 2-D, got shape {x.shape}")
        return type(self)._fn(x, k)


class Tril(_Triangle):
    """Zeros the elements above the k-th diagonal of the last two axes.

    Inputs:
        - **x** (Tensor) - at least 2-D, any number type.
        - **k** (int) - the diagonal: 0 main, > 0 above, < 0 below. Default: 0.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: k not an int.
        ValueError: x below 2-D.
    """
    _fn = staticmethod(ops.tril)


class Triu(_Triangle):
    """Zeros the elements below the k-th diagonal of the last two axes.

    Inputs:
        - **x** (Tensor) - at least 2-D, any number type.
        - **k** (int) - the diagonal: 0 main, > 0 above, < 0 below. Default: 0.
    Outputs:
        Tensor of x's shape and dtype.
    Raises:
        TypeError: k not an int.
        ValueError: x below 2-D.
    """
    _fn = staticmethod(ops.triu)


class L1Regularizer(Cell):
    r"""L1 penalty of weights: :math:`scale \cdot \sum |w|`.

    Args:
        scale (Union[int, float]): the factor, > 0 and finite.

    Inputs:
        - **weights** (Tensor) - float16, float32 or float64.
    Outputs:
        Tensor of shape (), float32 (float64 for float64 weights).
    Raises:
        TypeError: scale not an int/float.
        ValueError: scale <= 0, inf or nan.
    """

    def __init__(self, scale):
        super().__init__()
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise TypeError(f"L1Regularizer: scale must be an int or a float, got {type(scale).__name__}")
        if math.isinf(scale) or math.isnan(scale):
            raise ValueError(f"L1Regularizer: scale must be finite, got {scale}")
        if scale <= 0:
            raise ValueError(f"L1Regularizer: scale must be > 0, got {scale}")
        self.scale = float(scale)

    def construct(self, weights):
        if not isinstance(weights, Tensor) or not weights.dtype.is_float:
            raise TypeError(f"L1Regularizer: weights must be a float Tensor, got "
                            f"{getattr(weights, 'dtype', type(weights).__name__)}")
        if weights.dtype == mstype.float16:
            weights = ops.cast(weights, mstype.float32)
        return ops.reduce_sum(ops.abs(weights)) * self.scale

    def extend_repr(self) -> str:
        return f"scale={self.scale}"
