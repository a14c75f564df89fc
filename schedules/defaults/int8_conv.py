"""int8 convolutions on x86: NHWC uint8 activations, int8 weights packed at build time, int32 dot products.

A convolution ``conv2d(uint8 x, int8 W)`` with an int32 result (``relay_frontend/ops/int8.py``: the
input already padded with its zero point by an ``nn.pad`` just before) is rewritten, before
legalization, into

- ``aotnn_pack_int8_conv_weight``: W as ``(OCp / L, KH, KW, ICp / D, L, D)``, zero past OC and IC,
  which reads the parameter only (the build runs it once per parameter change);
- ``aotnn_int8_conv2d_pad``: the NHWC input, padded with the zero point (the ``nn.pad`` is absorbed)
  and its channels rounded up to ``D`` (their weights are zero);
- ``aotnn_int8_conv2d``: ``acc[n, i, j, o] = sum int32(x[n, i*s + kh, j*s + kw, c]) *
  int32(Wp[o // L, kh, kw, c // D, o % L, c % D])`` over output tiles of ``ow_block`` pixels x ``L``
  channels held in registers, whose inner ``(L, D)`` step is one instruction:

  - AVX-512 VNNI: ``vpdpbusd`` (L = 16 int32 lanes, D = 4 byte pairs each; int8 weights);
  - AVX-VNNI (AVX2 CPUs with the VEX ``vpdpbusd``: Alder Lake and later): L = 8, D = 4, int8 weights;
  - AVX2: ``vpmaddwd`` on 16-bit operands (L = 8, D = 2; the weights are packed as int16 and the padded
    copy of the input is int16, so a step is a 32-bit broadcast and one ``vpmaddwd``): exact for any
    operands. ``vpmaddubsw`` would multiply the bytes directly but saturates its int16 pair sums
    (2 x 255 x 127 > 32767), so it is not used.

- ``aotnn_int8_conv2d_out``: the first OC channels and OW columns, where the requantization
  epilogue (bias, float32 multiplier, round half to even, zero point, clamp) is inlined.

Depthwise int8 convolutions become the float depthwise kernel's NHWC compute on widened operands
(``conv2d.DEPTHWISE``, int32 lanes over channels), padded with the zero point, scheduled by
``conv2d.schedule``: measured 4-10x faster than a kernel multiplying pairs of taps with ``vpmaddwd``
(its int16 pair copy of the input costs more than the multiplies it saves). The results are NHWC twins (``layout.py``): the requantization and pooling
that follow stay channels-last, and the next convolution reads them without a transpose.
"""
from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax, te, tirx
from tvm.s_tir import Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common, conv2d, int8_vnni
from .cpu import CpuInfo
from .int8_dot import dot_desc
from .layout import Rewriter, dtype_of, static_shape

ACC = "aotnn_int8_conv2d"
PAD = "aotnn_int8_conv2d_pad"
OUT = "aotnn_int8_conv2d_out"
PACK = "aotnn_pack_int8_conv_weight"
MAX_TILE_PIXELS = 8


@dataclass(frozen=True)
class DotStep:
    """One dot-product instruction: ``lanes`` int32 sums of ``depth`` products of a broadcast activation
    group with a ``(lanes, depth)`` weight tile of type ``weight_dtype``."""

    lanes: int
    depth: int
    weight_dtype: str
    intrin: str


VNNI = DotStep(int8_vnni.LANES, int8_vnni.DEPTH, "int8", int8_vnni.INTRIN)  # the dense kernel's intrinsic
AVX2 = DotStep(8, 2, "int16", "aotnn_conv_dot_8x2_u8i16i32_avx2")
AVX_VNNI = DotStep(8, 4, "int8", "aotnn_conv_dot_8x4_u8i8i32_avxvnni")


_avx2_desc = dot_desc("int16", AVX2.weight_dtype, AVX2.lanes, AVX2.depth)


@T.prim_func(s_tir=True)
def _avx2_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (2,), "int16", offset_factor=1, align=1)
    B = T.match_buffer(b, (8, 2), "int16", offset_factor=1, align=1)
    C = T.match_buffer(c, (8,), "int32", offset_factor=1, align=1)
    with T.sblock("root"):
        T.reads(C[0:8], A[0:2], B[0:8, 0:2])
        T.writes(C[0:8])
        pair = T.reinterpret(A.vload([0], "int16x2"), dtype="int32")
        C[T.ramp(T.int32(0), 1, 8)] = C.vload([0], dtype="int32x8") + T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.x86.avx2.pmadd.wd"),
            T.reinterpret(T.broadcast(pair, 8), dtype="int16x16"), B.vload([0, 0], dtype="int16x16"),
            dtype="int32x8")


# Requantization rounds half to even with ``nearbyint`` (what ``relax.round`` legalizes to). TVM marks
# ``tirx.round`` vectorizable (both become llvm.nearbyint) but not ``tirx.nearbyint``, so a vectorized
# epilogue fell back to one lane at a time; llvm.nearbyint is overloaded for vectors.
if tvm.ir.Op.get("tirx.nearbyint").get_attr("TVectorizable") is None:
    tvm.ir.register_op_attr("tirx.nearbyint", "TVectorizable", True)

TensorIntrin.register(AVX2.intrin, _avx2_desc, _avx2_impl, override=True)
TensorIntrin.register(AVX_VNNI.intrin, dot_desc("uint8", "int8", AVX_VNNI.lanes, AVX_VNNI.depth),
                      int8_vnni.vpdpbusd_impl(AVX_VNNI.lanes), override=True)


def dot_step(cpu: CpuInfo) -> DotStep | None:
    """The dot-product instruction the int8 convolution uses on ``cpu``, or None (no rewrite)."""
    if cpu.vnni:
        return VNNI
    if cpu.avx_vnni:
        return AVX_VNNI
    if cpu.avx2:
        return AVX2
    return None


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def ow_block_for(ow: int, oc_vectors: int, registers: int) -> int:
    """Output pixels per tile: accumulators (pixels x vectors) plus the weight vectors and a broadcast fit
    the register file; among those, the block that wastes least of the padded row."""
    limit = max(1, min(MAX_TILE_PIXELS, (registers - oc_vectors - 2) // oc_vectors))
    return min(range(1, limit + 1), key=lambda b: (_round_up(ow, b) - ow) / ow - 0.02 * b)


# ---------------------------------------------------------------- TE computes (emitted with call_te)

def pack_weight(w: te.Tensor, step_lanes: int, step_depth: int, weight_dtype: str) -> te.Tensor:
    """OIHW int8 weights -> ``(OCp / L, KH, KW, ICp / D, L, D)`` of ``weight_dtype``, zero past OC and IC."""
    oc, ic, kh, kw = (int(d) for d in w.shape)
    oc_padded, ic_padded = _round_up(oc, step_lanes), _round_up(ic, step_depth)
    zero = tirx.const(0, weight_dtype)

    def element(o, h, k, cq, lane, cr):
        out_c, in_c = o * step_lanes + lane, cq * step_depth + cr
        value = w[tirx.min(out_c, oc - 1), tirx.min(in_c, ic - 1), h, k].astype(weight_dtype)
        if oc_padded == oc and ic_padded == ic:
            return value
        return tirx.if_then_else(tirx.all(out_c < oc, in_c < ic), value, zero)

    return te.compute((oc_padded // step_lanes, kh, kw, ic_padded // step_depth, step_lanes, step_depth),
                      element, name=PACK)


def _padded(x: te.Tensor, padding, pad_value: int, rows: int, cols: int, channels: int, name: str,
            to_unsigned: bool = False, nchw: bool = False, widen: bool = False) -> te.Tensor:
    """NHWC ``x`` padded by (top, left) with ``pad_value``, cut or extended to rows x cols x channels;
    with ``to_unsigned`` an int8 ``x`` (and the fill) shifted by +128 onto uint8; with ``widen`` stored as
    int16 (AVX2's ``vpmaddwd`` multiplies 16-bit pairs: widened once here, not in every dot product).
    An NCHW ``x`` (``nchw``, a tensor without a channels-last form) is read as such: the padded copy is
    the transposition."""
    n, h, w, c = conv2d._nhwc_shape(x, nchw)
    top, left = padding[0], padding[1]
    if top == 0 and left == 0 and rows <= h and cols <= w and channels == c and not (to_unsigned or nchw or widen):
        return x
    dtype = "int16" if widen else "uint8" if to_unsigned else x.dtype
    fill = tirx.const(pad_value + (128 if to_unsigned else 0), dtype)

    def element(b, i, j, ch):
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        row, col = tirx.max(tirx.min(i - top, h - 1), 0), tirx.max(tirx.min(j - left, w - 1), 0)
        channel = tirx.min(ch, c - 1)
        value = x[b, channel, row, col] if nchw else x[b, row, col, channel]
        if to_unsigned:
            value = (value.astype("int16") + tirx.const(128, "int16")).astype("uint8")
        return tirx.if_then_else(inside, value.astype(dtype), fill)

    return te.compute((n, rows, cols, channels), element, name=name)


def weight_sums(w: te.Tensor) -> te.Tensor:
    """Per output channel, the sum of an OIHW int8 weight as int32 (the +128 shift's correction)."""
    _, ic, kh, kw = (int(d) for d in w.shape)
    rc, rh, rw_ = te.reduce_axis((0, ic), "c"), te.reduce_axis((0, kh), "h"), te.reduce_axis((0, kw), "w")
    return te.compute((int(w.shape[0]),), lambda o: te.sum(w[o, rc, rh, rw_].astype("int32"), axis=[rc, rh, rw_]),
                      name="aotnn_int8_weight_sums")


def packed_sums(data: te.Tensor, wp: te.Tensor, *, out_rows: int, out_cols: int, strides, dilation, ow_block: int,
                name: str) -> te.Tensor:
    """``acc[n, i, j, o] = sum int32(data[n, i*s + kh*d, j*s + kw*d, c]) * int32(Wp[o // L, kh, kw, c // D, o % L,
    c % D])`` over ``out_rows`` x ``out_cols`` pixels of the padded NHWC ``data`` and weights packed by
    :func:`pack_weight`: the accumulation block (named ``name``, the rule that schedules it looks it up by
    that name) of the x86 and the aarch64 int8 convolutions."""
    n = int(data.shape[0])
    oc_blocks, kh, kw, groups_of_depth, lanes, depth = (int(d) for d in wp.shape)
    sh, sw = strides
    dh, dw = dilation
    rkh = te.reduce_axis((0, kh), "kh")
    rkw = te.reduce_axis((0, kw), "kw")
    rcq = te.reduce_axis((0, groups_of_depth), "cq")
    rcr = te.reduce_axis((0, depth), "cr")
    return te.compute(
        (n, out_rows, out_cols, oc_blocks * lanes),
        lambda b, i, j, o: te.sum(
            data[b, i * sh + rkh * dh, j * sw + rkw * dw, rcq * depth + rcr].astype("int32")
            * wp[o // lanes, rkh, rkw, rcq, o % lanes, rcr].astype("int32"), axis=[rkh, rkw, rcq, rcr]),
        name=name, attrs={"aotnn_tile_ow": ow_block, "aotnn_tile_oc": lanes})


def tiled_geometry(x: te.Tensor, wp: te.Tensor, *, strides, padding, dilation, ow_block: int,
                   nchw_input: bool) -> tuple[int, int, int, int, int]:
    """(OH, OW, OW rounded up to ``ow_block``, padded input rows, padded input columns) of a convolution of
    ``x`` with weights packed by :func:`pack_weight`."""
    _, h, w, _ = conv2d._nhwc_shape(x, nchw_input)
    _, kh, kw, _, _, _ = (int(d) for d in wp.shape)
    sh, sw = strides
    dh, dw = dilation
    oh = conv2d._out_size(h, kh, sh, dh, padding[0], padding[2])
    ow = conv2d._out_size(w, kw, sw, dw, padding[1], padding[3])
    ow_padded = _round_up(ow, ow_block)
    return oh, ow, ow_padded, (oh - 1) * sh + (kh - 1) * dh + 1, (ow_padded - 1) * sw + (kw - 1) * dw + 1


def conv2d_int8(x: te.Tensor, wp: te.Tensor, wsum: te.Tensor | None = None, *, strides, padding, dilation,
                pad_value: int, out_channels: int, ow_block: int, nchw_input: bool = False) -> te.Tensor:
    """int32 NHWC convolution of a uint8 NHWC ``x`` with weights packed by :func:`pack_weight`;
    ``padding`` (top, left, bottom, right) holds ``pad_value`` (the input's zero point).

    An int8 ``x`` is given with ``wsum`` (:func:`weight_sums`): it is multiplied as ``x + 128`` (uint8), and
    ``128 * wsum`` is subtracted from the sums. An NCHW ``x`` (``nchw_input``) is read as such by the
    padded copy (a network's input: no transposition of its own)."""
    n = int(x.shape[0])
    _, _, _, groups_of_depth, _, depth = (int(d) for d in wp.shape)
    oh, ow, ow_padded, rows, cols = tiled_geometry(x, wp, strides=strides, padding=padding, dilation=dilation,
                                                   ow_block=ow_block, nchw_input=nchw_input)
    data = _padded(x, padding, pad_value, rows, cols, groups_of_depth * depth, PAD, to_unsigned=wsum is not None,
                   nchw=nchw_input, widen=str(wp.dtype) == "int16")
    acc = packed_sums(data, wp, out_rows=oh, out_cols=ow_padded, strides=strides, dilation=dilation,
                      ow_block=ow_block, name=ACC)
    if wsum is None:
        return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o], name=OUT)
    return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o] - wsum[o] * 128, name=OUT)


def depthwise_int8(x: te.Tensor, wd: te.Tensor, *, strides, padding, dilation, pad_value: int, c_block: int,
                   ow_block: int, ow_padded: int) -> te.Tensor:
    """int32 NHWC depthwise convolution (multiplier 1) of a uint8/int8 NHWC ``x`` with ``(KH, KW, C)`` int8
    weights (``conv2d.pack_depthwise_weight``); ``padding`` holds ``pad_value``. Blocks named as the float
    depthwise kernel's, which ``conv2d.schedule`` schedules."""
    n, h, width, c = (int(d) for d in x.shape)
    kh, kw, _ = (int(d) for d in wd.shape)
    sh, sw = strides
    dh, dw = dilation
    oh = conv2d._out_size(h, kh, sh, dh, padding[0], padding[2])
    ow = conv2d._out_size(width, kw, sw, dw, padding[1], padding[3])
    rows = (oh - 1) * sh + (kh - 1) * dh + 1
    cols = (ow_padded - 1) * sw + (kw - 1) * dw + 1
    data = _padded(x, padding, pad_value, rows, cols, c, conv2d.PAD)
    rkh = te.reduce_axis((0, kh), "kh")
    rkw = te.reduce_axis((0, kw), "kw")
    acc = te.compute(
        (n, oh, ow_padded, c),
        lambda b, i, j, ch: te.sum(data[b, i * sh + rkh * dh, j * sw + rkw * dw, ch].astype("int32")
                                   * wd[rkh, rkw, ch].astype("int32"), axis=[rkh, rkw]),
        name=conv2d.DEPTHWISE, attrs={"aotnn_tile_ow": ow_block, "aotnn_tile_oc": c_block})
    return te.compute((n, oh, ow, c), lambda b, i, j, ch: acc[b, i, j, ch], name=conv2d.DW_OUT)


# ---------------------------------------------------------------- the Relax rewrite

def _unpadded(rw: Rewriter, x: relax.Expr) -> tuple[relax.Expr, tuple[int, int, int, int], int]:
    """(the tensor before an ``nn.pad`` of H and W that produced ``x``, (top, left, bottom, right), pad value);
    ``x`` itself with no padding when it is not such a pad."""
    value = rw.bound.get(x) if isinstance(x, relax.Var) else None
    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == "relax.nn.pad":
        widths = [int(v) for v in value.attrs.pad_width]
        pad_value = float(value.attrs.pad_value)
        if str(value.attrs.pad_mode) == "constant" and len(widths) == 8 and not any(widths[:4]) \
                and pad_value == int(pad_value):
            return value.args[0], (widths[4], widths[6], widths[5], widths[7]), int(pad_value)
    return x, (0, 0, 0, 0), 0


def _applies(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    if call.op.name != "relax.nn.conv2d" or dot_step(rw.cpu) is None:
        return False
    attrs = call.attrs
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout) != ("NCHW", "OIHW", "NCHW"):
        return False
    x, w = call.args
    if static_shape(x) is None or static_shape(w) is None or static_shape(var) is None:
        return False
    return dtype_of(w) == "int8" and dtype_of(var) == "int32" and rw.param_only(w)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``conv2d(uint8 x, int8 W)`` -> int32 with W computed from parameters -> the packed NHWC kernels above;
    depthwise ones (uint8 or int8 inputs) -> the depthwise NHWC compute."""
    if not _applies(rw, var, call):
        return False
    x, w = call.args
    groups, strides, dilation, conv_padding = conv2d._geometry(call.attrs)
    source, padding, pad_value = _unpadded(rw, x)
    padding = tuple(a + b for a, b in zip(padding, conv_padding))
    w_shape, out_shape = static_shape(w), static_shape(var)
    oc, ic_per_group, kh, kw = w_shape
    channels = static_shape(x)[1]
    bb = rw.bb
    if conv2d._is_depthwise(groups, channels, ic_per_group) and oc == channels:
        plan = conv2d.plan_depthwise(rw.cpu, oc, out_shape[3], "int32", taps=kh * kw)
        packed = rw.emit_once(("int8_depthwise", w), lambda: bb.call_te(
            conv2d.pack_depthwise_weight, rw.nchw(w), primfunc_name_hint="aotnn_pack_dw_weight"))
        out = bb.call_te(depthwise_int8, rw.nhwc(source), packed, strides=strides, padding=padding,
                         dilation=dilation, pad_value=pad_value, c_block=plan.oc_block, ow_block=plan.ow_block,
                         ow_padded=plan.ow_padded, primfunc_name_hint="aotnn_int8_dwconv2d")
        rw.set_nhwc(var, bb.emit(out))
        return True
    if groups != 1:
        return False
    step = dot_step(rw.cpu)
    ow_block = ow_block_for(out_shape[3], 1, rw.cpu.vector_registers)
    packed = rw.emit_once(("int8_conv2d", w, step), lambda: bb.call_te(
        pack_weight, rw.nchw(w), step.lanes, step.depth, step.weight_dtype, primfunc_name_hint=PACK))
    sums = []
    if dtype_of(x) == "int8":  # multiplied as x + 128: the sums lose 128 * sum(w)
        sums = [rw.emit_once(("int8_weight_sums", w), lambda: bb.call_te(
            weight_sums, rw.nchw(w), primfunc_name_hint="aotnn_int8_weight_sums"))]
    nchw_input = not rw.has_twin(source)
    data = rw.nchw(source) if nchw_input else rw.nhwc(source)
    out = bb.call_te(conv2d_int8, data, packed, *sums, strides=strides, padding=padding, dilation=dilation,
                     pad_value=pad_value, out_channels=oc, ow_block=ow_block, nchw_input=nchw_input,
                     primfunc_name_hint=ACC)
    rw.set_nhwc(var, bb.emit(out))
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, ACC) is not None


def _step_of(sch: Schedule, acc) -> DotStep:
    weight = next(r.source for r in sch.get(acc).reads if len(r.source.shape) == 6)
    lanes, depth = (int(d) for d in weight.shape[4:])
    for step in (VNNI, AVX_VNNI, AVX2):
        if (step.lanes, step.depth, step.weight_dtype) == (lanes, depth, str(weight.dtype)):
            return step
    raise common.NotScheduled(f"int8 convolution with a ({lanes}, {depth}) {weight.dtype} weight tile: no x86 step")


def _schedule_pad(sch: Schedule, pad, cpu: CpuInfo) -> None:
    """The padded copy: rows spread over the cores, a pixel's channels as one vector (a vector across
    pixels would cross the border condition, which TVM then runs one byte at a time)."""
    b, i, j, ch = sch.get_loops(pad)
    channels = common.extent(sch, ch) or 1
    if channels >= 8:
        common.vectorize_inner(sch, pad, ch, cpu.lanes(str(sch.get(pad).writes[0].source.dtype)))
    else:
        sch.unroll(ch)
    rows = sch.fuse(b, i)
    total = channels * (common.extent(sch, rows) or 1) * (common.extent(sch, j) or 1)
    common.parallel_if_worth(sch, rows, total, cpu, common.PARALLEL_MIN_ELEMENTS)


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """Output tiles of ``ow_block`` pixels x one instruction's lanes, accumulated in registers over
    (kh, kw, channel groups); one instruction per pixel and channel group; tasks are output rows
    (with their channel blocks when rows are few)."""
    acc = common.find_block(sch, ACC)
    schedule_tiles(sch, cpu, acc, common.find_block(sch, OUT), common.find_block(sch, PAD), _step_of(sch, acc))


def schedule_tiles(sch: Schedule, cpu: CpuInfo, acc, out, pad, step: DotStep) -> None:
    """The tiling of :func:`schedule` for the accumulation block ``acc``, its output stage ``out``, the
    padded copy ``pad`` (or None) and the dot-product ``step`` tensorized per pixel and channel group
    (shared with the aarch64 int8 rule)."""
    if out is None:
        raise common.NotScheduled("int8 convolution without its output stage")
    common.inline_consumers(sch, out)
    stmt = sch.get(acc)
    work = common.block_work(sch, acc)
    ow_block = conv2d.tile(stmt, "ow")
    n, rows = (int(d) for d in stmt.writes[0].source.shape[:2])
    b, i, j, o, *reduction = sch.get_loops(acc)
    o_outer, o_inner = sch.split(o, [None, step.lanes])
    j_outer, j_inner = sch.split(j, [None, ow_block])
    cr = reduction[-1]
    if n * rows >= 4 * cpu.cores:
        sch.reorder(b, i, o_outer, j_outer, *reduction[:-1], j_inner, o_inner, cr)
        task = sch.fuse(b, i)
    else:
        sch.reorder(b, o_outer, i, j_outer, *reduction[:-1], j_inner, o_inner, cr)
        task = sch.fuse(b, o_outer, i)
    common.accumulate_in_registers(sch, acc)
    sch.reverse_compute_at(out, j_outer, preserve_unit_loops=True)
    if pad is not None:
        _schedule_pad(sch, pad, cpu)
    common.vectorize_registers(sch, out, sch.get_loops(out)[-1], cpu.lanes("int32"))
    sch.unroll(j_inner)
    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(acc, reduction[0])
    sch.tensorize(o_inner, step.intrin)
