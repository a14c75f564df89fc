"""2-D convolution on CPUs: NHWC activations, weights packed in output-channel blocks.

The kernel is the classic register-blocked direct convolution: an ``ow_block x oc_block`` tile
of the output stays in SIMD registers while the reduction (kh, kw, ic) runs; every step
broadcasts one input value and multiplies it with ``oc_block / lanes`` weight vectors read
contiguously from the packed weight ``[OC / oc_block, KH, KW, IC / groups, oc_block]``. The
output width and channels are rounded up to whole tiles in a private buffer, so every tile runs
the same unpredicated code; only the write-back (where fused epilogues run) is clipped.

Depthwise convolution vectorizes over channels instead: ``acc[ow, c] += x[.., c] * w[kh, kw, c]``.

3x3 stride-1 convolutions over maps of 30 tiles or more run as Winograd F(2x2, 3x3)
(``winograd.py``), whose 16 products are this kernel as a grouped 1x1 convolution. Small maps
with many channels (7x7) tile their ``OH x OW`` pixels as one row (``flat``): rows of 7 would
waste an eighth of every 4-pixel tile.

The computes are emitted at the Relax level (see ``layout.py``); the blocks keep the names below
through fusion, which is how :func:`schedule` finds them in a fused kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

from tvm import relax, te, tirx
from tvm.s_tir import Schedule

from . import batchnorm_fold, broadcast_epilogue, common, lane_fma, weight_prefetch, winograd
from .cpu import CpuInfo
from .layout import Rewriter, dtype_of, static_shape

CONV = "aotnn_conv2d"
DEPTHWISE = "aotnn_dwconv2d"
PAD = "aotnn_conv2d_pad"
CLAMP = "aotnn_conv2d_clamp"
OUT = "aotnn_conv2d_out"
DW_OUT = "aotnn_dwconv2d_out"  # its own name: a depthwise kernel merged with a 1x1 one has both
UNFLAT = "aotnn_conv2d_unflat"
OUT_ELEMWISE_FUSABLE = 4  # tvm.relax OpPatternKind.kOutEWiseFusable
WIDE_DEPTHWISE = 28  # output columns from which a depthwise tile holds two vectors of channels
# a flat convolution pays one more pass over its output (pixels back to rows, a 1/in-channels share
# of the convolution's work: under 2% from 64 channels on): it must beat row tiles by that much.
# (5% missed 7x7 maps with 32 registers, where 7-pixel row tiles score 1/1.0497 of flat ones)
FLAT_MIN_GAIN = 1.02


@dataclass(frozen=True)
class Conv2dPlan:
    """Tile sizes of one convolution (depthwise: ``oc_block`` is the channel block)."""

    oc_block: int
    ow_block: int
    oc_padded: int
    ow_padded: int


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _staged_registers(cpu: CpuInfo) -> int:
    """Registers a tile pixel holds besides its accumulators: the vector of input channels its
    FMAs take lanes from where the CPU has FMA by lane (``lane_fma.py``), else none."""
    return 1 if cpu.fma_by_lane else 0


def _best_ow_block(ow: int, oc_vectors: int, max_acc: int, max_block: int, pixel_extra: int = 0) -> int:
    """The ow block with the most FMAs per load, discounted by the padded tail's waste; each pixel
    of the block takes ``oc_vectors + pixel_extra`` of the ``max_acc`` registers."""
    best, best_score = 1, -1.0
    for block in range(1, min(ow, max_block) + 1):
        if block * (oc_vectors + pixel_extra) > max_acc:
            break
        intensity = block * oc_vectors / (block + oc_vectors)
        score = intensity * ow / _round_up(ow, block)
        if score > best_score + 1e-9:
            best, best_score = block, score
    return best


def plan_conv2d(cpu: CpuInfo, oc: int, oc_per_group: int, ow: int, dtype: str) -> Conv2dPlan:
    """Tiles for a (possibly grouped) convolution with ``oc`` output channels and output width ``ow``."""
    lanes = cpu.lanes(dtype)
    # accumulators + weight vectors + one broadcast must fit in the register file
    candidates = [2 * lanes, lanes]
    if lanes == 1:  # scalar FPU (Cortex-M4/M7): 4 channels x a row of pixels fill s0-s31
        candidates = [4, 2, 1]
    if oc_per_group == oc and oc % (2 * lanes) and oc % (3 * lanes) == 0:
        # e.g. 24 channels on AVX2: a 4 x 3-vector tile (scheduled as 3 vectors, see
        # :func:`schedule`) loads 7 values per 12 FMAs where an 8 x 1-vector tile loads 9 per 8
        ow_block = _best_ow_block(ow, 3, cpu.vector_registers - 4, 16, _staged_registers(cpu))
        return Conv2dPlan(3 * lanes, ow_block, oc, _round_up(ow, ow_block))
    if oc_per_group == oc:  # not grouped: pad channels up to a whole block if needed
        oc_block = next((c for c in candidates if oc % c == 0), None)
        if oc_block is None:
            oc_block = lanes if oc > lanes else oc
    else:  # grouped: blocks must not straddle groups
        oc_block = next((c for c in candidates if oc_per_group % c == 0), None)
        if oc_block is None:
            oc_block = oc_per_group if oc_per_group <= 2 * lanes else next(
                d for d in range(2 * lanes, 0, -1) if oc_per_group % d == 0)
    oc_vectors = max(1, -(-oc_block // lanes))
    max_acc = cpu.vector_registers - oc_vectors - 1 - (1 if cpu.vector_registers < 32 else 4)
    if cpu.fma_by_lane:  # no broadcast register: the weights and one input vector per pixel
        max_acc = cpu.vector_registers - oc_vectors
    ow_block = _best_ow_block(ow, oc_vectors, max_acc, 16, _staged_registers(cpu))
    return Conv2dPlan(oc_block, ow_block, _round_up(oc, oc_block), _round_up(ow, ow_block))


def plan_depthwise(cpu: CpuInfo, channels: int, ow: int, dtype: str, taps: int = 9) -> Conv2dPlan:
    """Tiles for a depthwise convolution: channels are the vector axis.

    One vector of channels per tile, so that a block's ``taps`` (kh x kw) weight vectors stay in
    registers next to the ``ow_block`` accumulators while the tile slides along the row. Wide maps
    (:data:`WIDE_DEPTHWISE` columns or more) take two vectors: a pixel's 64-byte cache line is then
    used whole by one task instead of half by each of two (their rows no longer fit in L1, so the
    second half was fetched again from L2); on narrow maps the wider tile pads more than it saves.
    """
    lanes = cpu.lanes(dtype)
    widest = 2 * lanes if ow >= WIDE_DEPTHWISE else lanes
    c_block = next(c for c in (2 * lanes, lanes, *range(lanes - 1, 0, -1)) if c <= widest and channels % c == 0)
    free = cpu.vector_registers - 2 - (taps if taps < cpu.vector_registers // 2 else 0)
    ow_block = _best_ow_block(ow, max(1, c_block // lanes), max(2, min(8, free)), 8)
    return Conv2dPlan(c_block, ow_block, _round_up(channels, c_block), _round_up(ow, ow_block))


# ---------------------------------------------------------------- TE computes (emitted with call_te)

def pack_weight(w: te.Tensor, oc_block: int, oc_padded: int) -> te.Tensor:
    """OIHW weights -> ``[OCp / oc_block, KH, KW, I, oc_block]`` (zero rows pad OC up to OCp)."""
    oc, ic, kh, kw = (int(d) for d in w.shape)
    zero = tirx.const(0, w.dtype)

    def element(o, h, k, i, b):
        channel = o * oc_block + b
        if oc_padded == oc:
            return w[channel, i, h, k]
        return tirx.if_then_else(channel < oc, w[tirx.min(channel, oc - 1), i, h, k], zero)

    return te.compute((oc_padded // oc_block, kh, kw, ic, oc_block), element, name="aotnn_pack_conv_weight")


def pack_depthwise_weight(w: te.Tensor) -> te.Tensor:
    """Depthwise OIHW weights ``(C, 1, KH, KW)`` -> ``(KH, KW, C)``."""
    c, _, kh, kw = (int(d) for d in w.shape)
    return te.compute((kh, kw, c), lambda h, k, ch: w[ch, 0, h, k], name="aotnn_pack_dw_weight")


def _nhwc_shape(x: te.Tensor, nchw: bool) -> tuple[int, int, int, int]:
    n, a, b, c = (int(d) for d in x.shape)
    return (n, b, c, a) if nchw else (n, a, b, c)


def _padded_input(x: te.Tensor, padding, rows: int, cols: int, nchw: bool = False,
                  kernel_reads_inside: bool = False) -> te.Tensor:
    """``x`` with ``padding`` (top, left, bottom, right), cut or extended to rows x cols.

    ``kernel_reads_inside``: every output pixel of the convolution reads inside ``x`` (no real
    padding), so rows and columns beyond it are only read by padded tile lanes.

    An NCHW ``x`` (a network's input) stays NCHW: the kernel broadcasts one input value per
    step whatever the layout, and a padded copy in NCHW reads and writes whole rows (an NHWC
    copy of a 3-channel image gathered three planes per pixel: MobileNetV2's stem -9%).
    """
    n, h, w, c = _nhwc_shape(x, nchw)
    top, left = padding[0], padding[1]
    if top == 0 and left == 0 and rows <= h and cols <= w:
        return x
    if not nchw and top == 0 and left == 0 and kernel_reads_inside:
        # the extension only feeds the tiles' padded tail, whose results are never written:
        # read the last pixel again instead of copying the input into a larger buffer
        return te.compute((n, rows, cols, c), lambda b, i, j, ch: x[b, tirx.min(i, h - 1), tirx.min(j, w - 1), ch],
                          name=CLAMP)
    zero = tirx.const(0, x.dtype)

    def padded(b, ch, i, j):
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        row, col = tirx.max(tirx.min(i - top, h - 1), 0), tirx.max(tirx.min(j - left, w - 1), 0)
        return tirx.if_then_else(inside, x[b, ch, row, col] if nchw else x[b, row, col, ch], zero)

    if nchw:
        return te.compute((n, c, rows, cols), padded, name=PAD)
    return te.compute((n, rows, cols, c), lambda b, i, j, ch: padded(b, ch, i, j), name=PAD)


def _out_size(size: int, kernel: int, stride: int, dilation: int, before: int, after: int) -> int:
    return (size + before + after - (kernel - 1) * dilation - 1) // stride + 1


def conv2d_nhwc(x: te.Tensor, wp: te.Tensor, *, strides, padding, dilation, groups: int, out_channels: int,
                ow_block: int, ow_padded: int, nchw_input: bool = False, flat: bool = False,
                bias: te.Tensor | None = None) -> te.Tensor:
    """NHWC convolution with packed weights (see :func:`pack_weight`); padding is (top, left, bottom, right).

    With ``bias`` (one value per output channel) the accumulators start at it (``batchnorm_fold.py``).

    With ``nchw_input`` the input is NCHW and read as such (the result is NHWC all the same). With ``flat`` the
    output rows are tiled as one row of ``OH x OW`` pixels (``ow_padded`` rounds that up): a
    small map (7x7) then wastes less of its tiles than it does row by row."""
    n, h, w, ic = _nhwc_shape(x, nchw_input)
    oc_blocks, kh, kw, ic_per_group, oc_block = (int(d) for d in wp.shape)
    sh, sw = strides
    dh, dw = dilation
    oh = _out_size(h, kh, sh, dh, padding[0], padding[2])
    ow = _out_size(w, kw, sw, dw, padding[1], padding[3])
    rows = (oh - 1) * sh + (kh - 1) * dh + 1
    cols = ((ow if flat else ow_padded) - 1) * sw + (kw - 1) * dw + 1
    real_padding = any(padding) or rows > h or (ow - 1) * sw + (kw - 1) * dw + 1 > w
    data = _padded_input(x, padding, rows, cols, nchw_input, kernel_reads_inside=not real_padding)
    rkh = te.reduce_axis((0, kh), "kh")
    rkw = te.reduce_axis((0, kw), "kw")
    ric = te.reduce_axis((0, ic_per_group), "ic")
    oc_per_group = out_channels // groups

    def channel(o):
        return ric if groups == 1 else (o // oc_per_group) * ic_per_group + ric

    def product(b, i, j, o):
        row, col = i * sh + rkh * dh, j * sw + rkw * dw
        value = data[b, channel(o), row, col] if nchw_input else data[b, row, col, channel(o)]
        return value * wp[o // oc_block, rkh, rkw, ric, o % oc_block]

    def start(o):
        return None if bias is None else bias[tirx.min(o, out_channels - 1)]

    attrs = {"aotnn_tile_ow": ow_block, "aotnn_tile_oc": oc_block}
    if flat:  # pixel m is (m // OW, m % OW); the padded tail recomputes the last pixel
        last = oh * ow - 1
        acc = te.compute((n, 1, ow_padded, oc_blocks * oc_block), lambda b, _, m, o: te.sum(
            product(b, tirx.min(m, last) // ow, tirx.min(m, last) % ow, o), axis=[rkh, rkw, ric], init=start(o)),
            name=CONV, attrs=attrs)
        pixels = te.compute((n, 1, oh * ow, out_channels), lambda b, _, m, o: acc[b, 0, m, o], name=OUT)
        return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: pixels[b, 0, i * ow + j, o], name=UNFLAT)
    acc = te.compute((n, oh, ow_padded, oc_blocks * oc_block),
                     lambda b, i, j, o: te.sum(product(b, i, j, o), axis=[rkh, rkw, ric], init=start(o)),
                     name=CONV, attrs=attrs)
    return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o], name=OUT)


def use_flat(cpu: CpuInfo, oc: int, oc_per_group: int, oh: int, ow: int) -> Conv2dPlan | None:
    """The plan of a flat convolution (see :func:`conv2d_nhwc`) where it beats row tiles, else None.

    Only for small maps with many channels: a task is then a channel block, and there must be
    enough of them to share among the cores.
    """
    if ow > 16 or oh * ow > 256 or oc < 128:
        return None
    rows = plan_conv2d(cpu, oc, oc_per_group, ow, "float32")
    flat = plan_conv2d(cpu, oc, oc_per_group, oh * ow, "float32")
    if _plan_score(cpu, flat, oh * ow) > FLAT_MIN_GAIN * _plan_score(cpu, rows, ow):
        return flat
    return None


def _plan_score(cpu: CpuInfo, plan: Conv2dPlan, width: int) -> float:
    vectors = max(1, -(-plan.oc_block // cpu.lanes("float32")))
    return plan.ow_block * vectors / (plan.ow_block + vectors) * width / plan.ow_padded


def depthwise_nhwc(x: te.Tensor, wd: te.Tensor, *, strides, padding, dilation, c_block: int, ow_block: int,
                   ow_padded: int, bias: te.Tensor | None = None) -> te.Tensor:
    """NHWC depthwise convolution (channel multiplier ``C_out / C_in``) with ``(KH, KW, C_out)`` weights;
    with ``bias`` (one value per channel) the accumulators start at it."""
    n, h, w, ic = (int(d) for d in x.shape)
    kh, kw, oc = (int(d) for d in wd.shape)
    multiplier = oc // ic
    sh, sw = strides
    dh, dw = dilation
    oh = _out_size(h, kh, sh, dh, padding[0], padding[2])
    ow = _out_size(w, kw, sw, dw, padding[1], padding[3])
    rows = (oh - 1) * sh + (kh - 1) * dh + 1
    cols = (ow_padded - 1) * sw + (kw - 1) * dw + 1
    data = _padded_input(x, padding, rows, cols)
    rkh = te.reduce_axis((0, kh), "kh")
    rkw = te.reduce_axis((0, kw), "kw")

    def source(c):
        return c if multiplier == 1 else c // multiplier

    acc = te.compute(
        (n, oh, ow_padded, oc),
        lambda b, i, j, c: te.sum(data[b, i * sh + rkh * dh, j * sw + rkw * dw, source(c)] * wd[rkh, rkw, c],
                                  axis=[rkh, rkw], init=None if bias is None else bias[c]),
        name=DEPTHWISE, attrs={"aotnn_tile_ow": ow_block, "aotnn_tile_oc": c_block})
    return te.compute((n, oh, ow, oc), lambda b, i, j, c: acc[b, i, j, c], name=DW_OUT)


# ---------------------------------------------------------------- the Relax rewrite

def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``relax.nn.conv2d`` (NCHW, OIHW, float32) -> an NHWC kernel over packed weights; an inference
    batch norm right after it is folded in (``batchnorm_fold.py``): the kernel is then emitted at
    the batch norm's last binding, where its scale and shift are known."""
    if call.op.name != "relax.nn.conv2d":
        return False
    attrs = call.attrs
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout) != ("NCHW", "OIHW", "NCHW"):
        return False
    x, w = call.args
    x_shape, w_shape, out_shape = static_shape(x), static_shape(w), static_shape(var)
    if x_shape is None or w_shape is None or out_shape is None:
        return False
    if dtype_of(x) != "float32" or dtype_of(w) != "float32" or dtype_of(var) != "float32":
        return False
    nchw_input = not rw.has_twin(x) and int(attrs.groups) == 1
    fold = None
    if not _is_winograd(rw.cpu, call, x_shape, w_shape, nchw_input):
        fold = batchnorm_fold.find_fold(rw, var, w_shape[0])
    if fold is None:
        rw.set_nhwc(var, _emit(rw, call, x_shape, w_shape, out_shape, nchw_input, None))
        return True
    for dropped in fold.dropped():
        rw.drop(dropped)
    rw.defer(fold.total, lambda: rw.set_nhwc(fold.total, _emit(rw, call, x_shape, w_shape, out_shape,
                                                                nchw_input, fold)))
    return True


def _geometry(attrs) -> tuple[int, tuple, tuple, tuple]:
    """groups, strides, dilation and (top, left, bottom, right) padding of a conv2d call."""
    padding = tuple(int(v) for v in attrs.padding)
    if len(padding) == 2:
        padding = padding * 2
    return (int(attrs.groups), tuple(int(v) for v in attrs.strides), tuple(int(v) for v in attrs.dilation),
            padding)


def _is_depthwise(groups: int, ic: int, ic_per_group: int) -> bool:
    return groups > 1 and groups == ic and ic_per_group == 1


def _is_winograd(cpu: CpuInfo, call: relax.Call, x_shape, w_shape, nchw_input: bool) -> bool:
    groups, strides, dilation, padding = _geometry(call.attrs)
    return (not cpu.small_memory and not _is_depthwise(groups, x_shape[1], w_shape[1]) and not nchw_input
            and winograd.applies(x_shape, w_shape, strides, padding, dilation, groups))


def _emit(rw: Rewriter, call: relax.Call, x_shape, w_shape, out_shape, nchw_input: bool,
          fold: batchnorm_fold.Fold | None) -> relax.Expr:
    """Emit the NHWC kernel of ``call`` (and its weight packing); returns its result."""
    x, w = call.args
    oc, ic_per_group, _, _ = w_shape
    ow = out_shape[3]
    groups, strides, dilation, padding = _geometry(call.attrs)
    bb = rw.bb
    # a tensor without an NHWC form yet (the network's input): the convolution transposes it itself
    data = rw.nchw(x) if nchw_input else rw.nhwc(x)
    weight = rw.nchw(w)
    key, extra = (w,), {}
    if fold is not None:
        weight = batchnorm_fold.scaled_weight(rw, weight, fold, oc)
        key, extra = (w, fold.scale), {"bias": batchnorm_fold.shift_vector(rw, fold, oc)}
    if _is_depthwise(groups, x_shape[1], ic_per_group):
        plan = plan_depthwise(rw.cpu, oc, ow, "float32", taps=w_shape[2] * w_shape[3])
        packed = rw.emit_once(("depthwise", *key), lambda: bb.call_te(pack_depthwise_weight, weight,
                                                                     primfunc_name_hint="aotnn_pack_dw_weight"))
        out = bb.call_te(depthwise_nhwc, data, packed, strides=strides, padding=padding, dilation=dilation,
                         c_block=plan.oc_block, ow_block=plan.ow_block, ow_padded=plan.ow_padded, **extra,
                         primfunc_name_hint="aotnn_dwconv2d")
        if fold is not None:
            batchnorm_fold.start_at_bias(bb, out, DEPTHWISE)
    elif _is_winograd(rw.cpu, call, x_shape, w_shape, nchw_input):
        out = _winograd(rw, data, weight, w, oc, x_shape[2], x_shape[3])
    else:
        flat = None if nchw_input else use_flat(rw.cpu, oc, oc // groups, out_shape[2], ow)
        plan = flat or plan_conv2d(rw.cpu, oc, oc // groups, ow, "float32")
        packed = rw.emit_once(("conv2d", *key, plan.oc_block, plan.oc_padded), lambda: bb.call_te(
            pack_weight, weight, plan.oc_block, plan.oc_padded, primfunc_name_hint="aotnn_pack_conv_weight"))
        out = bb.call_te(conv2d_nhwc, data, packed, strides=strides, padding=padding, dilation=dilation,
                         groups=groups, out_channels=oc, ow_block=plan.ow_block, ow_padded=plan.ow_padded,
                         nchw_input=nchw_input, flat=flat is not None, **extra, primfunc_name_hint="aotnn_conv2d")
        if fold is not None:
            batchnorm_fold.start_at_bias(bb, out, CONV)
    return bb.emit(out)


def _winograd(rw: Rewriter, data: relax.Expr, weight: relax.Expr, key: relax.Expr, oc: int,
              height: int, width: int) -> relax.Expr:
    """A 3x3 stride-1 convolution as Winograd F(2x2, 3x3): transforms around 16 grouped products."""
    bb = rw.bb
    tiles_h, tiles_w = (height + 1) // 2, (width + 1) // 2
    flat = use_flat(rw.cpu, winograd.TILES * oc, oc, tiles_h, tiles_w)
    plan = flat or plan_conv2d(rw.cpu, winograd.TILES * oc, oc, tiles_w, "float32")
    packed = rw.emit_once(("winograd", key, plan.oc_block), lambda: bb.call_te(
        winograd.pack_weight, weight, plan.oc_block, primfunc_name_hint="aotnn_pack_wino_weight"))
    tiles = bb.emit(_fuse_like_conv(bb, bb.call_te(winograd.input_transform, data,
                                                   primfunc_name_hint="aotnn_wino_input")))
    products = bb.emit(bb.call_te(conv2d_nhwc, tiles, packed, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                                  groups=winograd.TILES, out_channels=winograd.TILES * oc, ow_block=plan.ow_block,
                                  ow_padded=plan.ow_padded, flat=flat is not None, primfunc_name_hint="aotnn_conv2d"))
    return _fuse_like_conv(bb, bb.call_te(winograd.output_transform, products, oc, height, width,
                                          primfunc_name_hint="aotnn_wino_output"))


def _fuse_like_conv(bb: relax.BlockBuilder, call: relax.Call) -> relax.Call:
    """Mark ``call``'s kernel as fusable like a convolution: with its element-wise epilogue only.

    A transform is injective, and FuseOps would pull the injective producers of its epilogue
    into its kernel too: batch-norm statistics that read parameters only, which then run once
    per element and per call instead of once per parameter change.
    """
    gvar = call.args[0]
    bb.update_func(gvar, bb.get()[gvar].with_attr("op_pattern", OUT_ELEMWISE_FUSABLE))
    return call


# ---------------------------------------------------------------- schedules

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, CONV) is not None or common.find_block(sch, DEPTHWISE) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule | None:
    """Schedule a fused kernel holding one convolution compute and its element-wise epilogue.

    Returns a new schedule where the kernel gained weight prefetches (see ``weight_prefetch``),
    else None (``sch`` holds the result)."""
    depthwise = common.find_block(sch, DEPTHWISE) is not None
    conv = common.find_block(sch, DEPTHWISE if depthwise else CONV)
    out = common.find_block(sch, DW_OUT if depthwise else OUT)
    pad = common.find_block(sch, PAD)
    clamped = common.find_block(sch, CLAMP) is not None
    if out is None:
        raise common.NotScheduled("convolution without its output stage")
    unflat = common.find_block(sch, UNFLAT) is not None
    common.inline_producers(sch, pad if pad is not None else conv)  # a CLAMP input goes inline too
    broadcast = broadcast_epilogue.broadcast_consumers(sch, out)
    if broadcast:  # squeeze-and-excitation: the gate once per channel, not per element
        broadcast_epilogue.fold_gate(sch, out, broadcast)
    common.inline_consumers(sch, out)

    stmt = sch.get(conv)
    work = common.block_work(sch, conv)
    acc_buffer = stmt.writes[0].source
    dtype = str(acc_buffer.dtype)
    n, h = int(acc_buffer.shape[0]), int(acc_buffer.shape[1])
    ow_block = tile(stmt, "ow")
    oc_block = tile(stmt, "oc")
    weight = [r.source for r in stmt.reads if len(r.source.shape) == (3 if depthwise else 5)]
    weight_bytes = _bytes(weight[0]) if weight else 0

    staged = lane_fma.stage_input(sch, conv, cpu.lanes(dtype)) if cpu.fma_by_lane and not depthwise else None
    loops = sch.get_loops(conv)
    (b, i, j, o), reduction = loops[:4], loops[4:]
    o_outer, o_inner = sch.split(o, [None, oc_block])
    j_outer, j_inner = sch.split(j, [None, ow_block])
    # Three ways to cut the work into tasks:
    # - no padded copy to make (depthwise pads in place; 1x1 convolutions over whole tiles need
    #   none): (row, channel block) pairs, small tasks that balance well over the cores;
    # (a 1x1 convolution whose last tile is partial reads its last pixel again instead of copying
    # the input, and is cut as below: measured faster on MobileNetV2's 28- and 112-wide maps)
    # - many rows and weights that fit in L2 (each row re-reads them): one row per task, its padded
    #   input strip built inside the task;
    # - otherwise (deep layers: few rows, big weights): (channel block, row) pairs, so that a thread
    #   keeps one weight block hot, over an input padded once.
    strip_free = (pad is None and not clamped) or depthwise
    by_rows = not strip_free and (n * h >= 8 * cpu.cores and weight_bytes <= cpu.row_task_weight_bytes
                                  or n * h >= 32 * cpu.cores)
    if strip_free:
        sch.reorder(b, i, o_outer, j_outer, *reduction, j_inner, o_inner)
        task = sch.fuse(b, i, o_outer)
    elif by_rows:
        sch.reorder(b, i, o_outer, j_outer, *reduction, j_inner, o_inner)
        task = sch.fuse(b, i)
    else:
        sch.reorder(b, o_outer, i, j_outer, *reduction, j_inner, o_inner)
        task = sch.fuse(b, o_outer, i)
    common.accumulate_in_registers(sch, conv)
    sch.reverse_compute_at(out, j_outer, preserve_unit_loops=True)
    if pad is not None and depthwise:
        # a vector load per tap: checking the border in place is cheaper than copying the rows
        # (a regular convolution broadcasts one value per FMA group and prefers the padded copy)
        sch.compute_inline(pad)
    elif pad is not None:
        if by_rows:
            sch.compute_at(pad, task, preserve_unit_loops=True)
            common.vectorize_inner(sch, pad, sch.get_loops(pad)[-1], cpu.lanes(dtype) * 4)
        else:
            common.schedule_injective_block(sch, pad, cpu)
    if depthwise:  # all taps unrolled: their weights are loop-invariant registers across the row
        for loop in reduction:
            if (common.extent(sch, loop) or 99) <= 7:
                sch.unroll(loop)
    if staged is not None:
        lane_fma.broadcast_from_lanes(sch, staged, reduction[-1], cpu.lanes(dtype))
    sch.unroll(j_inner)
    vectorize_channels(sch, o_inner, oc_block, cpu.lanes(dtype))
    common.vectorize_registers(sch, out, sch.get_loops(out)[-1], cpu.lanes(dtype))
    common.parallel_if_worth(sch, task, work, cpu)
    # last: vectorize/parallel need the reduction block whole
    sch.decompose_reduction(conv, reduction[0])
    if unflat:  # pixels back to rows, with the epilogue: a pass of its own
        for block in common.output_blocks(sch):
            if common.block_name(sch, block) != OUT:
                common.schedule_injective_block(sch, block, cpu)
    broadcast_epilogue.schedule_broadcast(sch, broadcast, cpu)
    if unflat and strip_free and not depthwise and weight and common.extent(sch, task) == int(weight[0].shape[0]):
        # one task per weight block (a deep layer over a small map): prefetch the next block
        func = weight_prefetch.prefetch_next_block(sch.mod["main"], weight[0], sch.get(task).loop_var,
                                                   sch.get(j_outer).loop_var, common.extent(sch, j_outer))
        return Schedule(func)
    return None


def vectorize_channels(sch: Schedule, loop, oc_block: int, lanes: int) -> None:
    """Vectorize a tile's channel loop; a 3-vector block (see :func:`plan_conv2d`) as three
    unrolled vectors: LLVM handles a 24-lane vector poorly."""
    if oc_block == 3 * lanes:
        vectors, inner = sch.split(loop, [3, lanes])
        sch.unroll(vectors)
        sch.vectorize(inner)
    else:
        sch.vectorize(loop)


def tile(stmt, which: str) -> int:
    value = stmt.annotations.get("aotnn_tile_" + which) if stmt.annotations else None
    if value is None:
        raise common.NotScheduled(f"{stmt.name_hint}: no tile annotation {which!r}")
    return int(value)


def _bytes(buffer) -> int:
    size = buffer.dtype.bits // 8
    for d in buffer.shape:
        size *= int(d)
    return size
