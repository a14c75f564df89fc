"""int8 depthwise convolutions on x86: pairs of taps multiplied as int16 by ``vpmaddwd``, int32 sums.

``vpmaddwd`` multiplies 16-bit lanes and adds each adjacent pair into an int32 lane, exactly for any
8-bit operands widened to 16 bits (255 x 128 x 2 < 2^31). A depthwise convolution has no channel sum
to fill the pair, so the pair is two horizontal taps of one channel: the padded copy holds, for each
pixel and channel, the int16 pair ``(x[i, j, c], x[i, j + dilation, c])``, and the weights are packed
as ``(KH, ceil(KW / 2), Cp, 2)`` int16 pairs (zero past KW and C). A 3x3 layer then takes 6
instructions per vector of output channels and pixel instead of 9 int32 multiplies and 9 adds.

- ``aotnn_pack_int8_dw_weight``: the weight pairs (reads the parameter only: built once);
- ``aotnn_int8_dwconv2d_pad``: the pair copy of the input, padded with its zero point;
- ``aotnn_int8_dwconv2d``: ``acc[n, i, j, c] = sum int32(P[n, i*s + kh*d, j*s + 2*q*d, c, p]) *
  int32(Wp[kh, q, c, p])`` over ``(kh, q, p)``, tiled as the dense int8 convolution
  (``int8_conv.schedule_tiles``), the ``(lanes, 2)`` step tensorized: ``vpmaddwd`` on 512-bit
  registers (16 channels) where the target has AVX-512 (with VNNI, hence BW), 256-bit (8) with AVX2;
- ``aotnn_int8_dwconv2d_out``: the first C channels and OW columns, the requantization inlined.
"""
from __future__ import annotations

from tvm import te, tirx
from tvm.s_tir import Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common, conv2d, int8_conv
from .cpu import CpuInfo
from .layout import static_shape

ACC = "aotnn_int8_dwconv2d"
PAD = "aotnn_int8_dwconv2d_pad"
OUT = "aotnn_int8_dwconv2d_out"
PACK = "aotnn_pack_int8_dw_weight"
PAIR = 2


def _pair_intrinsics(lanes: int, llvm_name: str) -> tuple:
    """(description, implementation) of ``C[i] += A[i, 0] * B[i, 0] + A[i, 1] * B[i, 1]`` on ``lanes``
    int32 lanes with int16 operands, any alignment."""
    wide = lanes * PAIR

    @T.prim_func(s_tir=True)
    def desc(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (lanes, PAIR), "int16", offset_factor=1, align=1)
        B = T.match_buffer(b, (lanes, PAIR), "int16", offset_factor=1, align=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:lanes, 0:PAIR], B[0:lanes, 0:PAIR])
            T.writes(C[0:lanes])
            for i in T.serial(0, lanes):
                for k in T.serial(0, PAIR):
                    with T.sblock("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vi, vk], "int32") * T.cast(B[vi, vk], "int32")

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (lanes, PAIR), "int16", offset_factor=1, align=1)
        B = T.match_buffer(b, (lanes, PAIR), "int16", offset_factor=1, align=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:lanes, 0:PAIR], B[0:lanes, 0:PAIR])
            T.writes(C[0:lanes])
            C[T.ramp(T.int32(0), 1, lanes)] = C.vload([0], dtype=f"int32x{lanes}") + T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id(llvm_name), A.vload([0, 0], dtype=f"int16x{wide}"),
                B.vload([0, 0], dtype=f"int16x{wide}"), dtype=f"int32x{lanes}")

    return desc, impl


AVX512 = int8_conv.DotStep(16, PAIR, "int16", "aotnn_dw_pair_16x2_i16i32_avx512bw")
AVX2 = int8_conv.DotStep(8, PAIR, "int16", "aotnn_dw_pair_8x2_i16i32_avx2")
TensorIntrin.register(AVX512.intrin, *_pair_intrinsics(16, "llvm.x86.avx512.pmaddw.d.512"), override=True)
TensorIntrin.register(AVX2.intrin, *_pair_intrinsics(8, "llvm.x86.avx2.pmadd.wd"), override=True)


def pair_step(cpu: CpuInfo) -> int8_conv.DotStep | None:
    """The pair instruction of ``cpu``'s int8 depthwise kernel, or None (no such kernel)."""
    if cpu.vector_bits >= 512 and cpu.vnni:  # every AVX-512 VNNI CPU has AVX-512 BW
        return AVX512
    if cpu.avx2:
        return AVX2
    return None


# ---------------------------------------------------------------- TE computes (emitted with call_te)

def pack_weight(w: te.Tensor, lanes: int) -> te.Tensor:
    """Depthwise OIHW int8 weights ``(C, 1, KH, KW)`` -> int16 pairs ``(KH, ceil(KW / 2), Cp, 2)``,
    ``Cp`` = C rounded up to ``lanes``; zero past KW and C."""
    c, _, kh, kw = (int(d) for d in w.shape)
    c_padded = -(-c // lanes) * lanes

    def element(h, q, ch, p):
        tap = q * PAIR + p
        value = w[tirx.min(ch, c - 1), 0, h, tirx.min(tap, kw - 1)].astype("int16")
        return tirx.if_then_else(tirx.all(ch < c, tap < kw), value, tirx.const(0, "int16"))

    return te.compute((kh, -(-kw // PAIR), c_padded, PAIR), element, name=PACK)


def depthwise_int8(x: te.Tensor, wp: te.Tensor, *, kernel_width: int, strides, padding, dilation, pad_value: int,
                   ow_block: int) -> te.Tensor:
    """int32 NHWC depthwise convolution (multiplier 1) of a uint8/int8 NHWC ``x`` with weight pairs packed
    by :func:`pack_weight`; ``padding`` (top, left, bottom, right) holds ``pad_value``."""
    n, h, width, c = (int(d) for d in x.shape)
    kh, pairs, c_padded, _ = (int(d) for d in wp.shape)
    sh, sw = strides
    dh, dw = dilation
    oh = conv2d._out_size(h, kh, sh, dh, padding[0], padding[2])
    ow = conv2d._out_size(width, kernel_width, sw, dw, padding[1], padding[3])
    ow_padded = -(-ow // ow_block) * ow_block
    rows = (oh - 1) * sh + (kh - 1) * dh + 1
    cols = (ow_padded - 1) * sw + (pairs - 1) * PAIR * dw + 1  # pair starts; a pair's second tap past KW is 0
    top, left = padding[0], padding[1]
    fill = tirx.const(pad_value, "int16")

    def pair(b, i, j, ch, p):
        col = j + p * dw
        inside = tirx.all(i >= top, i < h + top, col >= left, col < width + left, ch < c)
        row = tirx.max(tirx.min(i - top, h - 1), 0)
        column = tirx.max(tirx.min(col - left, width - 1), 0)
        return tirx.if_then_else(inside, x[b, row, column, tirx.min(ch, c - 1)].astype("int16"), fill)

    data = te.compute((n, rows, cols, c_padded, PAIR), pair, name=PAD)
    rkh = te.reduce_axis((0, kh), "kh")
    rq = te.reduce_axis((0, pairs), "q")
    rp = te.reduce_axis((0, PAIR), "p")
    acc = te.compute(
        (n, oh, ow_padded, c_padded),
        lambda b, i, j, ch: te.sum(data[b, i * sh + rkh * dh, j * sw + rq * PAIR * dw, ch, rp].astype("int32")
                                   * wp[rkh, rq, ch, rp].astype("int32"), axis=[rkh, rq, rp]),
        name=ACC, attrs={"aotnn_tile_ow": ow_block})
    return te.compute((n, oh, ow, c), lambda b, i, j, ch: acc[b, i, j, ch], name=OUT)


# ---------------------------------------------------------------- the Relax rewrite (called by int8_conv's)

def emit(rw, source, w, *, strides, padding, dilation, pad_value: int, out_width: int):
    """The packed weights and the depthwise kernel of ``source`` (NHWC twin) and OIHW ``w``, emitted in
    ``rw``'s block builder; None where the target has no pair instruction."""
    step = pair_step(rw.cpu)
    if step is None:
        return None
    bb = rw.bb
    kernel_width = static_shape(w)[3]
    ow_block = int8_conv.ow_block_for(out_width, 1, rw.cpu.vector_registers)
    packed = rw.emit_once(("int8_dw_pairs", w, step), lambda: bb.call_te(
        pack_weight, rw.nchw(w), step.lanes, primfunc_name_hint=PACK))
    return bb.emit(bb.call_te(depthwise_int8, rw.nhwc(source), packed, kernel_width=kernel_width, strides=strides,
                              padding=padding, dilation=dilation, pad_value=pad_value, ow_block=ow_block,
                              primfunc_name_hint=ACC))


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, ACC) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    """The dense int8 convolution's tiling (``int8_conv.schedule_tiles``) with the pair step tensorized."""
    acc = common.find_block(sch, ACC)
    step = pair_step(cpu)
    if step is None:
        raise common.NotScheduled("no int16 pair instruction on this target")
    int8_conv.schedule_tiles(sch, cpu, acc, common.find_block(sch, OUT), None, step)
    pad = common.find_block(sch, PAD)
    if pad is not None:
        _schedule_pad(sch, pad, cpu)


def _schedule_pad(sch: Schedule, pad, cpu: CpuInfo) -> None:
    """The pair copy: a pixel's (channel, pair) values as vectors, rows spread over the cores."""
    b, i, j, ch, p = sch.get_loops(pad)
    values = sch.fuse(ch, p)
    total = (common.extent(sch, values) or 1) * (common.extent(sch, i) or 1) * (common.extent(sch, j) or 1)
    common.vectorize_inner(sch, pad, values, cpu.lanes("int16"))
    rows = sch.fuse(b, i)
    common.parallel_if_worth(sch, rows, total, cpu, common.PARALLEL_MIN_ELEMENTS)
