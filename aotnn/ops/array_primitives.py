"""MindSpore primitive classes over the array ops: ``Tile``, ``Unstack``, ``Identity``, ``Zeros``/``Ones``,
``Sign``, ``Reciprocal``, ``L2Normalize``, ``ResizeNearestNeighbor``, ``AllReduce``."""
from __future__ import annotations

from ..common.tensor import Tensor
from . import functional as F
from .array_ops import reciprocal, unstack
from .composite_ops import ReduceOp
from .image_ops import resize_nearest_neighbor
from .primitives import Primitive

__all__ = ['Tile', 'Unstack', 'Identity', 'Zeros', 'Ones', 'Sign', 'Reciprocal', 'L2Normalize',
           'ResizeNearestNeighbor', 'AllReduce']


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


class AllReduce(Primitive):
    """``ops.AllReduce(op=ReduceOp.SUM, group=...)(x)``: ``x`` reduced over the ranks of ``group``.

    In a world of one it is ``x`` itself; across processes only eager SUM is supported (the collective runs
    on the host between compiled steps, see ``aotnn.communication``).
    """

    def __init__(self, op: str = ReduceOp.SUM, group: str = "hccl_world_group"):
        super().__init__()
        if op not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD):
            raise ValueError(f"AllReduce: op must be a ReduceOp (sum/max/min/prod), got {op!r}")
        self.op, self.group = op, group

    def __call__(self, x):
        from ..communication._collective import allreduce_sum_
        from ..communication.management import GlobalComm, get_group_size

        if not isinstance(x, Tensor):
            raise TypeError(f"AllReduce: x must be a Tensor, got {type(x).__name__}")
        if not GlobalComm.INITED or get_group_size(self.group) == 1:
            return x
        if x.is_symbolic or self.op != ReduceOp.SUM:
            raise NotImplementedError("AllReduce: across processes only an eager 'sum' is supported")
        data = x.asnumpy().copy()
        allreduce_sum_([data], self.group)
        return Tensor._from_numpy(data)
