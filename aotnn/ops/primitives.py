"""MindSpore's primitive classes (``ops.ReLU()``, ``P.MatMul()``...): configured once, called like functions."""
from __future__ import annotations

from typing import Any

from ..common import dtype as mstype
from . import functional as F


class Primitive:
    """Base of primitive ops: ``__init__`` takes attributes, ``__call__`` the tensors."""

    def __init__(self, name: str | None = None):
        self.name = name or type(self).__name__
        self.attrs: dict[str, Any] = {}

    def add_prim_attr(self, name: str, value: Any) -> Primitive:
        self.attrs[name] = value
        return self

    def __repr__(self) -> str:
        return f"Prim[{self.name}]"


PrimitiveWithInfer = Primitive


def _unary(name: str, fn):
    return type(name, (Primitive,), {"__call__": lambda self, x: fn(x), "__doc__": f"``ops.{name}()(x)``."})


def _binary(name: str, fn):
    return type(name, (Primitive,), {"__call__": lambda self, x, y: fn(x, y), "__doc__": f"``ops.{name}()(x, y)``."})


ReLU = _unary("ReLU", F.relu)
ReLU6 = _unary("ReLU6", F.relu6)
Sigmoid = _unary("Sigmoid", F.sigmoid)
Tanh = _unary("Tanh", F.tanh)
Exp = _unary("Exp", F.exp)
Log = _unary("Log", F.log)
Sqrt = _unary("Sqrt", F.sqrt)
Rsqrt = _unary("Rsqrt", F.rsqrt)
Square = _unary("Square", F.square)
Neg = _unary("Neg", F.neg)
Abs = _unary("Abs", F.abs)
Floor = _unary("Floor", F.floor)
Sin = _unary("Sin", F.sin)
Cos = _unary("Cos", F.cos)
Erf = _unary("Erf", F.erf)
OnesLike = _unary("OnesLike", F.ones_like)
ZerosLike = _unary("ZerosLike", F.zeros_like)
LogicalNot = _unary("LogicalNot", F.logical_not)

Add = _binary("Add", F.add)
TensorAdd = Add
Sub = _binary("Sub", F.sub)
Mul = _binary("Mul", F.mul)
RealDiv = _binary("RealDiv", F.div)
Div = _binary("Div", F.div)
FloorDiv = _binary("FloorDiv", F.floor_div)
Pow = _binary("Pow", F.pow)
Maximum = _binary("Maximum", F.maximum)
Minimum = _binary("Minimum", F.minimum)
Equal = _binary("Equal", F.equal)
NotEqual = _binary("NotEqual", F.not_equal)
Less = _binary("Less", F.less)
LessEqual = _binary("LessEqual", F.less_equal)
Greater = _binary("Greater", F.greater)
GreaterEqual = _binary("GreaterEqual", F.greater_equal)
LogicalAnd = _binary("LogicalAnd", F.logical_and)
LogicalOr = _binary("LogicalOr", F.logical_or)


class MatMul(Primitive):
    """``x @ y`` with optional transposes of the last two axes."""

    def __init__(self, transpose_a: bool = False, transpose_b: bool = False):
        super().__init__()
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def __call__(self, x, y):
        return F.batch_matmul(x, y, self.transpose_a, self.transpose_b)


BatchMatMul = MatMul


class Softmax(Primitive):
    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis[0] if isinstance(axis, (tuple, list)) else axis

    def __call__(self, x):
        return F.softmax(x, self.axis)


class LogSoftmax(Softmax):
    def __call__(self, x):
        return F.log_softmax(x, self.axis)


class Transpose(Primitive):
    def __call__(self, x, input_perm):
        return F.transpose(x, input_perm)


class Reshape(Primitive):
    def __call__(self, x, shape):
        return F.reshape(x, shape)


class Shape(Primitive):
    def __call__(self, x):
        return F.shape(x)


class DType(Primitive):
    def __call__(self, x):
        return x.dtype


class Cast(Primitive):
    def __call__(self, x, dtype):
        return F.cast(x, dtype)


class Fill(Primitive):
    def __call__(self, type, shape, value):  # noqa: A002
        return F.fill(type, shape, value)


class ExpandDims(Primitive):
    def __call__(self, x, axis):
        return F.expand_dims(x, axis)


class Squeeze(Primitive):
    def __init__(self, axis=()):
        super().__init__()
        self.axis = axis

    def __call__(self, x):
        return F.squeeze(x, self.axis if self.axis != () else None)


class Flatten(Primitive):
    def __call__(self, x):
        return F.flatten(x)


class Concat(Primitive):
    def __init__(self, axis: int = 0):
        super().__init__()
        self.axis = axis

    def __call__(self, tensors):
        return F.concat(tensors, self.axis)


class Stack(Concat):
    def __call__(self, tensors):
        return F.stack(tensors, self.axis)


class Select(Primitive):
    def __call__(self, cond, x, y):
        return F.select(cond, x, y)


class Depend(Primitive):
    """Returns ``value``; the dependency on ``expr`` is implicit in a captured graph."""

    def __call__(self, value, expr):
        return value


class _Reduce(Primitive):
    _fn = None

    def __init__(self, keep_dims: bool = False):
        super().__init__()
        self.keep_dims = keep_dims

    def __call__(self, x, axis=()):
        return type(self)._fn(x, axis if axis != () else None, self.keep_dims)


ReduceSum = type("ReduceSum", (_Reduce,), {"_fn": staticmethod(F.reduce_sum)})
ReduceMean = type("ReduceMean", (_Reduce,), {"_fn": staticmethod(F.mean)})
ReduceMax = type("ReduceMax", (_Reduce,), {"_fn": staticmethod(F.amax)})
ReduceMin = type("ReduceMin", (_Reduce,), {"_fn": staticmethod(F.amin)})
ReduceProd = type("ReduceProd", (_Reduce,), {"_fn": staticmethod(F.prod)})


class Argmax(Primitive):
    """Index of the maximum along ``axis``; int32 by default, as MindSpore's ``ops.Argmax``."""

    def __init__(self, axis: int = -1, output_type=mstype.int32):
        super().__init__()
        self.axis, self.output_type = axis, output_type

    def __call__(self, x):
        return F.cast(F.argmax(x, self.axis), self.output_type)


class Argmin(Argmax):
    def __call__(self, x):
        return F.cast(F.argmin(x, self.axis), self.output_type)


class BiasAdd(Primitive):
    def __init__(self, data_format: str = "NCHW"):
        super().__init__()
        self.data_format = data_format

    def __call__(self, x, bias):
        if len(x.shape) > 2 and self.data_format.startswith("NC"):
            bias = F.reshape(bias, (-1,) + (1,) * (len(x.shape) - 2))
        return F.add(x, bias)


class Gather(Primitive):
    def __call__(self, params, indices, axis, batch_dims=0):
        return F.gather(params, indices, axis)
