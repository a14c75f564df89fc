"""int8 convolutions on Cortex-M with the DSP extension: dual 16-bit multiply-accumulates (``smlad``).

The M4/M7/M55 DSP extension has no 8-bit dot product, but ``smlad`` adds the two products of the 16-bit
halves of two registers to an accumulator, and ``sxtb16``/``uxtb16`` widen bytes 0 and 2 of a register
(or, rotated by 8, bytes 1 and 3) into such halves (the CMSIS-NN approach). So one 32-bit load of four
channels of an NHWC pixel and one of four weights give four products in two ``smlad``:

    a = load32(x[pixel, c:c+4]);  w = load32(W[o, c:c+4])
    acc += smlad(uxtb16(a), sxtb16(w)) + smlad(uxtb16(ror(a, 8)), sxtb16(ror(w, 8)))

exact for any operands (uint8 or int8 activations, int8 weights: a 16x16-bit product fits, int32 sums
wrap as plain adds do). A convolution ``conv2d(x, int8 W)`` with an int32 result and W from parameters is
rewritten (Relax, before legalization):

- input channels a multiple of 4: ``int8_conv``'s NHWC kernels with weights packed at build time as
  ``(OC / LANES, KH, KW, IC / 4, LANES, 4)`` int8 (as much flash as the original weights);
- fewer channels (DS-CNN's first layer has one), an unpadded convolution (the zero-point padding is the
  ``nn.pad`` before it) with kernel rows of a multiple of 4 taps: the step's 4 products are 4 adjacent
  taps of a kernel row, 4 adjacent bytes of an NCHW input row (:func:`conv2d_by_columns`);
- depthwise: ``int8_conv``'s NHWC depthwise compute (scheduled by ``conv2d``), so that no layer between
  two NHWC ones pays a transposition.

The schedule keeps ``LANES`` output channels of one pixel in registers over the reduction, one tensorized
step per channel group, and runs the requantization epilogue per tile (no int32 map in RAM); a global
average pooling merged into the layer (``merge_into_pool``) is summed tile by tile too. On FPUs without
vectors the epilogue rounds with ``vcvtr`` (``mcu_requantize``).

Only targets with ``small_memory`` (Cortex-M) and the ``dsp`` feature are rewritten.
"""
from __future__ import annotations

import math

import tvm
from tvm import relax, te, tirx
from tvm.s_tir import SBlockRealize, Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common, conv2d, int8_conv, mcu_requantize
from .cpu import CpuInfo, _has
from .int8_dot import dot_desc
from .layout import Rewriter, dtype_of, static_shape
from .tir_rewrite import replace_first, with_block

LANES, DEPTH = 4, 4  # output channels per step, input channels per step (one 32-bit load)
MAX_UNROLLED_STEPS = 16  # steps of a tile unrolled: code size (flash) against loop overhead
PIXELS = 1  # output pixels per register tile: DS-CNN's rows have 5, a tile of 2 would pad them to 6
INTRINS = {"uint8": "aotnn_dot_4x4_u8i8i32_smlad", "int8": "aotnn_dot_4x4_i8i8i32_smlad"}
_WIDEN = {"uint8": "llvm.arm.uxtb16", "int8": "llvm.arm.sxtb16"}


def _rotated(word):
    """``word`` rotated right by 8 bits (the ``ror #8`` operand form of ``sxtb16``/``uxtb16``)."""
    bits = T.reinterpret(word, dtype="uint32")
    return T.reinterpret(T.bitwise_or(T.shift_right(bits, T.uint32(8)), T.shift_left(bits, T.uint32(24))),
                         dtype="int32")


def _impl(act_dtype: str):
    widen = _WIDEN[act_dtype]

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (DEPTH,), act_dtype, offset_factor=1, align=1)
        B = T.match_buffer(b, (LANES, DEPTH), "int8", offset_factor=1, align=1)
        C = T.match_buffer(c, (LANES,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:LANES], A[0:DEPTH], B[0:LANES, 0:DEPTH])
            T.writes(C[0:LANES])
            word = T.reinterpret(A.vload([0], act_dtype + "x4"), dtype="int32")
            even = T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id(widen), word, dtype="int32")
            odd = T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id(widen), _rotated(word), dtype="int32")
            for i in T.unroll(LANES):
                weights = T.reinterpret(B.vload([i, 0], "int8x4"), dtype="int32")
                C[i] = T.call_llvm_pure_intrin(
                    T.llvm_lookup_intrinsic_id("llvm.arm.smlad"), odd,
                    T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id("llvm.arm.sxtb16"), _rotated(weights),
                                            dtype="int32"),
                    T.call_llvm_pure_intrin(
                        T.llvm_lookup_intrinsic_id("llvm.arm.smlad"), even,
                        T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id("llvm.arm.sxtb16"), weights,
                                                dtype="int32"),
                        C[i], dtype="int32"),
                    dtype="int32")
    return impl


for _dtype, _name in INTRINS.items():
    TensorIntrin.register(_name, dot_desc(_dtype, "int8", LANES, DEPTH), _impl(_dtype), override=True)


def has_dsp(cpu: CpuInfo) -> bool:
    """Whether the target in scope is a microcontroller with the DSP extension (``smlad``, ``sxtb16``)."""
    target = tvm.target.Target.current(allow_none=True)
    return cpu.small_memory and target is not None and _has("dsp", target)


# ---------------------------------------------------------------- a kernel row's taps as the step's depth

def pack_weight_by_columns(w: te.Tensor) -> te.Tensor:
    """OIHW int8 weights -> ``(OCp / LANES, IC, KH, KW / DEPTH, LANES, DEPTH)``, zero past OC."""
    oc, ic, kh, kw = (int(d) for d in w.shape)
    oc_padded = -(-oc // LANES) * LANES
    zero = tirx.const(0, "int8")

    def element(o, c, h, kq, lane, kr):
        out_c = o * LANES + lane
        value = w[tirx.min(out_c, oc - 1), c, h, kq * DEPTH + kr]
        return value if oc_padded == oc else tirx.if_then_else(out_c < oc, value, zero)

    return te.compute((oc_padded // LANES, ic, kh, kw // DEPTH, LANES, DEPTH), element, name=int8_conv.PACK)


def conv2d_by_columns(x: te.Tensor, wp: te.Tensor, *, strides, dilation_h: int, out_channels: int) -> te.Tensor:
    """int32 NHWC convolution of an NCHW ``x`` (already padded) with weights packed by
    :func:`pack_weight_by_columns`: the step's 4 products are 4 adjacent taps of a kernel row, 4 adjacent
    bytes of an input row (DS-CNN's first layer: one input channel, a 10x4 kernel)."""
    n, c, h, w = (int(d) for d in x.shape)
    oc_blocks, _, kh, kw_groups, lanes, depth = (int(d) for d in wp.shape)
    sh, sw = strides
    oh = (h - (kh - 1) * dilation_h - 1) // sh + 1
    ow = (w - kw_groups * depth) // sw + 1
    rc, rkh = te.reduce_axis((0, c), "c"), te.reduce_axis((0, kh), "kh")
    rkq, rkr = te.reduce_axis((0, kw_groups), "kq"), te.reduce_axis((0, depth), "kr")
    acc = te.compute(
        (n, oh, ow, oc_blocks * lanes),
        lambda b, i, j, o: te.sum(
            x[b, rc, i * sh + rkh * dilation_h, j * sw + rkq * depth + rkr].astype("int32")
            * wp[o // lanes, rc, rkh, rkq, o % lanes, rkr].astype("int32"), axis=[rc, rkh, rkq, rkr]),
        name=int8_conv.ACC, attrs={"aotnn_tile_ow": PIXELS, "aotnn_tile_oc": lanes})
    return te.compute((n, oh, ow, out_channels), lambda b, i, j, o: acc[b, i, j, o], name=int8_conv.OUT)


def _rewrite_by_columns(rw: Rewriter, var: relax.Var, call: relax.Call, x: relax.Expr, w: relax.Expr) -> bool:
    """A convolution with too few input channels for the channel steps, an unpadded one (the zero point
    padding is the ``nn.pad`` before it) whose kernel rows are multiples of 4 taps and not dilated."""
    groups, strides, dilation, conv_padding = conv2d._geometry(call.attrs)
    oc, _, _, kw = static_shape(w)
    if groups != 1 or any(conv_padding) or kw % DEPTH != 0 or dilation[1] != 1:
        return False
    bb = rw.bb
    packed = rw.emit_once(("int8_dsp_conv2d_columns", w), lambda: bb.call_te(
        pack_weight_by_columns, rw.nchw(w), primfunc_name_hint=int8_conv.PACK))
    out = bb.call_te(conv2d_by_columns, rw.nchw(x), packed, strides=strides, dilation_h=dilation[0],
                     out_channels=oc, primfunc_name_hint=int8_conv.ACC)
    rw.set_nhwc(var, bb.emit(out))
    return True


# ---------------------------------------------------------------- the Relax rewrite

def _applies(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    if call.op.name != "relax.nn.conv2d" or not has_dsp(rw.cpu):
        return False
    attrs = call.attrs
    if (attrs.data_layout, attrs.kernel_layout, attrs.out_layout) != ("NCHW", "OIHW", "NCHW"):
        return False
    x, w = call.args
    if static_shape(x) is None or static_shape(w) is None or static_shape(var) is None:
        return False
    return (dtype_of(w) == "int8" and dtype_of(x) in INTRINS and dtype_of(var) == "int32"
            and rw.param_only(w))


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``conv2d(uint8/int8 x, int8 W)`` -> int32, W from parameters, on a DSP Cortex-M: the packed NHWC
    kernel (input channels a multiple of 4) or the NHWC depthwise compute; anything else is left alone."""
    if not _applies(rw, var, call):
        return False
    x, w = call.args
    groups, strides, dilation, conv_padding = conv2d._geometry(call.attrs)
    source, padding, pad_value = int8_conv._unpadded(rw, x)
    padding = tuple(a + b for a, b in zip(padding, conv_padding))
    oc, ic_per_group, kh, kw = static_shape(w)
    out_shape = static_shape(var)
    channels = static_shape(x)[1]
    bb = rw.bb
    if conv2d._is_depthwise(groups, channels, ic_per_group) and oc == channels:
        plan = conv2d.plan_depthwise(rw.cpu, oc, out_shape[3], "int32", taps=kh * kw)
        packed = rw.emit_once(("int8_depthwise", w), lambda: bb.call_te(
            conv2d.pack_depthwise_weight, rw.nchw(w), primfunc_name_hint="aotnn_pack_dw_weight"))
        out = bb.call_te(int8_conv.depthwise_int8, rw.nhwc(source), packed, strides=strides, padding=padding,
                         dilation=dilation, pad_value=pad_value, c_block=plan.oc_block, ow_block=plan.ow_block,
                         ow_padded=plan.ow_padded, primfunc_name_hint="aotnn_int8_dwconv2d")
        rw.set_nhwc(var, bb.emit(out))
        return True
    if ic_per_group % DEPTH != 0:  # padded channels would multiply the work (DS-CNN's first layer has one)
        return _rewrite_by_columns(rw, var, call, x, w)
    if groups != 1:
        return False
    packed = rw.emit_once(("int8_dsp_conv2d", w), lambda: bb.call_te(
        int8_conv.pack_weight, rw.nchw(w), LANES, DEPTH, "int8", primfunc_name_hint=int8_conv.PACK))
    nchw_input = not rw.has_twin(source)
    data = rw.nchw(source) if nchw_input else rw.nhwc(source)
    out = bb.call_te(int8_conv.conv2d_int8, data, packed, strides=strides, padding=padding, dilation=dilation,
                     pad_value=pad_value, out_channels=oc, ow_block=PIXELS, nchw_input=nchw_input,
                     primfunc_name_hint=int8_conv.ACC)
    rw.set_nhwc(var, bb.emit(out))
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    """The packed convolution of :func:`rewrite_rule` (its weight tile is this rule's, not an x86 one)."""
    acc = common.find_block(sch, int8_conv.ACC)
    if acc is None:
        return False
    weight = next((r.source for r in sch.get(acc).reads if len(r.source.shape) == 6), None)
    return weight is not None and str(weight.dtype) == "int8" and [int(d) for d in weight.shape[-2:]] == [LANES, DEPTH]


def schedule(sch: Schedule, cpu: CpuInfo) -> Schedule:
    """Output tiles of ``PIXELS`` pixels x ``LANES`` channels accumulated in registers over (kh, kw, channel
    groups of 4), the requantization epilogue per tile (no int32 map in RAM)."""
    return schedule_steps(sch, cpu, INTRINS)


def schedule_steps(sch: Schedule, cpu: CpuInfo, intrins: dict[str, str]) -> Schedule:
    """:func:`schedule` with the step tensorized by ``intrins[activation dtype]`` (a ``LANES``-output step over
    the weight tile's innermost axis; ``int8_mve`` gives Helium's)."""
    acc = common.find_block(sch, int8_conv.ACC)
    out = common.find_block(sch, int8_conv.OUT)
    pad = common.find_block(sch, int8_conv.PAD)
    if out is None:
        raise common.NotScheduled("int8 convolution without its output stage")
    activation = str(next(r.source for r in sch.get(acc).reads if len(r.source.shape) == 4).dtype)
    if activation not in intrins:
        raise common.NotScheduled(f"activations of type {activation}")
    common.inline_consumers(sch, out)
    ow_block = conv2d.tile(sch.get(acc), "ow")
    b, i, j, o, *reduction = sch.get_loops(acc)
    o_outer, o_inner = sch.split(o, [None, LANES])
    j_outer, j_inner = sch.split(j, [None, ow_block])
    sch.reorder(b, i, o_outer, j_outer, *reduction[:-1], j_inner, o_inner, reduction[-1])
    common.accumulate_in_registers(sch, acc)
    sch.reverse_compute_at(out, j_outer, preserve_unit_loops=True)
    _pool_per_tile(sch, out, j_outer)
    if pad is not None:
        int8_conv._schedule_pad(sch, pad, cpu)
    sch.unroll(j_inner)
    _unroll_steps(sch, reduction[:-1])
    sch.decompose_reduction(acc, reduction[0])
    sch.tensorize(o_inner, intrins[activation])
    func = sch.mod["main"]
    if mcu_requantize.scalar_fpu(cpu):
        func = mcu_requantize.round_with_vcvtr(func)
    return Schedule(fence_pooled_products(func))  # after: the rounding is looked for through arithmetic


def _unroll_steps(sch: Schedule, loops) -> None:
    """Unroll the loops over a tile's steps (at most ``MAX_UNROLLED_STEPS`` in all; else the innermost one if it
    is that short): no loop counter, immediate load offsets (DS-CNN's 1x1 layers 0.91 M -> 0.85 M instructions,
    about 1 KB more code a kernel)."""
    extents = [common.extent(sch, loop) or MAX_UNROLLED_STEPS + 1 for loop in loops]
    if math.prod(extents) <= MAX_UNROLLED_STEPS:
        for loop in loops:
            sch.unroll(loop)
    elif extents and extents[-1] <= MAX_UNROLLED_STEPS:
        sch.unroll(loops[-1])


def _pool_per_tile(sch: Schedule, out, tile_loop) -> None:
    """A pooling merged after the layer (``merge_into_pool``) summed tile by tile: without it the whole
    int32 map is kept for the pooling (32 KB for DS-CNN). Each channel's sum still runs over rows, then
    columns, as the separate pooling kernel's does, so the float sums are the same bit for bit."""
    consumers = sch.get_consumers(out)
    if len(consumers) != 1 or not common.is_reduction(sch, consumers[0]):
        return
    pool = consumers[0]
    for producer in sch.get_producers(pool):  # a scalar scale copied into a buffer: read in place
        if not sch.get(producer).same_as(sch.get(out)):
            try:
                sch.compute_inline(producer)
            except Exception:  # noqa: BLE001 - tvm raises ScheduleError subclasses; it then stays a stage
                pass
    sch.compute_inline(out)
    sch.reverse_compute_at(pool, tile_loop, preserve_unit_loops=True)


def _fenced_sum(node):
    """A pooling block's ``sum + x * scale`` with the product fenced (``llvm.arithmetic.fence``): LLVM would
    contract it into one fused multiply-add, which rounds once where the separate kernels (a dequantized
    map, then the pooling) round twice."""
    if not isinstance(node, SBlockRealize) or not isinstance(node.block.body, tirx.BufferStore):
        return None
    store = node.block.body
    value = store.value
    if not (isinstance(value, tirx.Add) and isinstance(value.b, tirx.Mul) and str(value.ty) == "float32"):
        return None
    if not (isinstance(value.a, tvm.ir.expr.TensorLoad) and value.a.source.same_as(store.buffer)):
        return None
    fenced = tirx.call_llvm_pure_intrin("float32", "llvm.arithmetic.fence", value.b)
    body = tirx.BufferStore(store.buffer, tirx.Add(value.a, fenced), store.indices)
    return SBlockRealize(node.iter_values, node.predicate, with_block(node.block, body=body))


def fence_pooled_products(func: tirx.PrimFunc) -> tirx.PrimFunc:
    """``func`` with the products its accumulating blocks add fenced off (:func:`_fenced_sum`)."""
    body = func.body
    while (changed := replace_first(body, _fenced_sum)) is not None:
        body = changed
    return func if body.same_as(func.body) else func.with_body(body)
