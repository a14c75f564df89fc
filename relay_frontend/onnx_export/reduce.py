"""Reductions: sum, mean, max, min, prod, variance, std, argmax, argmin."""
from __future__ import annotations

from tvm import relax

from .context import Context, converter, ints

_REDUCE = {"relax.sum": "ReduceSum", "relax.mean": "ReduceMean", "relax.max": "ReduceMax",
           "relax.min": "ReduceMin", "relax.prod": "ReduceProd"}


def reduce(ctx: Context, op_type: str, x: str, rank: int, axes: list[int] | None, keepdims: bool) -> str:
    """``op_type`` over ``axes`` (None: all): axes are an input for ReduceSum from opset 13 and
    for every reduction from opset 18, an attribute before."""
    axes = list(range(rank)) if axes is None else [a % max(rank, 1) for a in axes]
    if rank == 0 or not axes:
        return ctx.node("Identity", [x])
    if op_type == "ReduceSum" or ctx.opset >= 18:
        return ctx.node(op_type, [x, ctx.int64s(axes, "axes")], keepdims=int(keepdims))
    return ctx.node(op_type, [x], axes=axes, keepdims=int(keepdims))


def _statistical(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    return reduce(ctx, _REDUCE[call.op.name], ctx.tensor(x), len(ctx.shape(x)), ints(call.attrs.axis),
                  bool(call.attrs.keepdims))


for _name in _REDUCE:
    converter(_name)(_statistical)


def variance(ctx: Context, x: str, rank: int, axes: list[int] | None, keepdims: bool) -> str:
    """The biased variance, as Relax's ``variance``: mean((x - mean(x))^2)."""
    mean = reduce(ctx, "ReduceMean", x, rank, axes, True)
    centered = ctx.node("Sub", [x, mean])
    return reduce(ctx, "ReduceMean", ctx.node("Mul", [centered, centered]), rank, axes, keepdims)


@converter("relax.variance")
def variance_op(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    return variance(ctx, ctx.tensor(x), len(ctx.shape(x)), ints(call.attrs.axis), bool(call.attrs.keepdims))


@converter("relax.std")
def std(ctx: Context, call: relax.Call) -> str:
    return ctx.node("Sqrt", [variance_op(ctx, call)])


@converter("relax.argmax", "relax.argmin")
def arg_reduce(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    op_type = "ArgMax" if call.op.name == "relax.argmax" else "ArgMin"
    keepdims = bool(call.attrs.keepdims)
    if call.attrs.axis is None:
        flat = ctx.reshape(ctx.tensor(x), [-1])
        out = ctx.node(op_type, [flat], axis=0, keepdims=0)
        out = ctx.reshape(out, ctx.out_shape())
    else:
        out = ctx.node(op_type, [ctx.tensor(x)], axis=int(call.attrs.axis) % len(ctx.shape(x)),
                       keepdims=int(keepdims))
    return out if ctx.out_dtype() == "int64" else ctx.cast(out, ctx.out_dtype())
