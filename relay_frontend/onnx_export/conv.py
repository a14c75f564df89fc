"""Convolutions and their transposes (1-D, 2-D, 3-D, channels-first), as ONNX Conv / ConvTranspose."""
from __future__ import annotations

from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter, ints

_DATA = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_KERNEL = {1: "OIW", 2: "OIHW", 3: "OIDHW"}
_KERNEL_T = {1: "IOW", 2: "IOHW", 3: "IODHW"}


def pads(values: list[int], dims: int) -> list[int]:
    """Relax paddings (begins then ends, or one value per side) as ONNX's begins-then-ends list."""
    if len(values) == dims:
        return values + values
    if len(values) == 1:
        return values * 2 * dims
    return values


def _check_layouts(call: relax.Call, dims: int, kernel: dict[int, str]) -> None:
    attrs = call.attrs
    if (str(attrs.data_layout) != _DATA[dims] or str(attrs.kernel_layout) != kernel[dims]
            or str(attrs.out_layout) != _DATA[dims]):
        raise UnsupportedOnnxOpError(f"layouts data={attrs.data_layout} kernel={attrs.kernel_layout} "
                                     f"out={attrs.out_layout}; ONNX takes {_DATA[dims]}/{kernel[dims]}")


def _finish(ctx: Context, call: relax.Call, out: str) -> str:
    """Cast to ``out_dtype`` when the op asked for a result type other than its input's."""
    if ctx.out_dtype() != ctx.dtype(call.args[0]):
        out = ctx.cast(out, ctx.out_dtype())
    return out


def _conv_node(ctx: Context, call: relax.Call, dims: int, op_type: str, kernel_layout: str, **extra) -> str:
    _check_layouts(call, dims, kernel_layout)
    x, weight = call.args
    attrs = call.attrs
    out = ctx.node(op_type, [ctx.tensor(x), ctx.tensor(weight)], kernel_shape=list(ctx.shape(weight)[2:]),
                   strides=ints(attrs.strides), pads=pads(ints(attrs.padding), dims), **extra,
                   dilations=ints(attrs.dilation), group=int(attrs.groups))
    return _finish(ctx, call, out)


def _conv(ctx: Context, call: relax.Call, dims: int) -> str:
    return _conv_node(ctx, call, dims, "Conv", _KERNEL)


def _conv_transpose(ctx: Context, call: relax.Call, dims: int) -> str:
    return _conv_node(ctx, call, dims, "ConvTranspose", _KERNEL_T, output_padding=ints(call.attrs.output_padding))


for _dims in (1, 2, 3):
    converter(f"relax.nn.conv{_dims}d")(lambda ctx, call, d=_dims: _conv(ctx, call, d))
    converter(f"relax.nn.conv{_dims}d_transpose")(lambda ctx, call, d=_dims: _conv_transpose(ctx, call, d))
