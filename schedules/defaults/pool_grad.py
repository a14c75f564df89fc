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

Pools whose windows tile the input (LeNet's 2x2/2) get their gradient from the gradient rule as a
broadcast select over NCHW window slices (``relay_frontend/gradients.py``), which on a channels-last
network transposes the map there and back; :func:`tiling_rewrite_rule` recognizes that select at
its last binding and emits the same two kernels (the select's bindings are left dead).
"""
from __future__ import annotations

import tvm
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


def _bound_call(rw: Rewriter, expr, op_name: str) -> relax.Call | None:
    value = rw.value_of(expr) if isinstance(expr, relax.Var) else expr
    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == op_name:
        return value
    return None


def _tiling_select(rw: Rewriter, var: relax.Var, call: relax.Call):
    """(x, dy, window) when ``var = call`` ends the broadcast-select gradient of a tiling max pool."""
    if call.op.name != "relax.reshape":
        return None
    part = _bound_call(rw, call.args[0], "relax.where")
    if part is None:
        return None
    hit = _bound_call(rw, part.args[0], "relax.equal")
    spread = _bound_call(rw, part.args[1], "relax.reshape")
    zero = part.args[2]
    if hit is None or spread is None or not isinstance(zero, tvm.ir.expr.Constant) or float(zero.value.numpy()) != 0.0:
        return None
    chosen = _bound_call(rw, hit.args[0], "relax.reshape")
    offset = hit.args[1]
    if chosen is None or not isinstance(offset, tvm.ir.expr.Constant):
        return None
    offsets = offset.value.numpy()
    if offsets.ndim != 6 or offsets.shape[:3] != (1, 1, 1) or offsets.shape[4] != 1:
        return None
    kh, kw = offsets.shape[3], offsets.shape[5]
    if (offsets.reshape(kh, kw) != [[a * kw + b for b in range(kw)] for a in range(kh)]).any():
        return None
    first = _bound_call(rw, chosen.args[0], "relax.where")  # where(window_0 == y, 0, ...)
    test = _bound_call(rw, first.args[0], "relax.equal") if first is not None else None
    window = _bound_call(rw, test.args[0], "relax.strided_slice") if test is not None else None
    if window is None:
        return None
    x, dy = window.args[0], spread.args[0]
    x_shape, dy_shape, out_shape = static_shape(x), static_shape(dy), static_shape(var)
    if (x_shape is None or dy_shape is None or x_shape != out_shape or len(x_shape) != 4
            or x_shape != (dy_shape[0], dy_shape[1], dy_shape[2] * kh, dy_shape[3] * kw)
            or not dtype_of(x).startswith("float") or dtype_of(dy) != dtype_of(x)):
        return None
    return x, dy, (kh, kw)


def tiling_rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """The broadcast-select gradient of a max pool whose windows tile the input -> the two NHWC kernels."""
    found = _tiling_select(rw, var, call)
    if found is None:
        return False
    x, dy, pool = found
    x_shape, dy_shape = static_shape(x), static_shape(dy)
    bb = rw.bb
    call_argmax = bb.call_te(window_argmax, rw.nhwc(x), dy_shape[2], dy_shape[3], pool, pool, (0, 0),
                             primfunc_name_hint=ARGMAX)
    kernel = call_argmax.args[0]
    bb.update_func(kernel, bb.get()[kernel].with_attr("op_pattern", OPAQUE))
    argmax = bb.emit(call_argmax)
    rw.set_nhwc(var, bb.emit(bb.call_te(scatter_back, rw.nhwc(dy), argmax, x_shape[2], x_shape[3], pool, pool,
                                        (0, 0), primfunc_name_hint=GRAD)))
    return True
