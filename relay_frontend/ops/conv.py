"""Lowering rules for convolutions: conv1d/2d/3d, their transposes, and patch extraction (unfold).

MindSpore's geometry: 'same' pads TF-style (output ``ceil(size / stride)``, the odd pixel at the end),
'valid' pads nothing, 'pad' takes explicit padding. 1-D ops run as 2-D ops on a height-1 image (as
MindSpore does: Conv1d's weight is (out, in/group, 1, k)), and NHWC runs as NCHW between transposes, so
every 1-D/2-D convolution is a Relax ``conv2d`` in NCHW, the form Relax can differentiate.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import as_pair, emit
from .linalg import same_dtype
from .registry import rule

_op = relax.op
PAD_MODES = ("same", "valid", "pad")


# -- geometry ---------------------------------------------------------------------------------
def same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TF-style 'same' padding: output ceil(size / stride), the odd pixel padded at the end."""
    out = -(-size // stride)
    needed = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size)
    return needed // 2, needed - needed // 2


def explicit_padding(padding, what: str = "padding") -> tuple[int, int, int, int]:
    """MindSpore's 2-D padding (int, (h, w) or (top, bottom, left, right)) as (top, bottom, left, right)."""
    top, bottom, left, right = (p for pair in spatial_padding(padding, 2, what) for p in pair)
    return top, bottom, left, right


def spatial_padding(padding, nd: int, what: str = "padding") -> list[tuple[int, int]]:
    """(before, after) per spatial axis from an int, one value per axis, or a (before, after) per axis."""
    if isinstance(padding, (int, np.integer)):
        values = [(int(padding), int(padding))] * nd
    elif isinstance(padding, (tuple, list)) and len(padding) == 1:
        values = [(int(padding[0]), int(padding[0]))] * nd
    elif isinstance(padding, (tuple, list)) and len(padding) == nd and nd > 1:
        values = [(int(p), int(p)) for p in padding]
    elif isinstance(padding, (tuple, list)) and len(padding) == 2 * nd:
        values = [(int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(nd)]
    else:
        raise CaptureError(f"{what}: expected an int or a tuple of {nd} or {2 * nd} ints, got {padding!r}")
    if any(p < 0 for pair in values for p in pair):
        raise CaptureError(f"{what}: expected non-negative values, got {padding!r}")
    return values


def as_tuple(value, nd: int, what: str) -> tuple[int, ...]:
    """An int or a tuple of ``nd`` positive ints as a tuple of ``nd`` ints."""
    if isinstance(value, (int, np.integer)):
        value = (int(value),) * nd
    if not (isinstance(value, Sequence) and len(value) == nd and all(int(v) >= 1 for v in value)):
        raise CaptureError(f"{what}: expected a positive int or a tuple of {nd} of them, got {value!r}")
    return tuple(int(v) for v in value)


def window_pads(sizes, kernel, stride, dilation, pad_mode: str, padding) -> list[tuple[int, int]]:
    """(before, after) padding per spatial axis of a window op under MindSpore's pad modes."""
    if pad_mode not in PAD_MODES:
        raise CaptureError(f"pad_mode: expected one of {PAD_MODES}, got {pad_mode!r}")
    nd = len(sizes)
    if pad_mode == "valid":
        return [(0, 0)] * nd
    if pad_mode == "pad":
        return spatial_padding(padding, nd)
    return [same_padding(s, k, st, d) for s, k, st, d in zip(sizes, kernel, stride, dilation)]


def window_padding(shape_hw, kernel, stride, dilation, pad_mode: str, padding) -> tuple[int, int, int, int]:
    """Padding as Relax's 2-D ops want it, (top, left, bottom, right)."""
    (top, bottom), (left, right) = window_pads(shape_hw, kernel, stride, dilation, pad_mode, padding)
    return top, left, bottom, right


def _relax_padding(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    """Relax's order: every 'before' then every 'after'."""
    return tuple(b for b, _ in pads) + tuple(a for _, a in pads)


def _check_output(what: str, in_sizes, out_sizes) -> None:
    if any(o < 1 for o in out_sizes):
        raise CaptureError(f"{what}: input spatial size {tuple(in_sizes)} is too small for the kernel, "
                           f"output would be {tuple(out_sizes)}")


def _check_channels(what: str, channels: int, weight_in: int, groups: int) -> None:
    if channels != weight_in * groups:
        raise CaptureError(f"{what}: input has {channels} channels, the weight expects "
                           f"{weight_in} x group {groups} = {weight_in * groups}")


def _add_bias(out: relax.Expr, bias, channel_axis: int, rank: int) -> relax.Expr:
    if bias is None:
        return out
    shape = [1] * rank
    shape[channel_axis] = -1
    return _op.add(emit(out), _op.reshape(bias, shape))


# -- convolution ------------------------------------------------------------------------------
def _conv_nchw(what: str, x, weight, stride, pad_mode, padding, dilation, groups) -> relax.Expr:
    """A 2-D (NCHW/OIHW) or 3-D (NCDHW/OIDHW) convolution with MindSpore's pad modes."""
    x_shape, w_shape = static_shape(x), static_shape(weight)
    nd = len(x_shape) - 2
    _check_channels(what, x_shape[1], w_shape[1], groups)
    if w_shape[0] % groups:
        raise CaptureError(f"{what}: output channels {w_shape[0]} are not divisible by group {groups}")
    stride, dilation = as_tuple(stride, nd, "stride"), as_tuple(dilation, nd, "dilation")
    kernel = w_shape[2:]
    pads = window_pads(x_shape[2:], kernel, stride, dilation, pad_mode, padding)
    out = [(s + b + a - (k - 1) * d - 1) // st + 1
           for s, (b, a), k, d, st in zip(x_shape[2:], pads, kernel, dilation, stride)]
    _check_output(what, x_shape[2:], out)
    conv = _op.nn.conv2d if nd == 2 else _op.nn.conv3d
    layouts = ("NCHW", "OIHW") if nd == 2 else ("NCDHW", "OIDHW")
    return conv(x, weight, strides=stride, padding=_relax_padding(pads), dilation=dilation, groups=int(groups),
                data_layout=layouts[0], kernel_layout=layouts[1])


@rule("conv2d")
def conv2d(x, weight, bias=None, stride=1, pad_mode="same", padding=0, dilation=1, groups=1,
           data_format="NCHW"):
    """2-D convolution; the weight is (out, in/groups, kh, kw), or (out, kh, kw, in/groups) for NHWC."""
    same_dtype("conv2d", x, weight)
    if data_format not in ("NCHW", "NHWC"):
        raise CaptureError(f"data_format: expected 'NCHW' or 'NHWC', got {data_format!r}")
    if len(static_shape(x)) != 4 or len(static_shape(weight)) != 4:
        raise CaptureError(f"conv2d: input and weight must be 4-D, got {static_shape(x)} and {static_shape(weight)}")
    if data_format == "NHWC":
        x, weight = emit(_op.permute_dims(x, [0, 3, 1, 2])), emit(_op.permute_dims(weight, [0, 3, 1, 2]))
    out = _conv_nchw("conv2d", x, weight, stride, str(pad_mode).lower(), padding, dilation, groups)
    if bias is not None:
        same_dtype("conv2d", x, bias)
    out = _add_bias(out, bias, 1, 4)
    return _op.permute_dims(emit(out), [0, 2, 3, 1]) if data_format == "NHWC" else out


@rule("conv1d")
def conv1d(x, weight, bias=None, stride=1, pad_mode="same", padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C, L); the weight is (out, in/groups, 1, k), as MindSpore keeps it, or 3-D."""
    same_dtype("conv1d", x, weight)
    x_shape, w_shape = static_shape(x), static_shape(weight)
    if len(x_shape) != 3 or len(w_shape) not in (3, 4) or (len(w_shape) == 4 and w_shape[2] != 1):
        raise CaptureError(f"conv1d: expected a 3-D input and a (out, in, 1, k) weight, got {x_shape} and {w_shape}")
    x4 = emit(_op.reshape(x, (x_shape[0], x_shape[1], 1, x_shape[2])))
    w4 = weight if len(w_shape) == 4 else emit(_op.reshape(weight, (w_shape[0], w_shape[1], 1, w_shape[2])))
    (left, right), = spatial_padding(padding, 1)
    out = emit(_conv_nchw("conv1d", x4, w4, (1, _single(stride, "stride")), str(pad_mode).lower(),
                          (0, 0, left, right), (1, _single(dilation, "dilation")), groups))
    n, c, _, length = static_shape(out)
    return _add_bias(_op.reshape(out, (n, c, length)), bias, 1, 3)


@rule("conv3d")
def conv3d(x, weight, bias=None, stride=1, pad_mode="same", padding=0, dilation=1, groups=1,
           data_format="NCDHW"):
    """3-D convolution of (N, C, D, H, W); padding is an int or (head, tail, top, bottom, left, right)."""
    same_dtype("conv3d", x, weight)
    if data_format != "NCDHW":
        raise CaptureError(f"data_format: expected 'NCDHW', got {data_format!r}")
    if len(static_shape(x)) != 5 or len(static_shape(weight)) != 5:
        raise CaptureError(f"conv3d: input and weight must be 5-D, got {static_shape(x)} and {static_shape(weight)}")
    out = _conv_nchw("conv3d", x, weight, stride, str(pad_mode).lower(), padding, dilation, groups)
    return _add_bias(out, bias, 1, 5)


def _single(value, what: str) -> int:
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise CaptureError(f"{what}: expected an int, got {value!r}")
        value = value[0]
    return as_tuple(value, 1, what)[0]


# -- transposed convolution -------------------------------------------------------------------
def _conv_transpose(what: str, x, weight, stride, pad_mode, padding, output_padding, dilation, groups):
    """Transposed convolution (the gradient of a convolution w.r.t. its input), MindSpore's output sizes.

    Output per spatial axis, with ``f = dilation * (k - 1) + 1``: 'same' ``in * stride``; 'valid'
    ``max(in * stride, (in - 1) * stride + f)``; 'pad' ``(in - 1) * stride + f - before - after + output_padding``.
    'same' crops ``max(0, f - stride)`` from the full result, the odd one at the end. Positions past the
    full result are zero.
    """
    same_dtype(what, x, weight)
    x_shape, w_shape = static_shape(x), static_shape(weight)
    nd = len(x_shape) - 2
    if len(w_shape) != nd + 2:
        raise CaptureError(f"{what}: expected a {nd + 2}-D weight, got shape {w_shape}")
    if x_shape[1] != w_shape[0]:
        raise CaptureError(f"{what}: input has {x_shape[1]} channels, the weight expects {w_shape[0]}")
    if w_shape[0] % groups:
        raise CaptureError(f"{what}: input channels {w_shape[0]} are not divisible by group {groups}")
    stride, dilation = as_tuple(stride, nd, "stride"), as_tuple(dilation, nd, "dilation")
    pad_mode = str(pad_mode).lower()
    if pad_mode not in PAD_MODES:
        raise CaptureError(f"pad_mode: expected one of {PAD_MODES}, got {pad_mode!r}")
    extra = _spatial_ints(output_padding, nd, "output_padding")
    if pad_mode != "pad" and any(extra):
        raise CaptureError(f"output_padding: must be 0 unless pad_mode is 'pad', got {output_padding!r}")
    pads = spatial_padding(padding, nd) if pad_mode == "pad" else [(0, 0)] * nd
    relax_pads, zero_tail, out_sizes = [], [], []
    for i in range(nd):
        size, k, s, d = x_shape[2 + i], w_shape[2 + i], stride[i], dilation[i]
        full = (size - 1) * s + d * (k - 1) + 1
        before, after = pads[i]
        if pad_mode == "same":
            crop = max(0, full - size * s)
            before, after = crop // 2, crop - crop // 2
            out = size * s
        elif pad_mode == "valid":
            out = max(size * s, full)
        else:
            out = full - before - after + extra[i]
        # output_padding un-crops the end; rows past the full result are plain zeros
        after = max(0, after - max(0, out - (full - before - after)))
        relax_pads.append((before, after))
        zero_tail.append(out - (full - before - after))
        out_sizes.append(out)
    _check_output(what, x_shape[2:], out_sizes)
    if (nd == 2 and int(groups) == 1 and tuple(w_shape[2:]) == tuple(stride) and all(d == 1 for d in dilation)
            and all(p == (0, 0) for p in relax_pads) and not any(zero_tail)):
        return _tiles_to_space(x, weight)
    if nd == 1:
        conv, layouts = _op.nn.conv1d_transpose, ("NCW", "IOW")
    elif nd == 2:
        conv, layouts = _op.nn.conv2d_transpose, ("NCHW", "IOHW")
    else:
        conv, layouts = _op.nn.conv3d_transpose, ("NCDHW", "IODHW")
    out = emit(conv(x, weight, strides=stride, padding=_relax_padding(relax_pads), output_padding=(0,) * nd,
                    dilation=dilation, groups=int(groups), data_layout=layouts[0], kernel_layout=layouts[1]))
    for i, tail in enumerate(zero_tail):
        if tail > 0:
            shape = list(static_shape(out))
            shape[2 + i] = tail
            out = emit(_op.concat([out, _op.broadcast_to(relax.const(0, dtype_of(x)), shape)], axis=2 + i))
    return out


def _tiles_to_space(x, weight):
    """A 2-D transposed convolution whose kernel equals its stride (a U-Net's 2x2/2 up-sampling):
    each input pixel writes its own kh x kw tile, so it is a 1x1 convolution to
    ``out * kh * kw`` channels followed by a depth-to-space shuffle. Relax's conv2d_transpose
    reaches no fast schedule (hundreds of milliseconds where this takes one)."""
    n, _, h, w = static_shape(x)
    cin, cout, kh, kw = static_shape(weight)
    # (in, out, kh, kw) -> (out, kh, kw, in) -> a 1x1 kernel per (out, i, j)
    kernel = emit(_op.reshape(emit(_op.permute_dims(weight, [1, 2, 3, 0])), (cout * kh * kw, cin, 1, 1)))
    tiles = emit(_op.nn.conv2d(x, kernel, strides=(1, 1), padding=(0, 0, 0, 0)))
    tiles = emit(_op.reshape(tiles, (n, cout, kh, kw, h, w)))
    return emit(_op.reshape(emit(_op.permute_dims(tiles, [0, 1, 4, 2, 5, 3])), (n, cout, h * kh, w * kw)))


def _spatial_ints(value, nd: int, what: str) -> tuple[int, ...]:
    if isinstance(value, (int, np.integer)):
        value = (int(value),) * nd
    if not (isinstance(value, Sequence) and len(value) == nd and all(int(v) >= 0 for v in value)):
        raise CaptureError(f"{what}: expected a non-negative int or a tuple of {nd} of them, got {value!r}")
    return tuple(int(v) for v in value)


@rule("conv1d_transpose")
def conv1d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """1-D transposed convolution of (N, C, L); the weight is (in, out/groups, 1, k) or (in, out/groups, k)."""
    x_shape, w_shape = static_shape(x), static_shape(weight)
    if len(x_shape) != 3 or len(w_shape) not in (3, 4) or (len(w_shape) == 4 and w_shape[2] != 1):
        raise CaptureError(f"conv1d_transpose: expected a 3-D input and an (in, out, 1, k) weight, "
                           f"got {x_shape} and {w_shape}")
    x4 = emit(_op.reshape(x, (x_shape[0], x_shape[1], 1, x_shape[2])))
    w4 = weight if len(w_shape) == 4 else emit(_op.reshape(weight, (w_shape[0], w_shape[1], 1, w_shape[2])))
    (left, right), = spatial_padding(padding, 1)
    out = _conv_transpose("conv1d_transpose", x4, w4, (1, _single(stride, "stride")), pad_mode,
                          (0, 0, left, right), (0, _spatial_ints(output_padding, 1, "output_padding")[0]),
                          (1, _single(dilation, "dilation")), groups)
    n, c, _, length = static_shape(out)
    return _add_bias(_op.reshape(out, (n, c, length)), bias, 1, 3)


@rule("conv2d_transpose")
def conv2d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """2-D transposed convolution of NCHW; the weight is (in, out/groups, kh, kw)."""
    if len(static_shape(x)) != 4:
        raise CaptureError(f"conv2d_transpose: input must be 4-D, got shape {static_shape(x)}")
    out = _conv_transpose("conv2d_transpose", x, weight, stride, pad_mode, padding, output_padding, dilation,
                          groups)
    return _add_bias(out, bias, 1, 4)


@rule("conv3d_transpose")
def conv3d_transpose(x, weight, bias=None, stride=1, pad_mode="same", padding=0, output_padding=0, dilation=1,
                     groups=1):
    """3-D transposed convolution of NCDHW; the weight is (in, out/groups, kd, kh, kw)."""
    if len(static_shape(x)) != 5:
        raise CaptureError(f"conv3d_transpose: input must be 5-D, got shape {static_shape(x)}")
    out = _conv_transpose("conv3d_transpose", x, weight, stride, pad_mode, padding, output_padding, dilation,
                          groups)
    return _add_bias(out, bias, 1, 5)


# -- patches ------------------------------------------------------------------------------------
@rule("unfold")
def unfold(x, ksizes, strides, rates, padding="valid"):
    """Image patches of NCHW ``x`` stacked in channels: channel ``(i * kw + j) * C + c`` of output pixel
    (r, s) is input ``(c, r * stride_h + i * rate_h, s * stride_w + j * rate_w)`` ('same' pads with zeros).

    Computed as a depthwise convolution with one-hot kernels, so it stays differentiable.
    """
    shape = static_shape(x)
    if len(shape) != 4:
        raise CaptureError(f"unfold: input must be 4-D (NCHW), got shape {shape}")
    (kh, kw), stride, rate = as_pair(ksizes, "ksizes"), as_pair(strides, "strides"), as_pair(rates, "rates")
    n, c = shape[:2]
    taps = kh * kw
    one_hot = np.tile(np.eye(taps, dtype=dtype_of(x)).reshape(taps, 1, kh, kw), (c, 1, 1, 1))
    patches = emit(_conv_nchw("unfold", x, relax.const(one_hot, dtype_of(x)), stride, str(padding).lower(), 0,
                              rate, c))
    _, _, oh, ow = static_shape(patches)
    by_tap = emit(_op.permute_dims(emit(_op.reshape(patches, (n, c, taps, oh, ow))), [0, 2, 1, 3, 4]))
    return _op.reshape(by_tap, (n, taps * c, oh, ow))
