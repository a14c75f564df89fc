"""Element-wise ops: arithmetic, comparisons, logic, unary math, casts, where and clip."""
from __future__ import annotations

import numpy as np
from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter, number

_UNARY = {
    "relax.abs": "Abs", "relax.negative": "Neg", "relax.exp": "Exp", "relax.log": "Log", "relax.sqrt": "Sqrt",
    "relax.sin": "Sin", "relax.cos": "Cos", "relax.tan": "Tan", "relax.tanh": "Tanh", "relax.sigmoid": "Sigmoid",
    "relax.floor": "Floor", "relax.ceil": "Ceil", "relax.round": "Round", "relax.sign": "Sign",
    "relax.logical_not": "Not", "relax.erf": "Erf", "relax.nn.relu": "Relu", "relax.isnan": "IsNaN",
    "relax.isinf": "IsInf", "relax.acos": "Acos", "relax.asin": "Asin", "relax.atan": "Atan",
    "relax.acosh": "Acosh", "relax.asinh": "Asinh", "relax.atanh": "Atanh", "relax.cosh": "Cosh",
    "relax.sinh": "Sinh", "relax.bitwise_not": "BitwiseNot",
}
_BINARY = {
    "relax.add": "Add", "relax.subtract": "Sub", "relax.multiply": "Mul", "relax.divide": "Div",
    "relax.power": "Pow", "relax.maximum": "Max", "relax.minimum": "Min", "relax.equal": "Equal",
    "relax.less": "Less", "relax.less_equal": "LessOrEqual", "relax.greater": "Greater",
    "relax.greater_equal": "GreaterOrEqual", "relax.logical_and": "And", "relax.logical_or": "Or",
    "relax.logical_xor": "Xor", "relax.bitwise_and": "BitwiseAnd", "relax.bitwise_or": "BitwiseOr",
    "relax.bitwise_xor": "BitwiseXor",
}
# ONNX arithmetic and ordering take no bool tensors: those run on int32 (the result is cast back)
_NO_BOOL = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}
_OPSET_18 = {"BitwiseNot", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}


def _need(ctx: Context, op_type: str) -> None:
    if op_type in _OPSET_18 and ctx.opset < 18:
        raise UnsupportedOnnxOpError(f"{op_type} needs opset 18, exporting opset {ctx.opset}")


def _unary(ctx: Context, call: relax.Call) -> str:
    op_type = _UNARY[call.op.name]
    _need(ctx, op_type)
    return ctx.node(op_type, [ctx.tensor(call.args[0])])


def operands(ctx: Context, call: relax.Call) -> tuple[str, str, str]:
    """Both operands of a binary op in one dtype (Relax lets their dtypes differ, ONNX does not),
    and that dtype."""
    a, b = call.args
    dtype_a, dtype_b = ctx.dtype(a), ctx.dtype(b)
    name_a, name_b = ctx.tensor(a), ctx.tensor(b)
    if dtype_a == dtype_b:
        return name_a, name_b, dtype_a
    common = str(np.result_type(dtype_a, dtype_b))
    return (name_a if dtype_a == common else ctx.cast(name_a, common),
            name_b if dtype_b == common else ctx.cast(name_b, common), common)


def _binary(ctx: Context, call: relax.Call) -> str:
    op_type = _BINARY[call.op.name]
    _need(ctx, op_type)
    a, b, dtype = operands(ctx, call)
    if op_type in _NO_BOOL and dtype == "bool":
        a, b = ctx.cast(a, "int32"), ctx.cast(b, "int32")
        dtype = "int32"
    out = ctx.node(op_type, [a, b])
    comparison = op_type in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor")
    result_dtype = "bool" if comparison else dtype
    return out if result_dtype == ctx.out_dtype() else ctx.cast(out, ctx.out_dtype())


for _name in _UNARY:
    converter(_name)(_unary)
for _name in _BINARY:
    converter(_name)(_binary)


@converter("relax.not_equal")
def not_equal(ctx: Context, call: relax.Call) -> str:
    a, b, _ = operands(ctx, call)
    return ctx.node("Not", [ctx.node("Equal", [a, b])])


@converter("relax.rsqrt")
def rsqrt(ctx: Context, call: relax.Call) -> str:
    return ctx.node("Reciprocal", [ctx.node("Sqrt", [ctx.tensor(call.args[0])])])


@converter("relax.square")
def square(ctx: Context, call: relax.Call) -> str:
    x = ctx.tensor(call.args[0])
    return ctx.node("Mul", [x, x])


@converter("relax.isfinite")
def isfinite(ctx: Context, call: relax.Call) -> str:
    x = ctx.tensor(call.args[0])
    if np.dtype(ctx.dtype(call.args[0])).kind != "f":
        return ctx.fill(ctx.out_shape(), True, "bool")
    return ctx.node("Not", [ctx.node("Or", [ctx.node("IsNaN", [x]), ctx.node("IsInf", [x])])])


@converter("relax.trunc")
def trunc(ctx: Context, call: relax.Call) -> str:
    x = ctx.tensor(call.args[0])
    return ctx.node("Mul", [ctx.node("Sign", [x]), ctx.node("Floor", [ctx.node("Abs", [x])])])


@converter("relax.floor_divide")
def floor_divide(ctx: Context, call: relax.Call) -> str:
    a, b, dtype = operands(ctx, call)
    if np.dtype(dtype).kind == "f":
        return ctx.node("Floor", [ctx.node("Div", [a, b])])
    # integer Div truncates toward zero: step down by one where the signs differ and a remainder is left
    quotient = ctx.node("Div", [a, b])
    remainder = ctx.node("Sub", [a, ctx.node("Mul", [quotient, b])])
    zero = ctx.scalar(0, dtype)
    inexact = ctx.node("Not", [ctx.node("Equal", [remainder, zero])])
    signs_differ = ctx.node("Xor", [ctx.node("Less", [a, zero]), ctx.node("Less", [b, zero])])
    adjust = ctx.cast(ctx.node("And", [inexact, signs_differ]), dtype)
    return ctx.node("Sub", [quotient, adjust])


@converter("relax.floor_mod")
def floor_mod(ctx: Context, call: relax.Call) -> str:
    a, b, dtype = operands(ctx, call)
    if np.dtype(dtype).kind == "f":
        quotient = ctx.node("Floor", [ctx.node("Div", [a, b])])
        return ctx.node("Sub", [a, ctx.node("Mul", [quotient, b])])
    return ctx.node("Mod", [a, b], fmod=0)  # integer Mod takes the divisor's sign, like floor_mod


@converter("relax.mod")
def mod(ctx: Context, call: relax.Call) -> str:
    """Truncated remainder (the dividend's sign), as C's fmod."""
    a, b, _ = operands(ctx, call)
    return ctx.node("Mod", [a, b], fmod=1)


@converter("relax.astype")
def astype(ctx: Context, call: relax.Call) -> str:
    return ctx.cast(ctx.tensor(call.args[0]), str(call.attrs.dtype))


@converter("relax.where")
def where(ctx: Context, call: relax.Call) -> str:
    cond, x, y = (ctx.tensor(arg) for arg in call.args)
    if ctx.dtype(call.args[0]) != "bool":
        cond = ctx.cast(cond, "bool")
    dtype = ctx.out_dtype()
    x = x if ctx.dtype(call.args[1]) == dtype else ctx.cast(x, dtype)
    y = y if ctx.dtype(call.args[2]) == dtype else ctx.cast(y, dtype)
    return ctx.node("Where", [cond, x, y])


@converter("relax.clip")
def clip(ctx: Context, call: relax.Call) -> str:
    dtype = ctx.dtype(call.args[0])
    low, high = (ctx.scalar(number(arg), dtype) for arg in call.args[1:3])
    return ctx.node("Clip", [ctx.tensor(call.args[0]), low, high])

