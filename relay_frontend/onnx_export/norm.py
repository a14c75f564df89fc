"""Normalisations: batch, layer, group, instance and RMS norm (ONNX ops where they match Relax's
definition, compositions of Reduce/Sub/Div otherwise)."""
from __future__ import annotations

from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter, ints
from .reduce import reduce, variance


def _broadcast(ctx: Context, vector: str, rank: int, axis: int) -> str:
    shape = [1] * rank
    shape[axis] = -1
    return ctx.reshape(vector, shape)


def _normalize(ctx: Context, x: str, mean: str, var: str, epsilon: float, dtype: str) -> str:
    denominator = ctx.node("Sqrt", [ctx.node("Add", [var, ctx.scalar(epsilon, dtype)])])
    return ctx.node("Div", [ctx.node("Sub", [x, mean]), denominator])


def _affine(ctx: Context, y: str, gamma: str | None, beta: str | None) -> str:
    if gamma is not None:
        y = ctx.node("Mul", [y, gamma])
    if beta is not None:
        y = ctx.node("Add", [y, beta])
    return y


@converter("relax.nn.batch_norm")
def batch_norm(ctx: Context, call: relax.Call) -> list[str]:
    x, gamma, beta, mean, var = call.args
    attrs = call.attrs
    if bool(attrs.training):
        raise UnsupportedOnnxOpError("training-mode batch_norm (export the network in inference mode: "
                                     "net.set_train(False))")
    rank, dtype = len(ctx.shape(x)), ctx.dtype(x)
    axis = int(attrs.axis) % rank
    names = [ctx.tensor(v) for v in (x, gamma, beta, mean, var)]
    if axis == 1 and bool(attrs.center) and bool(attrs.scale):
        y = ctx.node("BatchNormalization", names, epsilon=float(attrs.epsilon))
    else:
        g, b, m, v = (_broadcast(ctx, n, rank, axis) for n in names[1:])
        y = _affine(ctx, _normalize(ctx, names[0], m, v, float(attrs.epsilon), dtype),
                    g if bool(attrs.scale) else None, b if bool(attrs.center) else None)
    return [y, names[3], names[4]]


@converter("relax.nn.layer_norm")
def layer_norm(ctx: Context, call: relax.Call) -> str:
    x, gamma, beta = call.args
    attrs = call.attrs
    rank, dtype = len(ctx.shape(x)), ctx.dtype(x)
    axes = sorted(a % rank for a in ints(attrs.axes))
    g = ctx.tensor(gamma) if bool(attrs.scale) else None
    b = ctx.tensor(beta) if bool(attrs.center) else None
    if axes == list(range(axes[0], rank)):
        inputs = [ctx.tensor(x), g or ctx.fill(ctx.shape(gamma), 1, dtype)] + ([b] if b else [])
        return ctx.node("LayerNormalization", inputs, axis=axes[0], epsilon=float(attrs.epsilon))
    mean = reduce(ctx, "ReduceMean", ctx.tensor(x), rank, axes, True)
    var = variance(ctx, ctx.tensor(x), rank, axes, True)
    return _affine(ctx, _normalize(ctx, ctx.tensor(x), mean, var, float(attrs.epsilon), dtype), g, b)


@converter("relax.nn.group_norm")
def group_norm(ctx: Context, call: relax.Call) -> str:
    x, gamma, beta = call.args
    attrs = call.attrs
    shape, dtype = ctx.shape(x), ctx.dtype(x)
    rank, groups = len(shape), int(attrs.num_groups)
    if int(attrs.channel_axis) % rank != 1 or sorted(a % rank for a in ints(attrs.axes)) != list(range(2, rank)):
        raise UnsupportedOnnxOpError("group_norm other than channels on axis 1 and every later axis normalised")
    grouped = ctx.reshape(ctx.tensor(x), [shape[0], groups, -1])
    mean = reduce(ctx, "ReduceMean", grouped, 3, [2], True)
    var = variance(ctx, grouped, 3, [2], True)
    y = ctx.reshape(_normalize(ctx, grouped, mean, var, float(attrs.epsilon), dtype), shape)
    g = _broadcast(ctx, ctx.tensor(gamma), rank, 1) if bool(attrs.scale) else None
    b = _broadcast(ctx, ctx.tensor(beta), rank, 1) if bool(attrs.center) else None
    return _affine(ctx, y, g, b)


@converter("relax.nn.instance_norm")
def instance_norm(ctx: Context, call: relax.Call) -> str:
    x, gamma, beta = call.args
    attrs = call.attrs
    rank, dtype = len(ctx.shape(x)), ctx.dtype(x)
    if int(attrs.channel_axis) % rank != 1 or sorted(a % rank for a in ints(attrs.axes)) != list(range(2, rank)):
        raise UnsupportedOnnxOpError("instance_norm other than channels on axis 1")
    g = ctx.tensor(gamma) if bool(attrs.scale) else ctx.fill(ctx.shape(gamma), 1, dtype)
    b = ctx.tensor(beta) if bool(attrs.center) else ctx.fill(ctx.shape(beta), 0, dtype)
    return ctx.node("InstanceNormalization", [ctx.tensor(x), g, b], epsilon=float(attrs.epsilon))


@converter("relax.nn.rms_norm")
def rms_norm(ctx: Context, call: relax.Call) -> str:
    """x / sqrt(mean(x^2) + eps) * weight."""
    x, weight = call.args
    rank, dtype = len(ctx.shape(x)), ctx.dtype(x)
    name = ctx.tensor(x)
    mean_square = reduce(ctx, "ReduceMean", ctx.node("Mul", [name, name]), rank, ints(call.attrs.axes), True)
    root = ctx.node("Sqrt", [ctx.node("Add", [mean_square, ctx.scalar(float(call.attrs.epsilon), dtype)])])
    return ctx.node("Mul", [ctx.node("Div", [name, root]), ctx.tensor(weight)])
