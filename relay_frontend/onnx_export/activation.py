"""Activations and softmax: ops ONNX has (Softmax, LeakyRelu, PRelu, Selu...) and compositions of
its primitives for the rest (GELU, SiLU, softplus with threshold)."""
from __future__ import annotations

import math

from tvm import relax

from .context import Context, converter


@converter("relax.nn.softmax", "relax.nn.log_softmax")
def softmax(ctx: Context, call: relax.Call) -> str:
    x = call.args[0]
    op_type = "Softmax" if call.op.name == "relax.nn.softmax" else "LogSoftmax"
    return ctx.node(op_type, [ctx.tensor(x)], axis=int(call.attrs.axis) % len(ctx.shape(x)))


@converter("relax.nn.gelu")
def gelu(ctx: Context, call: relax.Call) -> str:
    """0.5 x (1 + erf(x / sqrt(2)))."""
    x, dtype = ctx.tensor(call.args[0]), ctx.dtype(call.args[0])
    erf = ctx.node("Erf", [ctx.node("Mul", [x, ctx.scalar(1 / math.sqrt(2), dtype)])])
    half_x = ctx.node("Mul", [x, ctx.scalar(0.5, dtype)])
    return ctx.node("Mul", [half_x, ctx.node("Add", [erf, ctx.scalar(1, dtype)])])


@converter("relax.nn.gelu_tanh")
def gelu_tanh(ctx: Context, call: relax.Call) -> str:
    """0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    x, dtype = ctx.tensor(call.args[0]), ctx.dtype(call.args[0])
    cube = ctx.node("Mul", [ctx.node("Mul", [x, x]), x])
    inner = ctx.node("Add", [x, ctx.node("Mul", [cube, ctx.scalar(0.044715, dtype)])])
    tanh = ctx.node("Tanh", [ctx.node("Mul", [inner, ctx.scalar(math.sqrt(2 / math.pi), dtype)])])
    half_x = ctx.node("Mul", [x, ctx.scalar(0.5, dtype)])
    return ctx.node("Mul", [half_x, ctx.node("Add", [tanh, ctx.scalar(1, dtype)])])


@converter("relax.nn.silu")
def silu(ctx: Context, call: relax.Call) -> str:
    x = ctx.tensor(call.args[0])
    return ctx.node("Mul", [x, ctx.node("Sigmoid", [x])])


@converter("relax.nn.relu6")
def relu6(ctx: Context, call: relax.Call) -> str:
    dtype = ctx.dtype(call.args[0])
    return ctx.node("Clip", [ctx.tensor(call.args[0]), ctx.scalar(0, dtype), ctx.scalar(6, dtype)])


@converter("relax.nn.leakyrelu")
def leakyrelu(ctx: Context, call: relax.Call) -> str:
    return ctx.node("LeakyRelu", [ctx.tensor(call.args[0])], alpha=float(call.attrs.alpha))


@converter("relax.nn.prelu")
def prelu(ctx: Context, call: relax.Call) -> str:
    x, alpha = call.args
    rank = len(ctx.shape(x))
    axis = int(call.attrs.axis) % rank
    shape = [1] * rank
    shape[axis] = -1
    return ctx.node("PRelu", [ctx.tensor(x), ctx.reshape(ctx.tensor(alpha), shape)])


@converter("relax.nn.selu")
def selu(ctx: Context, call: relax.Call) -> str:
    return ctx.node("Selu", [ctx.tensor(call.args[0])])


@converter("relax.nn.softplus")
def softplus(ctx: Context, call: relax.Call) -> str:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (Relax's definition)."""
    x, dtype = ctx.tensor(call.args[0]), ctx.dtype(call.args[0])
    beta, threshold = float(call.attrs.beta), float(call.attrs.threshold)
    scaled = ctx.node("Mul", [x, ctx.scalar(beta, dtype)])
    soft = ctx.node("Div", [ctx.node("Softplus", [scaled]), ctx.scalar(beta, dtype)])
    return ctx.node("Where", [ctx.node("Greater", [scaled, ctx.scalar(threshold, dtype)]), x, soft])


@converter("relax.nn.dropout")
def dropout(ctx: Context, call: relax.Call) -> list[str]:
    """Inference-time dropout: the input, and an all-ones mask."""
    x = call.args[0]
    return [ctx.node("Identity", [ctx.tensor(x)]), ctx.fill(ctx.shape(x), 1, ctx.dtype(x))]
