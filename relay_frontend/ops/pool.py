"""Lowering rules for pooling: max/avg pooling with MindSpore's pad modes, adaptive pooling, global pooling.

Every output size is settled here (floor or ceil mode, PyTorch's rule that a window must start inside
the input or its left padding) and turned into explicit padding, so the Relax pool ops below always run
in floor mode with windows that fit: their results and their gradients then agree with the geometry.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import as_pair, cast, emit
from .conv import PAD_MODES, same_padding, spatial_padding
from .reduce import nan_first_arg
from .registry import rule

_op = relax.op
_NARROW = ("int8", "uint8")  # averaged in float32: Relax's integer pools sum in the input's 8 bits


# -- geometry ---------------------------------------------------------------------------------
def _pool_axis(size: int, kernel: int, stride: int, dilation: int, pad_mode: str, pads: tuple[int, int],
               ceil_mode: bool) -> tuple[int, int, int]:
    """(output size, padding before, padding after) for one spatial axis; the 'after' padding is extended
    so that a floor-mode pool yields the ceil-mode output size."""
    extent = dilation * (kernel - 1) + 1
    if pad_mode == "same":
        before, after = same_padding(size, kernel, stride, dilation)
        return -(-size // stride), before, after
    before, after = pads if pad_mode == "pad" else (0, 0)
    span = size + before + after - extent
    if span < 0:
        raise CaptureError(f"pool: input size {size} with padding ({before}, {after}) is smaller than the "
                           f"kernel extent {extent}")
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + before:  # the last window must start inside
        out -= 1
    return out, before, max(after, (out - 1) * stride + extent - size - before)


def _pool_args(x, kernel_size, stride, pad_mode, padding, ceil_mode, dilation, data_format):
    if data_format not in ("NCHW", "NHWC"):
        raise CaptureError(f"data_format: expected 'NCHW' or 'NHWC', got {data_format!r}")
    shape = static_shape(x)
    if len(shape) != 4:
        raise CaptureError(f"pool2d: input must be 4-D, got shape {shape}")
    pad_mode = str(pad_mode).lower()
    if pad_mode not in PAD_MODES:
        raise CaptureError(f"pad_mode: expected one of {PAD_MODES}, got {pad_mode!r}")
    kernel, stride = as_pair(kernel_size, "kernel_size"), as_pair(stride, "stride")
    dilation = as_pair(dilation, "dilation")
    hw = shape[2:] if data_format == "NCHW" else shape[1:3]
    pads = spatial_padding(padding, 2) if pad_mode == "pad" else [(0, 0)] * 2
    axes = [_pool_axis(hw[i], kernel[i], stride[i], dilation[i], pad_mode, pads[i], bool(ceil_mode)) for i in range(2)]
    out = tuple(a[0] for a in axes)
    relax_pad = (axes[0][1], axes[1][1], axes[0][2], axes[1][2])
    return pad_mode, kernel, stride, dilation, pads, out, relax_pad


# -- max and average pooling --------------------------------------------------------------------
@rule("max_pool2d")
def max_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False, data_format="NCHW",
               dilation=1, return_indices=False):
    """2-D max pooling; with ``return_indices`` also the int64 index of each maximum in its input plane (H * W)."""
    pad_mode, kernel, stride, dilation, _, out, pad = _pool_args(x, kernel_size, stride, pad_mode, padding,
                                                                 ceil_mode, dilation, data_format)
    values = _op.nn.max_pool2d(x, kernel, stride, pad, dilation, ceil_mode=False, layout=data_format)
    if not return_indices:
        return values
    if data_format != "NCHW":
        raise CaptureError("max_pool2d: return_indices needs data_format 'NCHW'")
    h, w = static_shape(x)[2:]
    rows = [_window_positions(o, stride[0], pad[0], kernel[0], dilation[0], h) for o in range(out[0])]
    cols = [_window_positions(o, stride[1], pad[1], kernel[1], dilation[1], w) for o in range(out[1])]
    table = np.array([[r * w + c if r >= 0 and c >= 0 else h * w for r in rs for c in cs]
                      for rs in rows for cs in cols], dtype=np.int64)
    return relax.Tuple([values, _argmax_in_windows(x, table, out)])


def _window_positions(o: int, stride: int, before: int, kernel: int, dilation: int, size: int) -> list[int]:
    """Input positions of window ``o`` along an axis; -1 marks padding."""
    start = o * stride - before
    return [p if 0 <= p < size else -1 for p in range(start, start + kernel * dilation, dilation)]


@rule("avg_pool2d")
def avg_pool2d(x, kernel_size=1, stride=1, pad_mode="valid", padding=0, ceil_mode=False,
               count_include_pad=None, data_format="NCHW", divisor_override=None):
    """Average pooling. 'same' leaves the padding out of each average (MindSpore's AvgPool); otherwise
    ``count_include_pad`` (default: True for 'pad') counts the explicit padding but never the extra room
    a ceil-mode window needs past it; ``divisor_override`` replaces the divisor. int8/uint8 inputs are
    averaged in float32 (sums exact) and rounded half to even back to their dtype."""
    if dtype_of(x) in _NARROW:
        avg = avg_pool2d(cast(x, "float32"), kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad,
                         data_format, divisor_override)
        return _narrow_result(avg, dtype_of(x))
    pad_mode, kernel, stride, _, pads, out, pad = _pool_args(x, kernel_size, stride, pad_mode, padding, ceil_mode, 1,
                                                             data_format)
    if count_include_pad is None:
        count_include_pad = pad_mode == "pad"
    include = divisor_override is not None or (bool(count_include_pad) and pad_mode != "same")
    avg = _op.nn.avg_pool2d(x, kernel, stride, pad, ceil_mode=False, count_include_pad=include, layout=data_format)
    if not include:
        return avg
    window = kernel[0] * kernel[1]
    if divisor_override is not None:
        if int(divisor_override) == 0:
            raise CaptureError("divisor_override: must not be 0")
        scale = np.full(out, window / int(divisor_override))
    else:
        counts = [[min(o * stride[i] - pads[i][0] + kernel[i], size + pads[i][1]) - (o * stride[i] - pads[i][0])
                   for o in range(out[i])] for i, size in enumerate(_spatial(x, data_format))]
        scale = window / np.outer(counts[0], counts[1])
    if np.all(scale == 1.0):
        return avg
    scale = scale if data_format == "NCHW" else scale[..., None]
    return _op.multiply(emit(avg), relax.const(scale.astype(dtype_of(x)), dtype_of(x)))


def _spatial(x, data_format: str) -> tuple[int, int]:
    shape = static_shape(x)
    return shape[2:] if data_format == "NCHW" else shape[1:3]


def _narrow_result(avg: relax.Expr, dtype: str) -> relax.Expr:
    """A float32 average of int8/uint8 values back to ``dtype``, rounded half to even (it stays in range)."""
    return _op.astype(emit(_op.round(emit(avg))), dtype)


@rule("global_avg_pool2d")
def global_avg_pool2d(x, keep_dims=True):
    """The mean over H and W (NCHW); int8/uint8 inputs as :func:`avg_pool2d`."""
    if dtype_of(x) in _NARROW:
        return _narrow_result(relax.op.mean(cast(x, "float32"), axis=[2, 3], keepdims=bool(keep_dims)), dtype_of(x))
    return relax.op.mean(x, axis=[2, 3], keepdims=bool(keep_dims))


# -- adaptive pooling ---------------------------------------------------------------------------
def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    """Window i covers [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _output_sizes(x, output_size) -> tuple[int, ...]:
    shape = static_shape(x)
    sizes = tuple(shape[len(shape) - len(output_size):])
    if len(shape) < len(output_size):
        raise CaptureError(f"adaptive pool: input of shape {shape} has fewer than {len(output_size)} axes")
    out = tuple(s if o is None else int(o) for s, o in zip(sizes, output_size))
    if any(o < 1 for o in out):
        raise CaptureError(f"output_size: expected positive sizes, got {output_size!r}")
    return out


@rule("adaptive_avg_pool")
def adaptive_avg_pool(x, output_size):
    """Adaptive average pooling of the last ``len(output_size)`` axes (None keeps an axis' size).

    An axis whose size divides by its output is averaged in equal blocks; any other axis by a matrix
    product with the window-averaging matrix (averages over rectangles are separable).
    """
    out_sizes = _output_sizes(x, output_size)
    rank = len(static_shape(x))
    for offset, out in enumerate(out_sizes):
        axis = rank - len(out_sizes) + offset
        shape = static_shape(x)
        size = shape[axis]
        if out == size:
            continue
        if size % out == 0:
            blocks = emit(_op.reshape(x, shape[:axis] + (out, size // out) + shape[axis + 1:]))
            x = emit(_op.mean(blocks, axis=[axis + 1]))
            continue
        weights = np.zeros((size, out), dtype=dtype_of(x))
        for i, (start, end) in enumerate(_adaptive_bounds(size, out)):
            weights[start:end, i] = 1.0 / (end - start)
        order = [a for a in range(rank) if a != axis] + [axis]
        moved = x if axis == rank - 1 else emit(_op.permute_dims(x, order))
        x = emit(_op.matmul(moved, relax.const(weights, dtype_of(x))))
        if axis != rank - 1:
            x = emit(_op.permute_dims(x, [int(i) for i in np.argsort(order)]))
    return x


@rule("adaptive_max_pool")
def adaptive_max_pool(x, output_size, return_indices=False):
    """Adaptive max pooling of the last one or two axes; with ``return_indices`` also the int64 index of
    each maximum in its (flattened) input plane."""
    if len(output_size) not in (1, 2):
        raise CaptureError(f"adaptive_max_pool: pools 1 or 2 axes, got output_size {output_size!r}")
    out_sizes = _output_sizes(x, output_size)
    shape = static_shape(x)
    lead, plane = shape[:len(shape) - len(out_sizes)], shape[len(shape) - len(out_sizes):]
    (h, w), (oh, ow) = ((1,) + plane, (1,) + out_sizes) if len(plane) == 1 else (plane, out_sizes)
    batch = int(np.prod(lead, dtype=np.int64))
    x4 = emit(_op.reshape(x, (batch, 1, h, w)))
    if h % oh == 0 and w % ow == 0 and not return_indices:
        values = emit(_op.nn.max_pool2d(x4, (h // oh, w // ow), (h // oh, w // ow)))
        return _op.reshape(values, lead + out_sizes)
    rows, cols = _adaptive_bounds(h, oh), _adaptive_bounds(w, ow)
    depth = max(e - s for s, e in rows) * max(e - s for s, e in cols)
    table = np.array([_padded([r * w + c for r in range(*rs) for c in range(*cs)], depth)
                      for rs in rows for cs in cols], dtype=np.int64)
    windows = _gather_windows(x4, table)
    values = emit(_op.nn.max_pool2d(windows, (1, depth), (1, depth)))
    values = _op.reshape(values, lead + out_sizes)
    if not return_indices:
        return values
    indices = emit(_op.reshape(_window_argmax(windows, table), lead + out_sizes))
    return relax.Tuple([values, indices])


def _padded(positions: list[int], depth: int) -> list[int]:
    """Repeat the last position up to ``depth`` entries: a repeated element changes no maximum."""
    return positions + [positions[-1]] * (depth - len(positions))


# -- windows by gathering -------------------------------------------------------------------------
def _gather_windows(x4, table: np.ndarray) -> relax.Expr:
    """(N, C, O, K): element k of window o is x's plane position ``table[o, k]``; position H * W reads -inf."""
    n, c, h, w = static_shape(x4)
    flat = emit(_op.reshape(x4, (n, c, h * w)))
    if table.max() >= h * w:
        low = np.array(-np.inf if np.dtype(dtype_of(x4)).kind == "f" else np.iinfo(dtype_of(x4)).min,
                       dtype=dtype_of(x4))
        flat = emit(_op.concat([flat, _op.broadcast_to(relax.const(low, dtype_of(x4)), (n, c, 1))], axis=2))
    picked = emit(_op.take(flat, relax.const(table.reshape(-1), "int64"), axis=2, mode="clip"))
    return emit(_op.reshape(picked, (n, c) + table.shape))


def _window_argmax(windows, table: np.ndarray) -> relax.Expr:
    """The plane position (int64) of each window's first maximum; ``windows`` is (N, C, O, K)."""
    count, depth = table.shape
    best = emit(nan_first_arg(_op.argmax, windows, 3))
    flat = emit(_op.add(best, relax.const(np.arange(count, dtype=np.int64) * depth, "int64")))
    return _op.take(relax.const(table.reshape(-1), "int64"), flat, axis=0, mode="clip")


def _argmax_in_windows(x4, table: np.ndarray, out: tuple[int, int]) -> relax.Expr:
    n, c = static_shape(x4)[:2]
    return _op.reshape(emit(_window_argmax(_gather_windows(x4, table), table)), (n, c) + tuple(out))
