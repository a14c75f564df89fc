"""Tensor creation: zeros/ones/full (and their ``_like`` forms), arange, eye, stack."""
from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from .context import Context, converter, number


def _filled(ctx: Context, value: relax.Expr | float) -> str:
    if isinstance(value, (int, float)) or isinstance(value, tvm.ir.expr.Constant):
        return ctx.fill(ctx.out_shape(), number(value), ctx.out_dtype())
    fill = ctx.tensor(value)
    if ctx.dtype(value) != ctx.out_dtype():
        fill = ctx.cast(fill, ctx.out_dtype())
    return ctx.node("Expand", [fill, ctx.int64s(ctx.out_shape(), "shape")])


@converter("relax.zeros", "relax.zeros_like")
def zeros(ctx: Context, call: relax.Call) -> str:
    return _filled(ctx, 0)


@converter("relax.ones", "relax.ones_like")
def ones(ctx: Context, call: relax.Call) -> str:
    return _filled(ctx, 1)


@converter("relax.full", "relax.full_like")
def full(ctx: Context, call: relax.Call) -> str:
    return _filled(ctx, call.args[1])


@converter("relax.arange")
def arange(ctx: Context, call: relax.Call) -> str:
    start, _, step = (number(arg) for arg in call.args)
    count = ctx.out_shape()[0]
    return ctx.const((start + step * np.arange(count)).astype(ctx.out_dtype()), "arange")


@converter("relax.eye", "relax.eye_like")
def eye(ctx: Context, call: relax.Call) -> str:
    k = int(number(call.args[-1]))
    rows, cols = ctx.out_shape()
    return ctx.const(np.eye(rows, cols, k, dtype=ctx.out_dtype()), "eye")


@converter("relax.stack")
def stack(ctx: Context, call: relax.Call) -> str:
    parts = ctx.value(call.args[0])
    out_shape = ctx.out_shape()
    axis = int(call.attrs.axis) % len(out_shape) if call.attrs.axis is not None else 0
    one = list(out_shape)
    one[axis] = 1
    return ctx.node("Concat", [ctx.reshape(p, one) for p in parts], axis=axis)
