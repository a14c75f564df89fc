"""MindSpore's functional ops (``ops.relu``, ``ops.matmul``...): each one names a lowering rule."""
from __future__ import annotations

from typing import Any

import builtins

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply


def _check_tensor(name: str, value: Any) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}: expected a Tensor, got {type(value).__name__}")


# -- arithmetic ------------------------------------------------------------------------------
def add(x, y): return apply("add", x, y)
def sub(x, y): return apply("sub", x, y)
def mul(x, y): return apply("mul", x, y)
def div(x, y): return apply("div", x, y)
def floor_div(x, y): return apply("floor_div", x, y)
def fmod_floor(x, y): return apply("mod", x, y)
def pow(x, y): return apply("pow", x, y)  # noqa: A001 (MindSpore's name)
def maximum(x, y): return apply("maximum", x, y)
def minimum(x, y): return apply("minimum", x, y)
def neg(x): return apply("neg", x)
def abs(x): return apply("abs", x)  # noqa: A001
def exp(x): return apply("exp", x)
def log(x): return apply("log", x)
def sqrt(x): return apply("sqrt", x)
def rsqrt(x): return apply("rsqrt", x)
def square(x): return apply("square", x)
def sin(x): return apply("sin", x)
def cos(x): return apply("cos", x)
def tanh(x): return apply("tanh", x)
def sigmoid(x): return apply("sigmoid", x)
def floor(x): return apply("floor", x)
def ceil(x): return apply("ceil", x)
def round(x): return apply("round", x)  # noqa: A001
def sign(x): return apply("sign", x)
def erf(x): return apply("erf", x)
def relu(x): return apply("relu", x)
def relu6(x): return apply("relu6", x)


realdiv = div
mod = fmod_floor
negative = neg


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    return apply("clip", x, clip_value_min, clip_value_max)


clamp = clip = clip_by_value


# -- comparison and logic --------------------------------------------------------------------
def equal(x, y): return apply("equal", x, y)
def not_equal(x, y): return apply("not_equal", x, y)
def less(x, y): return apply("less", x, y)
def less_equal(x, y): return apply("less_equal", x, y)
def greater(x, y): return apply("greater", x, y)
def greater_equal(x, y): return apply("greater_equal", x, y)
def logical_and(x, y): return apply("logical_and", x, y)
def logical_or(x, y): return apply("logical_or", x, y)
def logical_not(x): return apply("logical_not", x)


def select(cond, x, y):
    """Element-wise ``x`` where ``cond`` else ``y``."""
    return apply("where", cond, x, y)


where = select


# -- types and shapes ------------------------------------------------------------------------
def cast(x, dtype):
    """``x`` converted to ``dtype``."""
    _check_tensor("x", x)
    return apply("cast", x, mstype.normalize(dtype).name)


def shape(x) -> tuple[int, ...]:
    return tuple(x.shape)


def dtype(x):
    return x.dtype


def rank(x) -> int:
    return len(x.shape)


def size(x) -> int:
    return x.size


def reshape(x, shape):
    _check_tensor("x", x)
    if isinstance(shape, int):
        shape = (shape,)
    return apply("reshape", x, tuple(int(s) for s in shape))


def transpose(x, input_perm=None):
    return apply("transpose", x, None if input_perm is None else tuple(input_perm))


def flatten(x, order="C", *, start_dim=1, end_dim=-1):
    return apply("flatten", x, start_dim=start_dim, end_dim=end_dim)


def expand_dims(x, axis): return apply("expand_dims", x, int(axis))
def unsqueeze(x, dim): return apply("expand_dims", x, int(dim))
def squeeze(x, axis=None): return apply("squeeze", x, axis)
def broadcast_to(x, shape): return apply("broadcast_to", x, tuple(shape))
def tile(x, multiples): return apply("tile", x, tuple(multiples))


def concat(tensors, axis=0):
    return apply("concat", *tensors, axis=axis)


cat = concat


def stack(tensors, axis=0):
    return apply("stack", *tensors, axis=axis)


def gather(input_params, input_indices, axis, batch_dims=0):
    return apply("gather", input_params, input_indices, axis=axis)


def _slice_bounds(index: slice, size: int) -> tuple[int, int, int]:
    start, stop, step = index.indices(size)
    if step < 0:
        raise IndexError("negative slice steps are not supported")
    return start, max(stop, start), step


def getitem(x: Tensor, index: Any) -> Tensor:
    """Basic indexing (ints, slices, None, Ellipsis) and integer-tensor indexing on axis 0."""
    if isinstance(index, Tensor):
        return apply("gather", x, index, axis=0)
    items = list(index) if isinstance(index, tuple) else [index]
    if builtins.sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis")
    shape_in = x.shape
    consumed = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > len(shape_in):
        raise IndexError(f"too many indices for a tensor of rank {len(shape_in)}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + [slice(None)] * (len(shape_in) - consumed) + items[at + 1:]
    else:
        items += [slice(None)] * (len(shape_in) - consumed)
    begin, end, strides, out_shape = [], [], [], []
    axis = 0
    for item in items:
        if item is None:
            out_shape.append(1)
            continue
        size_ = shape_in[axis]
        if isinstance(item, slice):
            start, stop, step = _slice_bounds(item, size_)
            begin.append(start), end.append(stop), strides.append(step)
            out_shape.append(len(range(start, stop, step)))
        elif isinstance(item, (int, np.integer)):
            i = int(item)
            if not -size_ <= i < size_:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size_}")
            i %= size_
            begin.append(i), end.append(i + 1), strides.append(1)
        else:
            raise IndexError(f"unsupported index {item!r} of type {type(item).__name__}")
        axis += 1
    if 0 in out_shape:
        raise IndexError(f"index {index!r} selects no element; zero-size tensors are not supported")
    out = apply("strided_slice", x, tuple(begin), tuple(end), tuple(strides)) if shape_in else x
    return apply("reshape", out, tuple(out_shape)) if tuple(out_shape) != out.shape else out


# -- reductions ------------------------------------------------------------------------------
def reduce_sum(x, axis=None, keep_dims=False): return apply("sum", x, axis, keep_dims)
def mean(x, axis=None, keep_dims=False): return apply("mean", x, axis, keep_dims)
def amax(x, axis=None, keep_dims=False): return apply("max", x, axis, keep_dims)
def amin(x, axis=None, keep_dims=False): return apply("min", x, axis, keep_dims)
def prod(x, axis=None, keep_dims=False): return apply("prod", x, axis, keep_dims)


reduce_mean, reduce_max, reduce_min, reduce_prod = mean, amax, amin, prod
sum = reduce_sum  # noqa: A001


def argmax(input=None, dim=None, keepdim=False, *, x=None, axis=None, keepdims=None):  # noqa: A002
    """Index of the maximum along ``dim`` (every element when None); int64, as MindSpore's ``ops.argmax``.

    MindSpore 2.x names the arguments ``input``, ``dim``, ``keepdim``; the 1.x keywords ``x``, ``axis``,
    ``keepdims`` are accepted too.

    Raises:
        TypeError: both spellings of one argument given.
    """
    for new_name, new_value, old_name, old_value in (("input", input, "x", x), ("dim", dim, "axis", axis)):
        if new_value is not None and old_value is not None:
            raise TypeError(f"argmax: got both {new_name!r} and {old_name!r}")
    input = x if input is None else input  # noqa: A001
    dim = axis if dim is None else dim
    keepdim = keepdim if keepdims is None else keepdims
    _check_tensor("input", input)
    return apply("argmax", input, dim, keepdim, "int64")


def argmin(x, axis=None, keepdims=False):
    return apply("argmin", x, axis, keepdims, "int64")


# -- neural network ------------------------------------------------------------------------------
def matmul(x, y): return apply("matmul", x, y)


def batch_matmul(x, y, transpose_a=False, transpose_b=False):
    return apply("matmul", x, y, transpose_a, transpose_b)


def dense(x, weight, bias=None): return apply("dense", x, weight, bias)
def softmax(x, axis=-1): return apply("softmax", x, axis)
def log_softmax(x, axis=-1): return apply("log_softmax", x, axis)


def conv2d(x, weight, bias=None, stride=1, pad_mode="same", padding=0, dilation=1, groups=1,
           data_format="NCHW"):
    return apply("conv2d", x, weight, bias, stride, pad_mode, padding, dilation, groups, data_format)


def max_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, data_format="NCHW",
               dilation=1, return_indices=False):
    return apply("max_pool2d", x, kernel_size, stride, pad_mode, padding, ceil_mode, data_format, dilation,
                 return_indices)


def avg_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
               count_include_pad=None, data_format="NCHW", divisor_override=None):
    return apply("avg_pool2d", x, kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad,
                 data_format, divisor_override)


def batch_norm(x, gamma, beta, mean_, variance, epsilon=1e-5, training=False, axis=1):
    return apply("batch_norm", x, gamma, beta, mean_, variance, epsilon, training, axis)


# -- creation (values known ahead of time: plain data, no graph) ---------------------------------
def _creation_dtype(dtype, default):
    return mstype.to_numpy(dtype if dtype is not None else default)


def ones(shape, dtype=None): return Tensor._from_numpy(np.ones(_shape(shape), _creation_dtype(dtype, mstype.float32)))
def zeros(shape, dtype=None): return Tensor._from_numpy(np.zeros(_shape(shape), _creation_dtype(dtype, mstype.float32)))
def ones_like(x, dtype=None): return ones(x.shape, dtype or x.dtype)
def zeros_like(x, dtype=None): return zeros(x.shape, dtype or x.dtype)


def full(size, fill_value, dtype=None):
    """A tensor filled with ``fill_value``; int64 (truncating the value) when dtype is None, as MindSpore."""
    np_dtype = _creation_dtype(dtype, mstype.int64)
    return Tensor._from_numpy(np.full(_shape(size), np.trunc(fill_value) if np_dtype.kind in "iu" else fill_value,
                                      np_dtype))


def fill(type, shape, value):  # noqa: A002 (MindSpore's argument name)
    return Tensor._from_numpy(np.full(_shape(shape), value, mstype.to_numpy(type)))


def arange(start=0, end=None, step=1, *, dtype=None):
    if end is None:
        start, end = 0, start
    values = np.arange(start, end, step)
    if dtype is not None:
        values = values.astype(mstype.to_numpy(dtype))
    elif values.dtype == np.float64:
        values = values.astype(np.float32)
    return Tensor._from_numpy(values)


def _shape(shape) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def assign(variable, value):
    """Give Parameter ``variable`` the value ``value`` (inside a compiled graph: after the call)."""
    import relay_frontend
    from ..common.parameter import Parameter
    from ._dispatch import _to_expr
    if not isinstance(variable, Parameter):
        raise TypeError(f"variable: expected a Parameter, got {type(variable).__name__}")
    capture = relay_frontend.current()
    if capture is None:
        variable.set_data(value)
        return variable
    _to_expr(variable, capture)
    expr = _to_expr(value, capture) if isinstance(value, Tensor) else None
    if expr is None:
        raise TypeError(f"value: expected a Tensor, got {type(value).__name__}")
    if tuple(value.shape) != tuple(variable.shape):
        raise ValueError(f"assign: value shape {value.shape} differs from {variable.name}'s {variable.shape}")
    if value.dtype != variable.dtype:
        expr = _to_expr(cast(value, variable.dtype), capture)
    capture.update_param(variable, expr)
    return value


def _latest_value(param) -> Tensor:
    """``param``'s value as an :func:`assign` earlier in the graph being captured left it (MindSpore orders
    reads after writes: a BatchNorm called twice in one step updates its moving statistics twice), else
    ``param`` itself."""
    import relay_frontend
    capture = relay_frontend.current()
    value = capture.pending_value(param) if capture is not None else None
    return param if value is None else Tensor._from_expr(value)


def uniform_random(shape, dtype=None) -> Tensor:
    """Samples of U[0, 1). Inside a compiled graph they are drawn afresh on every call (from the
    seed set by ``set_seed``), so dropout masks and similar change between steps."""
    import relay_frontend
    np_dtype = _creation_dtype(dtype, mstype.float32)
    capture = relay_frontend.current()
    if capture is not None:
        return Tensor._from_expr(capture.random_input(_shape(shape), np_dtype.name))
    from ..common.seed import get_rng
    return Tensor._from_numpy(get_rng().random(_shape(shape)).astype(np_dtype))


def __getattr__(name: str) -> Any:
    """``ops.functional.X`` (MindSpore's ``F.X``) for the functional ops defined in the family modules."""
    from .. import ops
    if name.startswith("_") or not hasattr(ops, name):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(ops, name)
