"""Integer inference ops: quantize, dequantize, int8 convolution and dense with int32 accumulation, requantize.

Used by ``aotnn.compression.quant.export_int8`` to run quantization-aware trained networks with real
8-bit kernels. The arithmetic is defined in ``relay_frontend/ops/int8.py``.
"""
from __future__ import annotations

from ._dispatch import apply

__all__ = ['int8_quantize', 'int8_dequantize', 'int8_dynamic_scale', 'int8_requantize', 'int8_conv2d',
           'int8_dense']


def int8_quantize(x, scale, zero_point=0, qmin=-128, qmax=127, out_dtype="int8", axis=1):
    """Quantize float ``x``: ``clip(round(x / scale) + zero_point, qmin, qmax)`` (round half to even).

    Args:
        x (Tensor): float input.
        scale (Tensor): float32, shape (1,) or one value per channel of ``axis``.
        zero_point (int): Default: 0.
        qmin (int), qmax (int): the integer range. Default: -128, 127.
        out_dtype (str): 'int8', 'uint8', 'int16' or 'int32'. Default: 'int8'.
        axis (int): the channel axis of a per-channel ``scale``. Default: 1.

    Returns:
        Tensor of ``out_dtype``, ``x``'s shape.
    """
    return apply("int8_quantize", x, scale, zero_point=zero_point, qmin=qmin, qmax=qmax, out_dtype=out_dtype,
                 axis=axis)


def int8_dequantize(q, scale, zero_point=0, axis=1):
    """``float32(q - zero_point) * scale``, ``scale`` of shape (1,) or per channel of ``axis``.

    Returns:
        float32 Tensor of ``q``'s shape.
    """
    return apply("int8_dequantize", q, scale, zero_point=zero_point, axis=axis)


def int8_dynamic_scale(x, qmax=127):
    """Symmetric per-tensor scale ``max(|x|) / qmax`` of ``x`` as a (1,) float32 Tensor."""
    return apply("int8_dynamic_scale", x, qmax=qmax)


def int8_requantize(acc, bias, multiplier, zero_point=0, qmin=-128, qmax=127, out_dtype="int8", axis=1):
    """``clip(round(float32(acc + bias) * multiplier) + zero_point, qmin, qmax)`` per channel of ``axis``.

    Args:
        acc (Tensor): int32 accumulators.
        bias (Tensor): int32 (C,) or None.
        multiplier (Tensor): float32 (1,) or (C,), usually ``input_scale * weight_scale / output_scale``.

    Returns:
        Tensor of ``out_dtype``.
    """
    return apply("int8_requantize", acc, bias, multiplier, zero_point=zero_point, qmin=qmin, qmax=qmax,
                 out_dtype=out_dtype, axis=axis)


def int8_conv2d(x, weight, x_zero_point=0, w_zero_point=None, stride=1, pad_mode="valid", padding=0, dilation=1,
                groups=1, weight_sums_folded=False):
    """Integer 2-D convolution: int32 ``sum((x - x_zero_point) * (weight - w_zero_point))``.

    Args:
        x (Tensor): int8 or uint8, NCHW.
        weight (Tensor): int8, OIHW.
        x_zero_point (int): the input's zero point; padding holds it. Default: 0.
        w_zero_point (Tensor): int32 (O,) or None for symmetric weights. Default: None.
        stride, pad_mode, padding, dilation, groups: as :func:`aotnn.ops.conv2d`.
        weight_sums_folded (bool): the caller folded ``-x_zero_point * sum(weight - w_zero_point)`` per output channel
            into its int32 bias; the term is then left out. Default: False.

    Returns:
        int32 Tensor (N, O, H_out, W_out).
    """
    return apply("int8_conv2d", x, weight, x_zero_point, w_zero_point, stride, pad_mode, padding, dilation, groups,
                 weight_sums_folded)


def int8_dense(x, weight, x_zero_point=0, w_zero_point=None, weight_sums_folded=False):
    """Integer dense: int32 ``sum((x - x_zero_point) * (weight - w_zero_point))`` of (N, K) by (O, K) -> (N, O).

    ``weight_sums_folded`` as :func:`int8_conv2d`.
    """
    return apply("int8_dense", x, weight, x_zero_point, w_zero_point, weight_sums_folded)
