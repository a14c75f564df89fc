"""Lowering rule of the int8 element-wise add: two inputs on their own grids, the sum on a third.

``int8_add``: ``y = clip(round(float32(a - za) * ma + float32(b - zb) * mb) + zy, qmin, qmax)`` with
``ma = a_scale / y_scale`` and ``mb = b_scale / y_scale`` (float32), round half to even; ``a`` and
``b`` broadcast as numpy does. This is onnxruntime's QLinearAdd formula; the whole expression is
element-wise, so it becomes one fused kernel.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of
from ..errors import CaptureError
from .common import cast, emit
from .registry import rule

_op = relax.op
_RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def _centered(x: relax.Expr, zero_point: int, what: str) -> relax.Expr:
    """float32(x - zero_point) of an int8/uint8 ``x``; the zero point checked against ``x``'s range."""
    dtype = dtype_of(x)
    if dtype not in _RANGES:
        raise CaptureError(f"{what}: expected an int8 or uint8 tensor, got {dtype}")
    low, high = _RANGES[dtype]
    if not low <= int(zero_point) <= high:
        raise CaptureError(f"{what}_zero_point: expected a value in [{low}, {high}] for {dtype}, got {zero_point}")
    value = cast(x, "int32")
    if zero_point:
        value = emit(_op.subtract(value, relax.const(int(zero_point), "int32")))
    return cast(value, "float32")


def _multiplier(value: float, what: str) -> relax.Expr:
    value = np.float32(value)
    if not np.isfinite(value) or value <= 0:
        raise CaptureError(f"{what}: expected a finite positive float32, got {value}")
    return relax.const(value, "float32")


@rule("int8_add")
def int8_add(a, b, a_multiplier: float, b_multiplier: float, a_zero_point: int = 0, b_zero_point: int = 0,
             zero_point: int = 0, qmin: int = -128, qmax: int = 127, out_dtype: str = "int8"):
    """int8/uint8 ``a`` + ``b`` requantized to the output grid (see the module docstring)."""
    if out_dtype not in _RANGES:
        raise CaptureError(f"out_dtype: expected 'int8' or 'uint8', got {out_dtype!r}")
    low, high = _RANGES[out_dtype]
    if not low <= qmin < qmax <= high:
        raise CaptureError(f"qmin, qmax: expected {low} <= qmin < qmax <= {high} for {out_dtype}, got {qmin}, {qmax}")
    left = emit(_op.multiply(_centered(a, a_zero_point, "a"), _multiplier(a_multiplier, "a_multiplier")))
    right = emit(_op.multiply(_centered(b, b_zero_point, "b"), _multiplier(b_multiplier, "b_multiplier")))
    y = emit(_op.round(emit(_op.add(left, right))))
    if zero_point:
        y = emit(_op.add(y, relax.const(float(zero_point), "float32")))
    return _op.astype(emit(_op.clip(y, float(qmin), float(qmax))), out_dtype)
