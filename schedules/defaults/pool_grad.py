"""Max-pooling gradients (``relax.grad.max_pool2d_backward``) as two channels-last gather kernels.

TVM's legalized backward pool recomputes, for every input pixel, the argmax of every window
that covers it, in one reduction no default rule vectorizes: ResNet-18's stem pool (3x3, stride 2,
8x64x112x112) took 570 ms of a 3.4 s training step. Here the rewrite emits

- ``aotnn_pool_argmax``: per output and channel, the tap of the first maximum of its window
  (row-major, as PyTorch's; taps in the padding count as -inf), an int32 map of the output's size;
- ``aotnn_pool_grad``: per input pixel and channel, the sum of the output gradients of the (at most
  ``ceil(kh/sh) * ceil(kw/sw)``) windows that cover it and chose it.

Both are injective, channels-last (channels innermost: one vector per load) and their indices are
clamped into range, so the element-wise rule vectorizes and parallelizes them without guards. The
argmax kernel is marked opaque: fused into the gather, it would be inlined and recomputed for every
window of every input pixel (and the fused expression takes minutes to compile).
"""
from __future__ import annotations

from tvm import relax, te, tirx

from .layout import Rewriter, dtype_of, static_shape

BACKWARD = "relax.grad.max_pool2d_backward"
OPAQUE = 8  # tvm.relax OpPatternKind.kOpaque
ARGMAX = "aotnn_pool_argmax"
GRAD = "aotnn_pool_grad"


def _clamp(index, size: int):
    return tirx.max(tirx.min(index, size - 1), 0)


def window_argmax(x: te.Tensor, out_h: int, out_w: int, pool: tuple[int, int], strides: tuple[int, int],
                  pad: tuple[int, int]) -> te.Tensor:
    """NHWC ``x`` -> (n, out_h, out_w, c) int32: the first maximal tap ``a * kw + b`` of each window."""
    _, height, width, _ = (int(d) for d in x.shape)
    (kh, kw), (sh, sw), (top, left) = pool, strides, pad
    lowest = tirx.const(float("-inf"), x.dtype)

    def element(n, i, j, c):
        taps = []
        for a in range(kh):
            for b in range(kw):
                h, w = i * sh - top + a, j * sw - left + b
                inside = tirx.all(h >= 0, h < height, w >= 0, w < width)
                taps.append(tirx.Select(inside, x[n, _clamp(h, height), _clamp(w, width), c], lowest))
        best = taps[0]
        for value in taps[1:]:
            best = tirx.max(best, value)
        index = tirx.const(len(taps) - 1, "int32")
        for tap in reversed(range(len(taps) - 1)):  # the first maximum wins
            index = tirx.Select(taps[tap] == best, tirx.const(tap, "int32"), index)
        return index

    return te.compute((x.shape[0], out_h, out_w, x.shape[3]), element, name=ARGMAX)


def scatter_back(dy: te.Tensor, argmax: te.Tensor, height: int, width: int, pool: tuple[int, int],
                 strides: tuple[int, int], pad: tuple[int, int]) -> te.Tensor:
    """NHWC output gradient ``dy`` and ``argmax`` -> NHWC input gradient (n, height, width, c)."""
    _, out_h, out_w, _ = (int(d) for d in dy.shape)
    (kh, kw), (sh, sw), (top, left) = pool, strides, pad
    zero = tirx.const(0, dy.dtype)

    def element(n, h, w, c):
        total = zero
        for a in range(-(-kh // sh)):  # the windows covering row h: i = (h + top) // sh - a
            i = tirx.floordiv(h + top, sh) - a
            tap_h = h + top - i * sh
            for b in range(-(-kw // sw)):
                j = tirx.floordiv(w + left, sw) - b
                tap_w = w + left - j * sw
                ci, cj = _clamp(i, out_h), _clamp(j, out_w)
                chosen = tirx.all(i >= 0, i < out_h, j >= 0, j < out_w, tap_h < kh, tap_w < kw,
                                  argmax[n, ci, cj, c] == tap_h * kw + tap_w)
                total = total + tirx.Select(chosen, dy[n, ci, cj, c], zero)
        return total

    return te.compute((dy.shape[0], height, width, dy.shape[3]), element, name=GRAD)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``max_pool2d_backward`` (NCHW, float, no dilation) -> the two NHWC kernels; its result channels-last."""
    if call.op.name != BACKWARD:
        return False
    attrs = call.attrs
    dy, x = call.args[:2]
    x_shape, dy_shape = static_shape(x), static_shape(dy)
    if (attrs.layout != "NCHW" or attrs.out_layout != "NCHW" or x_shape is None or dy_shape is None
            or len(x_shape) != 4 or not dtype_of(x).startswith("float") or dtype_of(dy) != dtype_of(x)
            or any(int(d) != 1 for d in attrs.dilation)):
        return False
    padding = [int(v) for v in attrs.padding]
    pool = tuple(int(v) for v in attrs.pool_size)
    strides = tuple(int(v) for v in attrs.strides)
    pad = (padding[0], padding[1])
    bb = rw.bb
    call_argmax = bb.call_te(window_argmax, rw.nhwc(x), dy_shape[2], dy_shape[3], pool, strides, pad,
                             primfunc_name_hint=ARGMAX)
    kernel = call_argmax.args[0]
    bb.update_func(kernel, bb.get()[kernel].with_attr("op_pattern", OPAQUE))
    argmax = bb.emit(call_argmax)
    rw.set_nhwc(var, bb.emit(bb.call_te(scatter_back, rw.nhwc(dy), argmax, x_shape[2], x_shape[3], pool, strides,
                                        pad, primfunc_name_hint=GRAD)))
    return True
