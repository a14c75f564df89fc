"""Linear algebra: matmul (numpy semantics, as ONNX MatMul), einsum, outer products."""
from __future__ import annotations

from tvm import relax

from .context import Context, converter


@converter("relax.matmul")
def matmul(ctx: Context, call: relax.Call) -> str:
    a, b = call.args
    out = ctx.node("MatMul", [ctx.tensor(a), ctx.tensor(b)])
    return out if ctx.out_dtype() == ctx.dtype(a) else ctx.cast(out, ctx.out_dtype())


@converter("relax.einsum")
def einsum(ctx: Context, call: relax.Call) -> str:
    operands = ctx.value(call.args[0])
    return ctx.node("Einsum", list(operands), equation=str(call.attrs.subscripts))


@converter("relax.outer")
def outer(ctx: Context, call: relax.Call) -> str:
    a, b = call.args
    return ctx.node("Mul", [ctx.reshape(ctx.tensor(a), [-1, 1]), ctx.tensor(b)])


@converter("relax.ewise_fma")
def ewise_fma(ctx: Context, call: relax.Call) -> str:
    a, b, c = (ctx.tensor(arg) for arg in call.args)
    return ctx.node("Add", [ctx.node("Mul", [a, b]), c])
