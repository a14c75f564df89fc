"""Pooling: max and average pools (1-D, 2-D, 3-D) and adaptive average pools, channels-first."""
from __future__ import annotations

from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter, ints
from .conv import pads

_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _check_layout(call: relax.Call, dims: int) -> None:
    if str(call.attrs.layout) != _LAYOUT[dims] or str(call.attrs.out_layout) != _LAYOUT[dims]:
        raise UnsupportedOnnxOpError(f"layout {call.attrs.layout}; ONNX pools take {_LAYOUT[dims]}")


def _pool(ctx: Context, call: relax.Call, dims: int, op_type: str) -> str:
    _check_layout(call, dims)
    attrs = call.attrs
    dilation = ints(attrs.dilation)
    extra = {}
    if op_type == "MaxPool" or ctx.opset >= 19:
        extra["dilations"] = dilation
    elif any(d != 1 for d in dilation):
        raise UnsupportedOnnxOpError(f"dilated average pooling needs opset 19, exporting opset {ctx.opset}")
    if op_type == "AveragePool":
        extra["count_include_pad"] = int(bool(attrs.count_include_pad))
    return ctx.node(op_type, [ctx.tensor(call.args[0])], kernel_shape=ints(attrs.pool_size),
                    strides=ints(attrs.strides), pads=pads(ints(attrs.padding), dims),
                    ceil_mode=int(bool(attrs.ceil_mode)), **extra)


def _adaptive_avg_pool(ctx: Context, call: relax.Call, dims: int) -> str:
    _check_layout(call, dims)
    x = call.args[0]
    size = ctx.shape(x)[2:]
    out = ctx.out_shape()[2:]
    if all(o == 1 for o in out):
        return ctx.node("GlobalAveragePool", [ctx.tensor(x)])
    if any(s % o for s, o in zip(size, out)):
        raise UnsupportedOnnxOpError(f"adaptive pooling from {list(size)} to {list(out)} (ONNX expresses "
                                     f"only output sizes that divide the input)")
    window = [s // o for s, o in zip(size, out)]
    return ctx.node("AveragePool", [ctx.tensor(x)], kernel_shape=window, strides=window)


for _dims in (1, 2, 3):
    converter(f"relax.nn.max_pool{_dims}d")(lambda ctx, call, d=_dims: _pool(ctx, call, d, "MaxPool"))
    converter(f"relax.nn.avg_pool{_dims}d")(lambda ctx, call, d=_dims: _pool(ctx, call, d, "AveragePool"))
    converter(f"relax.nn.adaptive_avg_pool{_dims}d")(lambda ctx, call, d=_dims: _adaptive_avg_pool(ctx, call, d))
