"""Image ops: resize2d as ONNX Resize."""
from __future__ import annotations

from tvm import relax

from .context import Context, UnsupportedOnnxOpError, converter

_MODES = {"nearest_neighbor": "nearest", "linear": "linear", "cubic": "cubic"}
_COORDINATES = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"}
_ROUNDING = {"round": "round_prefer_ceil", "floor": "floor", "ceil": "ceil", "round_prefer_floor": "round_prefer_floor",
             "round_prefer_ceil": "round_prefer_ceil", "": "round_prefer_floor"}


@converter("relax.image.resize2d")
def resize2d(ctx: Context, call: relax.Call) -> str:
    attrs = call.attrs
    method, coordinates = str(attrs.method), str(attrs.coordinate_transformation_mode)
    if str(attrs.layout) != "NCHW" or method not in _MODES or coordinates not in _COORDINATES:
        raise UnsupportedOnnxOpError(f"resize2d layout={attrs.layout} method={method} "
                                     f"coordinate_transformation_mode={coordinates}")
    extra = {}
    if method == "nearest_neighbor":
        extra["nearest_mode"] = _ROUNDING.get(str(attrs.rounding_method), "round_prefer_ceil")
    if method == "cubic":
        extra.update(cubic_coeff_a=float(attrs.cubic_alpha), exclude_outside=int(attrs.cubic_exclude))
    x = ctx.tensor(call.args[0])
    out = ctx.node("Resize", [x, "", "", ctx.int64s(ctx.out_shape(), "sizes")], mode=_MODES[method],
                   coordinate_transformation_mode=coordinates, **extra)
    return out if ctx.out_dtype() == ctx.dtype(call.args[0]) else ctx.cast(out, ctx.out_dtype())
