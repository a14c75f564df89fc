"""int8 convolutions on AArch64: NHWC int8 activations, int8 weights packed at build time, NEON dot products.

A convolution ``conv2d(uint8 or int8 x, int8 W)`` with an int32 result and parameter weights
(``relay_frontend/ops/int8.py``: the input padded with its zero point by an ``nn.pad`` just before) is
rewritten on AArch64 targets, before legalization, into

- ``aotnn_pack_int8_conv_weight`` (``int8_conv.pack_weight``): W as ``(OCp / 16, KH, KW, ICp / D, 16, D)``,
  zero past OC and IC, run once per parameter change;
- ``aotnn_int8_neon_conv2d_pad``: the NHWC input as int8, padded with the zero point and its channels
  rounded up to ``D``. NEON's products are signed x signed, so a uint8 input is shifted onto int8
  (``x - 128``); the sums then lack ``128 * sum(W)``, which the output stage adds back;
- ``aotnn_int8_neon_conv2d``: ``acc[n, i, j, o] = sum int32(x[n, i*s + kh, j*s + kw, c]) *
  int32(Wp[o // 16, kh, kw, c // D, o % 16, c % D])`` over tiles of ``ow_block`` pixels x 16 channels in
  registers, whose inner ``(16, D)`` step is, per pixel, one broadcast of ``D`` input bytes and

  - with Armv8.2's dot product (``+dotprod``): four ``sdot`` (D = 4: each int32 lane adds the dot
    product of 4 byte pairs), 64 multiply-accumulates in 5 instructions;
  - on plain NEON: four ``smull`` (8 int16 products of int8 pairs, exact) and four ``saddlp`` + add
    (LLVM's ``sadalp``: adjacent products summed into the int32 lanes), D = 2.

  Both are exact for any operands: no saturating step.
- ``aotnn_int8_neon_conv2d_out``: the first OC channels and OW columns (plus the shift's correction),
  where the requantization epilogue of the graph (bias, float32 multiplier, round half to even, zero
  point, clamp) is inlined: the same expression as on x86, so the results are the x86 artifact's.

Grouped and depthwise convolutions keep the generic int8 schedule (``int8.py``).
"""
from __future__ import annotations

from tvm import relax, te, tirx
from tvm.s_tir import Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common, conv2d, int8_conv
from .cpu import CpuInfo
from .int8_conv import DotStep, _unpadded, ow_block_for, pack_weight, weight_sums
from .int8_dot import dot_desc
from .layout import Rewriter, dtype_of, static_shape

ACC = "aotnn_int8_neon_conv2d"
PAD = "aotnn_int8_neon_conv2d_pad"
OUT = "aotnn_int8_neon_conv2d_out"
LANES = 16  # output channels per step: four 4-lane int32 accumulators
SDOT = DotStep(LANES, 4, "int8", "aotnn_conv_dot_16x4_i8i8i32_sdot")
SMULL = DotStep(LANES, 2, "int8", "aotnn_conv_dot_16x2_i8i8i32_smull")
SHIFT = 128  # uint8 -> int8


@T.prim_func(s_tir=True)
def _sdot_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (4,), "int8", offset_factor=1, align=1)
    B = T.match_buffer(b, (16, 4), "int8", offset_factor=1, align=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1, align=1)
    with T.sblock("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        group = T.reinterpret(T.broadcast(T.reinterpret(A.vload([0], "int8x4"), dtype="int32"), 4), dtype="int8x16")
        C[T.ramp(T.int32(0), 1, 4)] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.sdot"),
            C.vload([0], dtype="int32x4"), B.vload([0, 0], dtype="int8x16"), group, dtype="int32x4")
        C[T.ramp(T.int32(4), 1, 4)] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.sdot"),
            C.vload([4], dtype="int32x4"), B.vload([4, 0], dtype="int8x16"), group, dtype="int32x4")
        C[T.ramp(T.int32(8), 1, 4)] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.sdot"),
            C.vload([8], dtype="int32x4"), B.vload([8, 0], dtype="int8x16"), group, dtype="int32x4")
        C[T.ramp(T.int32(12), 1, 4)] = T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.sdot"),
            C.vload([12], dtype="int32x4"), B.vload([12, 0], dtype="int8x16"), group, dtype="int32x4")


@T.prim_func(s_tir=True)
def _smull_impl(a: T.handle, b: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (2,), "int8", offset_factor=1, align=1)
    B = T.match_buffer(b, (16, 2), "int8", offset_factor=1, align=1)
    C = T.match_buffer(c, (16,), "int32", offset_factor=1, align=1)
    with T.sblock("root"):
        T.reads(C[0:16], A[0:2], B[0:16, 0:2])
        T.writes(C[0:16])
        pair = T.reinterpret(T.broadcast(T.reinterpret(A.vload([0], "int8x2"), dtype="int16"), 4), dtype="int8x8")
        C[T.ramp(T.int32(0), 1, 4)] = C.vload([0], dtype="int32x4") + T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.saddlp"), T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.smull"), pair, B.vload([0, 0], dtype="int8x8"),
                dtype="int16x8"), dtype="int32x4")
        C[T.ramp(T.int32(4), 1, 4)] = C.vload([4], dtype="int32x4") + T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.saddlp"), T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.smull"), pair, B.vload([4, 0], dtype="int8x8"),
                dtype="int16x8"), dtype="int32x4")
        C[T.ramp(T.int32(8), 1, 4)] = C.vload([8], dtype="int32x4") + T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.saddlp"), T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.smull"), pair, B.vload([8, 0], dtype="int8x8"),
                dtype="int16x8"), dtype="int32x4")
        C[T.ramp(T.int32(12), 1, 4)] = C.vload([12], dtype="int32x4") + T.call_llvm_pure_intrin(
            T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.saddlp"), T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id("llvm.aarch64.neon.smull"), pair, B.vload([12, 0], dtype="int8x8"),
                dtype="int16x8"), dtype="int32x4")


TensorIntrin.register(SDOT.intrin, dot_desc("int8", "int8", LANES, SDOT.depth), _sdot_impl, override=True)
TensorIntrin.register(SMULL.intrin, dot_desc("int8", "int8", LANES, SMULL.depth), _smull_impl, override=True)


def dot_step(cpu: CpuInfo) -> DotStep | None:
    """The dot-product step on ``cpu``: ``sdot`` with the dot-product extension, else ``smull``; None off AArch64."""
    if not cpu.aarch64:
        return None
    return SDOT if cpu.dotprod else SMULL


# ---------------------------------------------------------------- TE computes (emitted with call_te)

def _signed_padded(x: te.Tensor, padding, pad_value: int, rows: int, cols: int, channels: int,
                   nchw: bool) -> te.Tensor:
    """NHWC ``x`` padded by (top, left) with ``pad_value``, cut or extended to rows x cols x channels, as
    int8: a uint8 ``x`` (and the fill) shifted by -128. An NCHW ``x`` (``nchw``) is transposed on the way."""
    n, h, w, c = conv2d._nhwc_shape(x, nchw)
    top, left = padding[0], padding[1]
    shift = SHIFT if x.dtype == "uint8" else 0
    if top == 0 and left == 0 and rows <= h and cols <= w and channels == c and not shift and not nchw:
        return x
    fill = tirx.const(pad_value - shift, "int8")

    def element(b, i, j, ch):
        inside = tirx.all(i >= top, i < h + top, j >= left, j < w + left)
        row, col = tirx.max(tirx.min(i - top, h - 1), 0), tirx.max(tirx.min(j - left, w - 1), 0)
        channel = tirx.min(ch, c - 1)
        value = x[b, channel, row, col] if nchw else x[b, row, col, channel]
        if shift:
            value = (value.astype("int16") - tirx.const(shift, "int16")).astype("int8")
        return tirx.if_then_else(inside, value, fill)

    return te.compute((n, rows, cols, channels), element, name=PAD)


def conv2d_neon(x: te.Tensor, wp: te.Tensor, wsum: te.Tensor | None = None, *, strides, padding, dilation,
                pad_value: int, out_channels: int, ow_block: int, nchw_input: bool = False) -> te.Tensor:
    """int32 NHWC convolution of an int8 or uint8 ``x`` (NHWC, or NCHW with ``nchw_input``) with weights packed
    by ``int8_conv.pack_weight``; ``padding`` (top, left, bottom, right) holds ``pad_value``, the input's zero
    point. A uint8 ``x`` comes with ``wsum`` (``int8_conv.weight_sums``): it is multiplied as ``x - 128``
    and ``128 * wsum`` is added to the sums."""
    n = int(x.shape[0])
    _, _, _, groups_of_depth, _, depth = (int(d) for d in wp.shape)
    oh, ow, ow_padded, rows, cols = int8_conv.tiled_geometry(x, wp, strides=strides, padding=padding,
                                                             dilation=dilation, ow_block=ow_block, nchw_input=nchw_input)
    data = _signed_padded(x, padding, pad_value, rows, cols, groups_of_depth * depth, nchw_input)
    # its own block name: int8_conv's rule (tried first) would otherwise take it and tensorize x86 steps
    acc = int8_conv.packed_sums(data, wp, out_rows=oh, out_cols=ow_padded, strides=strides, dilation=dilation,
                                ow_block=ow_block, name=ACC)
    if wsum is None:
        return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o], name=OUT)
    return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o] + wsum[o] * SHIFT, name=OUT)


# ---------------------------------------------------------------- the Relax rewrite

def _applies(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    if call.op.name != "relax.nn.conv2d" or dot_step(rw.cpu) is None:
        return False
    attrs = call.attrs
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout) != ("NCHW", "OIHW", "NCHW") or int(attrs.groups) != 1:
        return False
    x, w = call.args
    if static_shape(x) is None or static_shape(w) is None or static_shape(var) is None:
        return False
    return (dtype_of(x) in ("uint8", "int8") and dtype_of(w) == "int8" and dtype_of(var) == "int32"
            and rw.param_only(w))


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``conv2d(uint8/int8 x, int8 W)`` -> int32 with W computed from parameters, groups 1, on AArch64 ->
    the packed NHWC kernels above."""
    if not _applies(rw, var, call):
        return False
    x, w = call.args
    _, strides, dilation, conv_padding = conv2d._geometry(call.attrs)
    source, padding, pad_value = _unpadded(rw, x)
    padding = tuple(a + b for a, b in zip(padding, conv_padding))
    step = dot_step(rw.cpu)
    bb = rw.bb
    ow_block = ow_block_for(static_shape(var)[3], LANES // rw.cpu.lanes("int32"), rw.cpu.vector_registers)
    packed = rw.emit_once(("int8_conv2d", w, step), lambda: bb.call_te(
        pack_weight, rw.nchw(w), step.lanes, step.depth, step.weight_dtype, primfunc_name_hint="aotnn_pack_int8_conv_weight"))
    sums = []
    if dtype_of(x) == "uint8":  # multiplied as x - 128: the sums lack 128 * sum(w)
        sums = [rw.emit_once(("int8_weight_sums", w), lambda: bb.call_te(
            weight_sums, rw.nchw(w), primfunc_name_hint="aotnn_int8_weight_sums"))]
    nchw_input = not rw.has_twin(source)
    data = rw.nchw(source) if nchw_input else rw.nhwc(source)
    out = bb.call_te(conv2d_neon, data, packed, *sums, strides=strides, padding=padding, dilation=dilation,
                     pad_value=pad_value, out_channels=static_shape(w)[0], ow_block=ow_block,
                     nchw_input=nchw_input, primfunc_name_hint=ACC)
    rw.set_nhwc(var, bb.emit(out))
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, ACC) is not None


def _step_of(sch: Schedule, acc) -> DotStep:
    weight = next(r.source for r in sch.get(acc).reads if len(r.source.shape) == 6)
    return SDOT if int(weight.shape[-1]) == SDOT.depth else SMULL


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """Output tiles of ``ow_block`` pixels x 16 channels accumulated in registers over (kh, kw, channel
    groups), one dot-product step per pixel and channel group; tasks are output rows (with their channel
    blocks when rows are few): ``int8_conv``'s tiling with this rule's blocks and steps."""
    acc = common.find_block(sch, ACC)
    int8_conv.schedule_tiles(sch, cpu, acc, common.find_block(sch, OUT), common.find_block(sch, PAD),
                             _step_of(sch, acc))
