"""Gradient rules for Relax ops that TVM's ``Gradient`` pass does not differentiate, or differentiates wrongly."""
from __future__ import annotations

import numpy as np
from tvm import relax
from tvm.relax.op._op_gradient import concat_grad as _tvm_concat_grad
from tvm.relax.op._op_gradient import no_grad as _no_grad
from tvm.relax.op.base import null_value, register_gradient

_op = relax.op


def _dtype(expr) -> str:
    return str(expr.ty.dtype)


def _nulls(call, skip: int) -> list:
    """Placeholders for the arguments that take no gradient (attributes passed as arguments)."""
    return [null_value() for _ in call.args[skip:]]


def _register(op_name: str):
    def wrap(fn):
        try:
            register_gradient(op_name, fn)
        except Exception:  # already registered (a newer TVM may ship its own rule)
            pass
        return fn
    return wrap


def _override(op_name: str):
    """Register a rule that replaces TVM's own (which sits at the default level 10)."""
    def wrap(fn):
        try:
            register_gradient(op_name, fn, level=11)
        except Exception:  # already overridden (module imported twice)
            pass
        return fn
    return wrap


@_register("relax.rsqrt")
def _rsqrt_grad(orig_var, orig_call, output_grad, ctx):
    # d/dx x^-1/2 = -1/2 * x^-3/2 = -0.5 * y^3
    y = orig_var
    return [_op.multiply(output_grad, _op.multiply(relax.const(-0.5, _dtype(y)), _op.multiply(y, _op.multiply(y, y))))]


@_override("relax.nn.relu")
def _relu_grad(orig_var, orig_call, output_grad, ctx):
    # MindSpore's ReluGrad (and PyTorch) give 0 at x == 0; TVM's rule passes the gradient there
    x = orig_call.args[0]
    zero = relax.const(0, _dtype(x))
    return [_op.where(_op.greater(x, zero), output_grad, zero)]


@_register("relax.square")
def _square_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [_op.multiply(output_grad, _op.multiply(relax.const(2.0, _dtype(x)), x))]


@_register("relax.erf")
def _erf_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    coeff = relax.const(1.1283791670955126, _dtype(x))  # 2 / sqrt(pi)
    return [_op.multiply(output_grad, _op.multiply(coeff, _op.exp(_op.negative(_op.multiply(x, x)))))]


@_register("relax.clip")
def _clip_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    return [_op.where(_op.equal(orig_var, x), output_grad, _op.zeros_like(output_grad))] + _nulls(orig_call, 1)


def _reduce_extreme_grad(orig_var, orig_call, output_grad, ctx):
    x = orig_call.args[0]
    attrs = orig_call.attrs
    axis = None if attrs.axis is None else [int(a) for a in attrs.axis]
    keep = bool(attrs.keepdims)
    shape = [int(d) for d in x.ty.shape.values]
    y, g = orig_var, output_grad
    if not keep:
        axes = range(len(shape)) if axis is None else [a % len(shape) for a in axis]
        keep_shape = [1 if i in axes else d for i, d in enumerate(shape)]
        y, g = _op.reshape(y, keep_shape), _op.reshape(g, keep_shape)
    hit = _op.astype(_op.equal(x, y), _dtype(x))
    count = _op.sum(hit, axis=axis, keepdims=True)
    return [_op.divide(_op.multiply(hit, g), count)]


_register("relax.max")(_reduce_extreme_grad)
_register("relax.min")(_reduce_extreme_grad)


@_register("relax.floor")
def _floor_grad(orig_var, orig_call, output_grad, ctx):
    # piecewise constant: zero almost everywhere (lgamma's reflection uses x - floor(x))
    return [_op.zeros_like(orig_call.args[0])]


# -- convolutions ------------------------------------------------------------------------------
# TVM's conv2d rule ignores dilation in the input gradient, and conv3d / the transposed
# convolutions have none: these rules cover N-d NC<spatial> convolutions with any stride,
# padding, dilation and groups, composed from convolutions that legalize.
_CONV = {2: _op.nn.conv2d, 3: _op.nn.conv3d}
_CONV_T = {2: _op.nn.conv2d_transpose, 3: _op.nn.conv3d_transpose}
_LAYOUTS = {2: ("NCHW", "OIHW", "IOHW"), 3: ("NCDHW", "OIDHW", "IODHW")}


def _shape(expr) -> list[int]:
    return [int(d) for d in expr.ty.shape.values]


def _check_conv_layouts(attrs, nd: int, transpose: bool) -> None:
    data, oi, io = _LAYOUTS[nd]
    kernel = io if transpose else oi
    if attrs.data_layout != data or attrs.kernel_layout != kernel or attrs.out_layout != data:
        raise ValueError(f"gradient of a convolution needs {data}/{kernel} layouts, got "
                         f"{attrs.data_layout}/{attrs.kernel_layout}/{attrs.out_layout}")


def _crop(expr, sizes: list[int]):
    """The leading ``sizes`` positions of the spatial axes (axes 2, 3, ...)."""
    axes = [2 + i for i in range(len(sizes))]
    return _op.strided_slice(expr, axes=axes, begin=[0] * len(sizes), end=list(sizes))


def _conv_input_grad(gy, weight, x_shape, strides, padding, dilation, groups, nd):
    """d/dx of ``y = conv(x, weight)``: a transposed convolution of ``gy`` (weight kept OI..)."""
    k, g_sp = _shape(weight)[2:], _shape(gy)[2:]
    out = [(g_sp[i] - 1) * strides[i] - padding[i] - padding[nd + i] + dilation[i] * (k[i] - 1) + 1
           for i in range(nd)]
    extra = [x_shape[2 + i] - out[i] for i in range(nd)]
    layout = _LAYOUTS[nd]
    return _CONV_T[nd](gy, weight, strides=strides, padding=padding, output_padding=extra, dilation=dilation,
                       groups=groups, data_layout=layout[0], kernel_layout=layout[2])


def _conv_weight_grad(x, gy, w_shape, strides, padding, dilation, groups, nd):
    """d/dw of ``y = conv(x, w)`` (w is (O, C/groups, k...)): a grouped convolution of ``x`` (batch and
    channels swapped) with ``gy`` as kernel, stride and dilation exchanged, cropped to the kernel size."""
    x_shape = _shape(x)
    n, c, spatial = x_shape[0], x_shape[1], x_shape[2:]
    cg = c // groups
    # (N, C, S) -> (C/g, g*N, S): channel (group, n) of a batch of C/g images
    data = _op.reshape(x, [n, groups, cg] + spatial)
    data = _op.permute_dims(data, [2, 1, 0] + [3 + i for i in range(nd)])
    data = _op.reshape(data, [cg, groups * n] + spatial)
    kernel = _op.permute_dims(gy, [1, 0] + [2 + i for i in range(nd)])  # (O, N, S_out)
    full = _CONV[nd](data, kernel, strides=dilation, padding=padding, dilation=strides, groups=groups)
    full = _op.permute_dims(full, [1, 0] + [2 + i for i in range(nd)])  # (O, C/g, K')
    return _crop(full, w_shape[2:])


def _zero_insert(t, shape, strides):
    """``t`` of ``shape`` (N, C, H, W) -> (N, C, H*sh, W*sw): pixel (i, j) moved to (i*sh, j*sw),
    zeros in between."""
    n, c, h, w = shape
    sh, sw = strides
    up = _op.reshape(t, [n, c, h, 1, w, 1])
    up = _op.nn.pad(up, [0, 0, 0, 0, 0, 0, 0, sh - 1, 0, 0, 0, sw - 1])
    return _op.reshape(up, [n, c, h * sh, w * sw])


def _window(t, sp, begin, size):
    """Spatial window ``[begin, begin + size)`` of ``t`` (spatial size ``sp``), zeros where it lies outside."""
    lo = [max(-begin[i], 0) for i in range(2)]
    hi = [max(begin[i] + size[i] - sp[i], 0) for i in range(2)]
    if any(lo + hi):
        t = _op.nn.pad(t, [0, 0, 0, 0, lo[0], hi[0], lo[1], hi[1]])
    start = [begin[i] + lo[i] for i in range(2)]
    if start == [0, 0] and [sp[i] + lo[i] + hi[i] for i in range(2)] == list(size):
        return t
    return _op.strided_slice(t, axes=[2, 3], begin=start, end=[start[i] + size[i] for i in range(2)])


def _phase_taps(k: int, s: int, pad: int, phase: int, g_size: int, size: int) -> tuple[int, int, int, int, int]:
    """One axis of output phase ``phase`` (x positions ``s*u + phase``) of a strided convolution's
    input gradient: ``dx[s*u + phase] = sum_m w[r + s*m] * gy[u + q - m]``.

    Returns:
        (r, taps, lo, hi, crop): the first kernel tap ``r`` and the tap count (0: the phase gets
        no contribution), the padding of ``gy`` before/after for a stride-1 correlation with the
        flipped taps, and the first position of the phase in that correlation's output.
    """
    r, q = (phase + pad) % s, (phase + pad) // s
    taps = max(-(-(k - r) // s), 0)
    length = -(-(size - phase) // s)  # positions u of this phase
    begin = q - taps + 1  # first gy position the window of u = 0 reads
    lo, hi = max(-begin, 0), max(begin + length + taps - 1 - g_size, 0)
    return r, taps, lo, hi, begin + lo


def _phase_input_grad(gy, kernel, k, x_shape, strides, padding, groups):
    """d/dx of a strided 2-D convolution (dilation 1) as one stride-1 conv2d per output phase.

    The zero-inserted form multiplies ``(s_h*s_w - 1) / (s_h*s_w)`` of its products by inserted
    zeros; here phase ``(p, q)`` (x positions ``(s_h*u + p, s_w*v + q)``) correlates ``gy`` with
    only the kernel taps that reach it (``kernel``: in/out swapped, not flipped, spatial size
    ``k``), and the phases are interleaved into ``dx`` (of ``x_shape``).
    """
    sh, sw = strides
    (n, c), size, g_sp = x_shape[:2], x_shape[2:], _shape(gy)[2:]
    rows, cols = -(-size[0] // sh), -(-size[1] // sw)
    phases = []
    for p in range(sh):
        row = []
        for q in range(sw):
            rh, th, loh, hih, ch = _phase_taps(k[0], sh, padding[0], p, g_sp[0], size[0])
            rw, tw, low, hiw, cw = _phase_taps(k[1], sw, padding[1], q, g_sp[1], size[1])
            lengths = [-(-(size[0] - p) // sh), -(-(size[1] - q) // sw)]
            if th == 0 or tw == 0 or min(lengths) <= 0:  # no tap reaches it, or no x position is in it
                row.append(_op.zeros([n, c, rows, cols], _dtype(gy)))
                continue
            taps = _op.strided_slice(kernel, axes=[2, 3], begin=[rh, rw],
                                     end=[rh + sh * (th - 1) + 1, rw + sw * (tw - 1) + 1], strides=[sh, sw])
            taps = _op.flip(_op.flip(taps, axis=2), axis=3)
            phase = _op.nn.conv2d(gy, taps, strides=[1, 1], padding=[loh, low, hih, hiw], groups=groups)
            out = [g_sp[0] + loh + hih - th + 1, g_sp[1] + low + hiw - tw + 1]
            if [ch, cw] != [0, 0] or out != lengths:
                phase = _op.strided_slice(phase, axes=[2, 3], begin=[ch, cw],
                                          end=[ch + lengths[0], cw + lengths[1]])
            if lengths != [rows, cols]:  # a short last phase: pad to the common size, cropped below
                phase = _op.nn.pad(phase, [0, 0, 0, 0, 0, rows - lengths[0], 0, cols - lengths[1]])
            row.append(phase)
        phases.append(row)
    # (N, C, rows, [sh,] cols, [sw]) -> (N, C, rows * sh, cols * sw): phase (p, q) at (sh*u + p, sw*v + q)
    interleaved = [_op.stack(row, axis=4) if sw > 1 else row[0] for row in phases]
    dx = _op.stack(interleaved, axis=3) if sh > 1 else _op.expand_dims(interleaved[0], 3)
    dx = _op.reshape(dx, [n, c, rows * sh, cols * sw])
    if [rows * sh, cols * sw] != list(size):
        dx = _op.strided_slice(dx, axes=[2, 3], begin=[0, 0], end=list(size))
    return dx


def _conv2d_input_grad(gy, weight, x_shape, strides, padding, dilation, groups):
    """d/dx of a 2-D ``y = conv2d(x, weight)`` as a stride-1 conv2d (the form the default schedules
    run fast): ``gy`` correlated with the spatially flipped weight whose in/out channels are swapped
    (per group), cropped to ``x``. Strides > 1: one such conv2d per output phase (dilation 1,
    ``_phase_input_grad``), else ``gy`` with zeros inserted between its pixels; a 1x1 kernel
    convolves first and inserts the zeros after (no products of zeros)."""
    o = _shape(gy)[1]
    w_shape = _shape(weight)
    cg, k = w_shape[1], w_shape[2:]
    og = o // groups
    kernel = _op.reshape(weight, [groups, og, cg] + k)
    kernel = _op.permute_dims(kernel, [0, 2, 1, 3, 4])
    kernel = _op.reshape(kernel, [groups * cg, og] + k)
    strided = any(s > 1 for s in strides)
    size = x_shape[2:]
    if k == [1, 1]:
        dx = _op.nn.conv2d(gy, kernel, strides=[1, 1], padding=[0, 0, 0, 0], groups=groups)
        sp = _shape(gy)[2:]
        if strided:
            dx = _zero_insert(dx, [x_shape[0], x_shape[1]] + sp, strides)
            sp = [sp[i] * strides[i] for i in range(2)]
        # padded-input position p = x position + pad_before
        return _window(dx, sp, [padding[0], padding[1]], size)
    if strided and list(dilation) == [1, 1]:
        return _phase_input_grad(gy, kernel, k, x_shape, strides, padding, groups)
    g_sp = _shape(gy)[2:]
    if strided:
        g_sp = [(g_sp[i] - 1) * strides[i] + 1 for i in range(2)]
        gy = _op.strided_slice(_zero_insert(gy, _shape(gy), strides), axes=[2, 3], begin=[0, 0], end=g_sp)
    kernel = _op.flip(_op.flip(kernel, axis=2), axis=3)
    # out[t] = dx_padded[t]: x position i is t = i + pad_before; the pads below give exactly x's size
    reach = [dilation[i] * (k[i] - 1) for i in range(2)]
    lo = [reach[i] - padding[i] for i in range(2)]
    hi = [size[i] - g_sp[i] - lo[i] + reach[i] for i in range(2)]
    conv_pad = [max(lo[0], 0), max(lo[1], 0), max(hi[0], 0), max(hi[1], 0)]
    dx = _op.nn.conv2d(gy, kernel, strides=[1, 1], padding=conv_pad, dilation=dilation, groups=groups)
    if min(lo + hi) < 0:
        begin = [max(-lo[i], 0) for i in range(2)]
        dx = _op.strided_slice(dx, axes=[2, 3], begin=begin, end=[begin[i] + size[i] for i in range(2)])
    return dx


def _conv2d_weight_grad(x, gy, w_shape, strides, padding, dilation):
    """d/dw of an ungrouped 2-D ``y = conv2d(x, w)`` as one product per kernel offset:
    ``dw[:, :, i, j].T = X_ij @ G`` with ``X_ij`` the (C, N*OH*OW) pixels of ``x`` that offset
    (i, j) reads and ``G`` the (N*OH*OW, O) output gradient. Plain matmuls over activations, which
    the default schedules tile, where a convolution with ``gy`` as a huge kernel would not be."""
    n, c = _shape(x)[:2]
    o, _, kh, kw = w_shape
    oh, ow = _shape(gy)[2:]
    pt, pl, pb, pr = padding
    data = _op.permute_dims(x, [1, 0, 2, 3])  # (C, N, H, W)
    if pt or pl or pb or pr:
        data = _op.nn.pad(data, [0, 0, 0, 0, pt, pb, pl, pr])
    grads = _op.reshape(_op.permute_dims(gy, [0, 2, 3, 1]), [n * oh * ow, o])
    sh, sw = strides
    dh, dw = dilation
    taps = []
    for i in range(kh):
        for j in range(kw):
            tap = _op.strided_slice(data, axes=[2, 3], begin=[i * dh, j * dw],
                                    end=[i * dh + (oh - 1) * sh + 1, j * dw + (ow - 1) * sw + 1], strides=[sh, sw])
            tap = _op.matmul(_op.reshape(tap, [c, n * oh * ow]), grads)  # (C, O)
            taps.append(_op.expand_dims(tap, 0))
    full = taps[0] if len(taps) == 1 else _op.concat(taps, axis=0)  # (KH*KW, C, O)
    return _op.reshape(_op.permute_dims(full, [2, 1, 0]), [o, c, kh, kw])


def _conv_attrs(attrs):
    return ([int(s) for s in attrs.strides], [int(p) for p in attrs.padding], [int(d) for d in attrs.dilation],
            int(attrs.groups))


def _conv_grad(orig_var, orig_call, output_grad, ctx):
    x, weight = orig_call.args
    nd = len(_shape(x)) - 2
    _check_conv_layouts(orig_call.attrs, nd, transpose=False)
    strides, padding, dilation, groups = _conv_attrs(orig_call.attrs)
    if nd == 2:
        if len(padding) == 2:
            padding = padding * 2
        dw = (_conv2d_weight_grad(x, output_grad, _shape(weight), strides, padding, dilation) if groups == 1
              else _conv_weight_grad(x, output_grad, _shape(weight), strides, padding, dilation, groups, nd))
        return [_conv2d_input_grad(output_grad, weight, _shape(x), strides, padding, dilation, groups), dw]
    return [_conv_input_grad(output_grad, weight, _shape(x), strides, padding, dilation, groups, nd),
            _conv_weight_grad(x, output_grad, _shape(weight), strides, padding, dilation, groups, nd)]


def _conv_transpose_grad_nd(x, weight, gy, strides, padding, dilation, groups, nd):
    """(dx, dw) of ``y = conv_transpose(x, w)``: the transpose of a convolution from y-space to x-space
    with the same weight (IO.. read as OI..), so dx is that convolution of ``gy`` and dw its weight
    gradient with ``x`` as output gradient."""
    x_shape = _shape(x)
    # end padding kept whole (output_padding only grows y): extra trailing outputs are cropped
    dx = _CONV[nd](gy, weight, strides=strides, padding=padding, dilation=dilation, groups=groups)
    dx = _crop(dx, x_shape[2:])
    dw = _conv_weight_grad(gy, x, _shape(weight), strides, padding, dilation, groups, nd)
    return [dx, dw]


def _conv_transpose_grad(orig_var, orig_call, output_grad, ctx):
    x, weight = orig_call.args
    nd = len(_shape(x)) - 2
    _check_conv_layouts(orig_call.attrs, nd, transpose=True)
    strides, padding, dilation, groups = _conv_attrs(orig_call.attrs)
    return _conv_transpose_grad_nd(x, weight, output_grad, strides, padding, dilation, groups, nd)


@_register("relax.nn.conv1d_transpose")
def _conv1d_transpose_grad(orig_var, orig_call, output_grad, ctx):
    attrs = orig_call.attrs
    if attrs.data_layout != "NCW" or attrs.kernel_layout != "IOW" or attrs.out_layout != "NCW":
        raise ValueError("gradient of conv1d_transpose needs NCW/IOW layouts")
    x, weight = orig_call.args
    (s,), (pb, pe), (d,) = [int(v) for v in attrs.strides], [int(v) for v in attrs.padding], \
        [int(v) for v in attrs.dilation]
    # as a 2-D transposed convolution over a height-1 image
    x4 = ctx.normalize(_op.expand_dims(x, 2))
    w4 = ctx.normalize(_op.expand_dims(weight, 2))
    g4 = ctx.normalize(_op.expand_dims(output_grad, 2))
    dx, dw = _conv_transpose_grad_nd(x4, w4, g4, [1, s], [0, pb, 0, pe], [1, d], int(attrs.groups), 2)
    return [_op.squeeze(dx, [2]), _op.squeeze(dw, [2])]


_override("relax.nn.conv2d")(_conv_grad)
_register("relax.nn.conv3d")(_conv_grad)
_register("relax.nn.conv2d_transpose")(_conv_transpose_grad)
_register("relax.nn.conv3d_transpose")(_conv_transpose_grad)


@_override("relax.nn.max_pool2d")
def _max_pool2d_grad(orig_var, orig_call, output_grad, ctx):
    """Pools whose windows tile the input (kernel == stride, no padding, as LeNet's): each output's
    gradient goes to the first maximum of its window (row-major, as PyTorch's) in one broadcast
    select, where TVM's ``max_pool2d_backward`` searches every window of every input pixel. Other
    pools keep TVM's rule (the select chain of overlapping windows compiles far too slowly)."""
    from tvm.relax.op._op_gradient import max_pool2d_grad as tvm_rule

    attrs = orig_call.attrs
    x = orig_call.args[0]
    kh, kw = [int(v) for v in attrs.pool_size]
    strides = [int(v) for v in attrs.strides]
    dilation = [int(v) for v in attrs.dilation]
    padding = [int(v) for v in attrs.padding]
    shape, out = _shape(x), _shape(orig_var)
    size, osp = shape[2:], out[2:]
    if (attrs.layout != "NCHW" or attrs.out_layout != "NCHW" or [kh, kw] != strides or any(padding)
            or any(d != 1 for d in dilation) or any(osp[i] * strides[i] > size[i] for i in range(2))):
        return tvm_rule(orig_var, orig_call, output_grad, ctx)
    n, c = out[:2]
    idx = relax.const(kh * kw, "int32")
    for t in reversed(range(kh * kw)):  # the first hit wins
        i, j = divmod(t, kw)
        window = _op.strided_slice(x, axes=[2, 3], begin=[i, j],
                                   end=[i + (osp[0] - 1) * kh + 1, j + (osp[1] - 1) * kw + 1], strides=strides)
        idx = _op.where(_op.equal(window, orig_var), relax.const(t, "int32"), idx)
    offset = relax.const(np.arange(kh * kw, dtype="int32").reshape(1, 1, 1, kh, 1, kw))
    part = _op.where(_op.equal(_op.reshape(idx, [n, c, osp[0], 1, osp[1], 1]), offset),
                     _op.reshape(output_grad, [n, c, osp[0], 1, osp[1], 1]), relax.const(0, _dtype(x)))
    part = _op.reshape(part, [n, c, osp[0] * kh, osp[1] * kw])
    return [_window(part, [osp[0] * kh, osp[1] * kw], [0, 0], size)]


def _concat_grad(orig_var, orig_call, output_grad, ctx):
    # TVM's rule splits at an empty index list for a one-tensor concat, which is no tuple
    fields = orig_call.args[0].ty.fields
    if len(fields) == 1:
        return [relax.Tuple([output_grad])]
    return [_tvm_concat_grad(orig_var, orig_call, output_grad, ctx)[0]]


_override("relax.concat")(_concat_grad)


# -- shape ops TVM has no rule for ---------------------------------------------------------------
@_register("relax.squeeze")
def _squeeze_grad(orig_var, orig_call, output_grad, ctx):
    return [_op.reshape(output_grad, _shape(orig_call.args[0]))]


def _slice_positions(begin: int, end: int, step: int, size: int) -> tuple[int, int]:
    """(first index, count) of a positive-step slice ``[begin:end:step]`` of an axis of ``size``."""
    first = min(max(begin + size if begin < 0 else begin, 0), size)
    stop = min(max(end + size if end < 0 else end, 0), size)
    return first, max(0, -(-(stop - first) // step))


@_register("relax.strided_slice")
def _strided_slice_grad(orig_var, orig_call, output_grad, ctx):
    # each sliced element's gradient goes back to where it was read; zeros elsewhere (positive steps)
    x = orig_call.args[0]
    shape = _shape(x)
    fields = [[int(getattr(v, "value", v)) for v in arg.fields] for arg in orig_call.args[1:]]
    axes, begins, ends = fields[:3]
    steps = fields[3] if len(fields) > 3 else [1] * len(axes)
    if any(step <= 0 for step in steps):
        raise NotImplementedError("gradient of a strided_slice with a non-positive step")
    grad, sizes = output_grad, _shape(orig_var)
    for axis, begin, end, step in zip(axes, begins, ends, steps):
        axis = axis % len(shape)
        first, count = _slice_positions(begin, end, step, shape[axis])
        if step > 1 and count > 0:
            # element k moves to k*step: step-1 zeros after each, the overhang cut off
            spread = sizes[:axis + 1] + [1] + sizes[axis + 1:]
            pad = [0] * (2 * len(spread))
            pad[2 * (axis + 1) + 1] = step - 1
            grad = _op.nn.pad(_op.reshape(grad, spread), pad)
            sizes[axis] = count * step
            grad = _op.reshape(grad, sizes)
            sizes[axis] = (count - 1) * step + 1
            grad = _op.strided_slice(grad, axes=[axis], begin=[0], end=[sizes[axis]])
        pad = [0] * (2 * len(shape))
        pad[2 * axis], pad[2 * axis + 1] = first, shape[axis] - first - sizes[axis]
        grad = _op.nn.pad(grad, pad)
        sizes[axis] = shape[axis]
    return [grad, *(_no_grad(arg) for arg in orig_call.args[1:])]


@_register("relax.tile")
def _tile_grad(orig_var, orig_call, output_grad, ctx):
    # output axis i is reps[i] copies of input axis i: view it as (reps[i], size[i]) and sum the copies
    x = orig_call.args[0]
    shape = _shape(x)
    reps = [int(r) for r in orig_call.attrs.repeats]
    rank = max(len(shape), len(reps))
    shape = [1] * (rank - len(shape)) + shape
    reps = [1] * (rank - len(reps)) + reps
    split = [d for pair in zip(reps, shape) for d in pair]
    summed = _op.sum(_op.reshape(output_grad, split), axis=list(range(0, 2 * rank, 2)))
    return [_op.reshape(summed, _shape(x))]


@_register("relax.prod")
def _prod_grad(orig_var, orig_call, output_grad, ctx):
    # d prod / d x_i = the product of the others. Over up to 1024 reduced elements that product is
    # taken directly (x with its own entry set to 1: exact at zeros); beyond, prod / x_i.
    x = orig_call.args[0]
    shape = _shape(x)
    rank = len(shape)
    attrs = orig_call.attrs
    axes = list(range(rank)) if attrs.axis is None else sorted(int(a) % rank for a in attrs.axis)
    kept_shape = [1 if i in axes else d for i, d in enumerate(shape)]
    g = _op.reshape(output_grad, kept_shape)
    size = 1
    for i in axes:
        size *= shape[i]
    if size > 1024:
        return [_op.multiply(g, _op.divide(_op.reshape(orig_var, kept_shape), x))]
    kept = [i for i in range(rank) if i not in axes]
    perm = kept + axes
    flat = _op.reshape(_op.permute_dims(x, perm), [shape[i] for i in kept] + [1, size])
    eye = relax.const(np.eye(size, dtype=bool))
    others = _op.prod(_op.where(eye, relax.const(1, _dtype(x)), flat), axis=[-1])  # (kept..., size)
    others = _op.reshape(others, [shape[i] for i in perm])
    others = _op.permute_dims(others, [perm.index(i) for i in range(rank)])
    return [_op.multiply(others, g)]


# -- piecewise-constant ops: zero gradient almost everywhere (as MindSpore's) ---------------------
def _zero_grads(orig_var, orig_call, output_grad, ctx):
    return [_op.zeros_like(arg) for arg in orig_call.args]


for _name in ("relax.ceil", "relax.round", "relax.sign", "relax.floor_divide"):
    _register(_name)(_zero_grads)


@_register("relax.floor_mod")
def _floor_mod_grad(orig_var, orig_call, output_grad, ctx):
    # x mod y = x - floor(x / y) * y
    x, y = orig_call.args
    dy = _op.negative(_op.multiply(output_grad, _op.floor(_op.divide(x, y))))
    return [_op.collapse_sum_to(output_grad, x.ty.shape), _op.collapse_sum_to(dy, y.ty.shape)]


@_register("relax.scatter_nd")
def _scatter_nd_grad(orig_var, orig_call, output_grad, ctx):
    # y = data with updates added at (reduction 'add') or written to (reduction 'update') indices
    data, indices, updates = orig_call.args
    reduction = str(orig_call.attrs["reduction"])
    if reduction not in ("add", "update"):
        raise ValueError(f"scatter_nd: no gradient for reduction {reduction!r}")
    d_updates = _op.gather_nd(output_grad, indices)
    if reduction == "add":
        d_data = output_grad
    else:  # written positions do not depend on data
        d_data = _op.scatter_nd(output_grad, indices, _op.zeros_like(updates), "update")
    return [d_data, _no_grad(indices), d_updates]


@_register("relax.grad.no_grad")
def _no_grad_grad(orig_var, orig_call, output_grad, ctx):
    # TVM ships no rule for its own stop-gradient op: what passes through it is a constant to autodiff
    return [_op.zeros_like(orig_call.args[0])]
