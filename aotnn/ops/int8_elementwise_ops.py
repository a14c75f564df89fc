"""Integer element-wise ops: the int8 add of two tensors on their own quantization grids.

The arithmetic is defined in ``relay_frontend/ops/int8_elementwise.py``.
"""
from __future__ import annotations

from ._dispatch import apply

__all__ = ['int8_add']


def int8_add(a, b, a_multiplier, b_multiplier, a_zero_point=0, b_zero_point=0, zero_point=0, qmin=-128, qmax=127,
             out_dtype="int8"):
    """Add two int8/uint8 tensors and requantize to the output grid.

    ``y = clip(round(float32(a - a_zero_point) * a_multiplier + float32(b - b_zero_point) * b_multiplier)
    + zero_point, qmin, qmax)``, round half to even, ``a`` and ``b`` broadcast.

    Args:
        a (Tensor): int8 or uint8.
        b (Tensor): int8 or uint8, broadcastable with ``a``.
        a_multiplier (float): ``a_scale / y_scale`` (float32).
        b_multiplier (float): ``b_scale / y_scale`` (float32).
        a_zero_point (int), b_zero_point (int): the inputs' zero points. Default: 0.
        zero_point (int): the output's zero point. Default: 0.
        qmin (int), qmax (int): the output range. Default: -128, 127.
        out_dtype (str): 'int8' or 'uint8'. Default: 'int8'.

    Returns:
        Tensor of ``out_dtype``, the broadcast shape.

    Raises:
        CaptureError: an input that is not int8/uint8, a zero point outside its dtype's range, a multiplier
            that is not a positive finite float, or a range outside ``out_dtype``.
    """
    return apply("int8_add", a, b, a_multiplier=a_multiplier, b_multiplier=b_multiplier, a_zero_point=a_zero_point,
                 b_zero_point=b_zero_point, zero_point=zero_point, qmin=qmin, qmax=qmax, out_dtype=out_dtype)
