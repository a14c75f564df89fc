"""Functional convolutions: ``ops.conv1d``, ``ops.conv3d``, the transposed convolutions and patch extraction.

``ops.conv2d`` lives in ``functional.py``. Each function names its lowering rule in
``relay_frontend/ops/conv.py``, where the geometry of the pad modes is defined.
"""
from __future__ import annotations

from ._dispatch import apply

__all__ = ['conv1d', 'conv3d', 'conv1d_transpose', 'conv2d_transpose', 'conv3d_transpose', 'unfold']


def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """1-D convolution of ``input`` (N, C_in, L).

    Args:
        input (Tensor): (N, C_in, L).
        weight (Tensor): (C_out, C_in / groups, 1, k) as MindSpore's Conv1d keeps it, or (C_out, C_in / groups, k).
        bias (Tensor): (C_out,) or None. Default: None.
        stride (int): Default: 1.
        pad_mode (str): 'same' (output ceil(L / stride), odd padding at the end), 'valid' or 'pad'. Default: 'valid'.
        padding (Union[int, tuple[int]]): with 'pad': an int or (left, right). Default: 0.
        dilation (int): Default: 1.
        groups (int): Default: 1.

    Returns:
        Tensor of shape (N, C_out, L_out).
    """
    return apply("conv1d", input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):  # noqa: A002
    """3-D convolution of ``input`` (N, C_in, D, H, W) with ``weight`` (C_out, C_in / groups, kd, kh, kw).

    Args:
        padding (Union[int, tuple[int]]): with 'pad': an int, (d, h, w), or (head, tail, top, bottom, left, right).
        Others as :func:`conv1d`, per axis where a tuple of 3 is given.

    Returns:
        Tensor of shape (N, C_out, D_out, H_out, W_out).
    """
    return apply("conv3d", input, weight, bias, stride, pad_mode, padding, dilation, groups)


def conv1d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """1-D transposed convolution; ``weight`` is (C_in, C_out / groups, 1, k) or (C_in, C_out / groups, k).

    Output length: 'same' ``L * stride``; 'valid' ``max(L * stride, (L - 1) * stride + dilation * (k - 1) + 1)``;
    'pad' ``(L - 1) * stride - left - right + dilation * (k - 1) + 1 + output_padding``.
    """
    return apply("conv1d_transpose", x, weight, bias, stride, pad_mode, padding, output_padding, dilation, groups)


def conv2d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """2-D transposed convolution of NCHW ``x``; ``weight`` is (C_in, C_out / groups, kh, kw).

    ``padding`` (with 'pad') is an int, (h, w) or (top, bottom, left, right); sizes as :func:`conv1d_transpose`.
    """
    return apply("conv2d_transpose", x, weight, bias, stride, pad_mode, padding, output_padding, dilation, groups)


def conv3d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """3-D transposed convolution of NCDHW ``x``; ``weight`` is (C_in, C_out / groups, kd, kh, kw)."""
    return apply("conv3d_transpose", x, weight, bias, stride, pad_mode, padding, output_padding, dilation, groups)


def unfold(x, ksizes, strides, rates, padding="valid"):
    """Patches of NCHW ``x`` stacked in channels (MindSpore's ExtractImagePatches).

    Args:
        ksizes, strides, rates (tuple[int]): (row, col) pairs.
        padding (str): 'valid' or 'same' (zero padding, TF-style). Default: 'valid'.

    Returns:
        Tensor (N, kh * kw * C, out_rows, out_cols); channel ``(i * kw + j) * C + c`` holds tap (i, j) of channel c.
    """
    return apply("unfold", x, tuple(ksizes), tuple(strides), tuple(rates), str(padding).lower())
