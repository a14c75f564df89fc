"""Shape and layout ops: reshape-like views, transposes, concatenation, broadcasting, tiling, flips."""
from __future__ import annotations

from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter, ints


@converter("relax.reshape", "relax.expand_dims", "relax.squeeze", "relax.flatten")
def reshape(ctx: Context, call: relax.Call) -> str:
    """Every pure view becomes one Reshape to the (static) result shape."""
    return ctx.reshape(ctx.tensor(call.args[0]), ctx.out_shape())


@converter("relax.permute_dims")
def permute_dims(ctx: Context, call: relax.Call) -> str:
    axes = ints(call.attrs.axes)
    rank = len(ctx.shape(call.args[0]))
    perm = [a % rank for a in axes] if axes is not None else list(reversed(range(rank)))
    return ctx.node("Transpose", [ctx.tensor(call.args[0])], perm=perm)


@converter("relax.concat")
def concat(ctx: Context, call: relax.Call) -> str:
    parts = call.args[0]
    names = ctx.value(parts)
    if isinstance(names, str):
        raise ValueError("concat of a tuple-typed variable")
    rank = len(ctx.out_shape())
    axis = int(call.attrs.axis) if call.attrs.axis is not None else 0
    if call.attrs.axis is None:  # axis None: concatenate the flattened tensors
        names = [ctx.reshape(n, [-1]) for n in names]
        rank = 1
    return ctx.node("Concat", names, axis=axis % rank)


@converter("relax.broadcast_to")
def broadcast_to(ctx: Context, call: relax.Call) -> str:
    return ctx.node("Expand", [ctx.tensor(call.args[0]), ctx.int64s(ctx.out_shape(), "shape")])


@converter("relax.tile")
def tile(ctx: Context, call: relax.Call) -> str:
    x = ctx.tensor(call.args[0])
    repeats = ints(call.attrs.repeats)
    rank = len(ctx.shape(call.args[0]))
    out_rank = max(rank, len(repeats))
    if out_rank > rank:
        x = ctx.reshape(x, [1] * (out_rank - rank) + list(ctx.shape(call.args[0])))
    repeats = [1] * (out_rank - len(repeats)) + repeats
    return ctx.node("Tile", [x, ctx.int64s(repeats, "repeats")])


@converter("relax.flip")
def flip(ctx: Context, call: relax.Call) -> str:
    axis = int(call.attrs.axis) % len(ctx.shape(call.args[0]))
    return ctx.node("Slice", [ctx.tensor(call.args[0]), ctx.int64s([-1], "starts"),
                              ctx.int64s([-(2 ** 63)], "ends"), ctx.int64s([axis], "axes"),
                              ctx.int64s([-1], "steps")])


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "edge": "edge", "replicate": "edge"}


@converter("relax.nn.pad")
def pad(ctx: Context, call: relax.Call) -> str:
    """Relax pads as (before, after) per axis; ONNX as every axis' before, then every after."""
    x = call.args[0]
    widths = ints(call.attrs.pad_width)
    mode = _PAD_MODES.get(str(call.attrs.pad_mode))
    if mode is None:
        raise UnsupportedOnnxOpError(f"pad mode {call.attrs.pad_mode!r}")
    pads = widths[0::2] + widths[1::2]
    inputs = [ctx.tensor(x), ctx.int64s(pads, "pads")]
    if mode == "constant":
        inputs.append(ctx.scalar(float(call.attrs.pad_value), ctx.dtype(x)))
    return ctx.node("Pad", inputs, mode=mode)
