"""MindSpore primitive classes over the array ops: ``Tile``, ``Unstack``, ``Split``, ``Identity``, ``Zeros``/``Ones``,
``Sign``, ``Reciprocal``, ``L2Normalize``, ``LpNorm``, ``ResizeNearestNeighbor``, ``Sort``,
``TopK``, ``GatherNd``, ``Assign``, ``AssignAdd``, ``StopGradient`` and ``SigmoidCrossEntropyWithLogits``."""
from __future__ import annotations

from ..common.tensor import Tensor
from . import functional as F
from .array_ops import reciprocal, split, unstack
from .classification_loss_ops import binary_cross_entropy_with_logits
from .image_ops import resize_nearest_neighbor
from .primitives import Primitive
from .selection_ops import assign_add, gather_nd, sort, stop_gradient, topk

__all__ = ['Tile', 'Unstack', 'Identity', 'Zeros', 'Ones', 'Sign', 'Reciprocal', 'L2Normalize',
           'LpNorm', 'ResizeNearestNeighbor', 'Sort', 'TopK', 'GatherNd', 'Assign', 'AssignAdd',
           'StopGradient', 'SigmoidCrossEntropyWithLogits', 'Split']


class Tile(Primitive):
    """``ops.Tile()(input, dims)``: ``input`` repeated ``dims[i]`` times along axis i (a longer ``dims``
    prepends axes of size 1 to the input first)."""

    def __call__(self, input, dims):  # noqa: A002 (MindSpore's argument name)
        if not isinstance(dims, (tuple, list)) or any(isinstance(d, bool) or not isinstance(d, int) or d <= 0
                                                       for d in dims):
            raise ValueError(f"Tile: dims must be a tuple of positive ints, got {dims!r}")
        if len(dims) < input.ndim:
            dims = (1,) * (input.ndim - len(dims)) + tuple(dims)
        elif len(dims) > input.ndim:
            input = F.reshape(input, (1,) * (len(dims) - input.ndim) + tuple(input.shape))  # noqa: A001
        return F.tile(input, tuple(dims))


class Unstack(Primitive):
    """``ops.Unstack(axis=0, num=None)(x)``: the tuple of slices of ``x`` along ``axis``."""

    def __init__(self, axis: int = 0, num=None):
        super().__init__()
        self.axis, self.num = axis, num

    def __call__(self, x):
        out = unstack(x, self.axis)
        if self.num is not None and self.num != len(out):
            raise ValueError(f"Unstack: num is {self.num} but axis {self.axis} has size {len(out)}")
        return out


class Split(Primitive):
    """``ops.Split(axis=0, output_num=1)(x)``: ``x`` cut along ``axis`` into ``output_num`` equal parts.

    Raises:
        TypeError: ``x`` is not a Tensor.
        ValueError: ``output_num`` is not positive, or the axis length is not divisible by it.
    """

    def __init__(self, axis: int = 0, output_num: int = 1):
        super().__init__()
        if isinstance(output_num, bool) or not isinstance(output_num, int) or output_num <= 0:
            raise ValueError(f"For 'Split', 'output_num' must be a positive int, but got {output_num!r}.")
        self.axis, self.output_num = axis, output_num

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'Split', 'x' must be a Tensor, but got {type(x).__name__}.")
        length = x.shape[self.axis]
        if length % self.output_num:
            raise ValueError(f"For 'Split', the length {length} of axis {self.axis} must be divisible by "
                             f"'output_num' {self.output_num}.")
        return split(x, length // self.output_num, self.axis)


class Identity(Primitive):
    """``ops.Identity()(x)``: ``x``."""

    def __call__(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"Identity: x must be a Tensor, got {type(x).__name__}")
        return x


class Zeros(Primitive):
    """``ops.Zeros()(size, type)``: a tensor of zeros."""

    def __call__(self, size, type=None):  # noqa: A002
        return F.zeros(size, type)


class Ones(Primitive):
    """``ops.Ones()(size, type)``: a tensor of ones."""

    def __call__(self, size, type=None):  # noqa: A002
        return F.ones(size, type)


class Sign(Primitive):
    """``ops.Sign()(x)``: -1, 0 or 1 element-wise."""

    def __call__(self, x):
        return F.sign(x)


class Reciprocal(Primitive):
    """``ops.Reciprocal()(x)``: 1 / x."""

    def __call__(self, x):
        return reciprocal(x)


class L2Normalize(Primitive):
    """``ops.L2Normalize(axis=0, epsilon=1e-4)(x)``: ``x / sqrt(max(sum(x**2, axis), epsilon))``."""

    def __init__(self, axis=0, epsilon: float = 1e-4):
        super().__init__()
        self.axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        if not isinstance(epsilon, (int, float)) or epsilon <= 0:
            raise ValueError(f"L2Normalize: epsilon must be a positive number, got {epsilon!r}")
        self.epsilon = float(epsilon)

    def __call__(self, x):
        squares = F.reduce_sum(F.square(x), self.axis, True)
        return F.div(x, F.sqrt(F.maximum(squares, self.epsilon)))


class ResizeNearestNeighbor(Primitive):
    """``ops.ResizeNearestNeighbor(size, align_corners=False, half_pixel_centers=False)(x)`` for NCHW ``x``."""

    def __init__(self, size, align_corners: bool = False, half_pixel_centers: bool = False):
        super().__init__()
        if half_pixel_centers:
            raise ValueError("ResizeNearestNeighbor: half_pixel_centers=True is not supported")
        self.size, self.align_corners = list(size), align_corners

    def __call__(self, input_x):
        return resize_nearest_neighbor(input_x, self.size, self.align_corners)


class LpNorm(Primitive):
    """``ops.LpNorm(axis, p=2, keep_dims=False, epsilon=1e-12)(x)``: ``max(sum(|x|^p, axis)^(1/p), epsilon)``.

    Raises:
        TypeError: ``p`` not an int, ``axis`` not an int or tuple of ints.
        ValueError: ``p`` negative.
    """

    def __init__(self, axis, p: int = 2, keep_dims: bool = False, epsilon: float = 1e-12):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, int) or p < 0:
            raise ValueError(f"LpNorm: p must be a non-negative int, got {p!r}")
        if not isinstance(axis, (int, tuple, list)) or isinstance(axis, bool):
            raise TypeError(f"LpNorm: axis must be an int or a tuple of ints, got {axis!r}")
        self.axis = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        self.p, self.keep_dims, self.epsilon = p, keep_dims, float(epsilon)

    def __call__(self, input):  # noqa: A002
        magnitude = F.abs(input)
        if self.p == 0:
            total = F.reduce_sum(F.cast(F.not_equal(input, 0), input.dtype), self.axis, self.keep_dims)
            return total
        if self.p == 1:
            norm = F.reduce_sum(magnitude, self.axis, self.keep_dims)
        elif self.p == 2:
            norm = F.sqrt(F.reduce_sum(F.square(input), self.axis, self.keep_dims))
        else:
            norm = F.pow(F.reduce_sum(F.pow(magnitude, float(self.p)), self.axis, self.keep_dims), 1.0 / self.p)
        return F.maximum(norm, self.epsilon)


class Sort(Primitive):
    """``ops.Sort(axis=-1, descending=False)(x)``: (values, int32 indices)."""

    def __init__(self, axis: int = -1, descending: bool = False):
        super().__init__()
        self.axis, self.descending = axis, descending

    def __call__(self, x):
        return sort(x, self.axis, self.descending)


class TopK(Primitive):
    """``ops.TopK(sorted=True)(input_x, k)``: the k largest along the last axis, (values, int32 indices)."""

    def __init__(self, sorted: bool = True):  # noqa: A002 (MindSpore's argument name)
        super().__init__()
        self.sorted = sorted

    def __call__(self, input_x, k):
        return topk(input_x, k, None, True, self.sorted)


class GatherNd(Primitive):
    """``ops.GatherNd()(input_x, indices)``; see :func:`aotnn.ops.gather_nd`."""

    def __call__(self, input_x, indices):
        return gather_nd(input_x, indices)


class Assign(Primitive):
    """``ops.Assign()(variable, value)``: the Parameter takes ``value``."""

    def __call__(self, variable, value):
        return F.assign(variable, value)


class AssignAdd(Primitive):
    """``ops.AssignAdd()(variable, value)``: ``variable += value``."""

    def __call__(self, variable, value):
        return assign_add(variable, value)


class StopGradient(Primitive):
    """``ops.StopGradient()(x)``: ``x`` with no gradient flowing back."""

    def __call__(self, x):
        return stop_gradient(x)


class SigmoidCrossEntropyWithLogits(Primitive):
    """``ops.SigmoidCrossEntropyWithLogits()(logits, label)``: the element-wise sigmoid cross entropy
    (no reduction)."""

    def __call__(self, logits, label):
        return binary_cross_entropy_with_logits(logits, label, reduction="none")
