"""int8 dense products on AVX-512 VNNI: weights packed at build time, ``vpdpbusd`` in the inner loop.

``vpdpbusd`` multiplies 4 uint8 activations with 4 int8 weights for each of 16 int32 lanes and adds
the sums to the lanes, exactly (no saturation). So a product ``uint8 x (M, K) @ int8 W.T (K, N)``
with an int32 result is rewritten (Relax, before legalization) to

- ``aotnn_pack_int8_dense_weight``: W as ``(N / 16, K / 4, 16, 4)``, zero past N, which reads the
  parameter only (the build runs it once per parameter change);
- ``aotnn_int8_dense``: ``acc[i, j] = sum_k int32(x[i, k]) * int32(Wp[j // 16, k // 4, j % 16, k % 4])``,
  whose (16 output, 4 reduction) inner tile is tensorized with TVM's VNNI intrinsic, then
  ``aotnn_int8_dense_out``, the first N columns, where the requantization epilogue is inlined.

Only targets with ``avx512vnni`` (``CpuInfo.vnni``), uint8 activations and K a multiple of 4 are
rewritten; everything else keeps the generic int8 schedule (``int8.py``). AVX2's ``vpmaddubsw``
saturates its int16 pair sums, so it would not be exact for arbitrary int8 weights and is not used.
"""
from __future__ import annotations

from tvm import relax, te, tirx
from tvm.s_tir import Schedule, TensorIntrin
from tvm.script import tirx as T

from . import common
from .cpu import CpuInfo
from .dense import _parameter_source
from .int8_dot import dot_desc
from .layout import Rewriter, dtype_of, static_shape

ACC = "aotnn_int8_dense"
OUT = "aotnn_int8_dense_out"
LANES, DEPTH = 16, 4  # vpdpbusd: 16 int32 lanes, each the dot product of 4 byte pairs
INTRIN = "aotnn_dot_16x4_u8i8i32_vnni"


# TVM's own VNNI intrinsic (tensor_intrin.x86) declares 64-byte aligned buffers, which a row of a
# fused kernel's int8 buffers is not: the same instruction, declared for any alignment
_dot_desc = dot_desc("uint8", "int8", LANES, DEPTH)


def vpdpbusd_impl(lanes: int):
    """``vpdpbusd`` on ``lanes`` int32 lanes (16: AVX-512 VNNI; 8: the 256-bit form, VEX-encoded AVX-VNNI
    where AVX-512 VL is absent), each adding 4 uint8 x int8 products: the implementation of
    ``dot_desc("uint8", "int8", lanes, 4)``."""
    width = lanes * 4
    intrinsic = f"llvm.x86.avx512.vpdpbusd.{lanes * 32}"
    acc_type, bytes_type, act_type = f"int32x{lanes}", f"int8x{width}", f"uint8x{width}"

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1, align=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1, align=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, align=1)
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            # LLVM 20 declares the byte operands <N x i8> (older releases: <N/4 x i32>)
            activations = T.reinterpret(T.broadcast(T.reinterpret(A.vload([0], "uint8x4"), dtype="int32"), lanes),
                                        dtype=act_type)
            C[T.ramp(T.int32(0), 1, lanes)] = T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id(intrinsic), C.vload([0], dtype=acc_type), activations,
                B.vload([0, 0], dtype=bytes_type), dtype=acc_type)

    return impl


_dot_vnni = vpdpbusd_impl(LANES)


TensorIntrin.register(INTRIN, _dot_desc, _dot_vnni, override=True)


def pack_weight(w: te.Tensor, n_padded: int, transposed: bool) -> te.Tensor:
    """``(N, K)`` int8 weights (``(K, N)`` if ``transposed``) -> ``(Np / 16, K / 4, 16, 4)``, zero past N."""
    if transposed:
        k, n = (int(d) for d in w.shape)
    else:
        n, k = (int(d) for d in w.shape)
    zero = tirx.const(0, w.dtype)

    def element(o, kq, lane, kr):
        col, row = o * LANES + lane, kq * DEPTH + kr
        safe = tirx.min(col, n - 1) if n_padded != n else col
        value = w[row, safe] if transposed else w[safe, row]
        return value if n_padded == n else tirx.if_then_else(col < n, value, zero)

    return te.compute((n_padded // LANES, k // DEPTH, LANES, DEPTH), element, name="aotnn_pack_int8_dense_weight")


def dense_vnni(x: te.Tensor, wp: te.Tensor, *, out_features: int) -> te.Tensor:
    """int32 ``x @ W.T`` of a (M, K) uint8 ``x`` and weights packed by :func:`pack_weight`."""
    m, k = (int(d) for d in x.shape)
    n_padded = int(wp.shape[0]) * LANES
    rk = te.reduce_axis((0, k), "k")
    acc = te.compute(
        (m, n_padded),
        lambda i, j: te.sum(x[i, rk].astype("int32")
                            * wp[j // LANES, rk // DEPTH, j % LANES, rk % DEPTH].astype("int32"), axis=[rk]),
        name=ACC)
    return te.compute((m, out_features), lambda i, j: acc[i, j], name=OUT)


def _applies(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    if call.op.name != "relax.matmul" or not rw.cpu.vnni:
        return False
    x, b = call.args
    x_shape, b_shape = static_shape(x), static_shape(b)
    if x_shape is None or b_shape is None or len(x_shape) != 2 or len(b_shape) != 2:
        return False
    return (dtype_of(x) == "uint8" and dtype_of(b) == "int8" and dtype_of(var) == "int32"
            and x_shape[1] % DEPTH == 0)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``matmul(uint8 x, int8 W.T)`` with an int32 result and a parameter W -> a packed VNNI product."""
    if not _applies(rw, var, call):
        return False
    x, b = call.args
    source = _parameter_source(rw, b)
    if source is None:
        return False
    weight, transposed = source
    n = static_shape(b)[1]
    n_padded = -(-n // LANES) * LANES
    bb = rw.bb
    packed = rw.emit_once(("int8_vnni_dense", weight, transposed), lambda: bb.call_te(
        pack_weight, rw.nchw(weight), n_padded, transposed, primfunc_name_hint="aotnn_pack_int8_dense_weight"))
    out = bb.emit(bb.call_te(dense_vnni, rw.nchw(x), packed, out_features=n, primfunc_name_hint=ACC))
    rw.set_nchw(var, out)
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, ACC) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    acc = common.find_block(sch, ACC)
    out = common.find_block(sch, OUT)
    if out is None:
        raise common.NotScheduled("int8 dense without its output stage")
    common.inline_consumers(sch, out)
    work = common.block_work(sch, acc)
    i, j, k = sch.get_loops(acc)
    j_outer, j_inner = sch.split(j, [None, LANES])
    k_outer, k_inner = sch.split(k, [None, DEPTH])
    sch.reorder(j_outer, i, k_outer, j_inner, k_inner)
    task = j_outer
    common.accumulate_in_registers(sch, acc)
    sch.reverse_compute_at(out, i, preserve_unit_loops=True)
    common.vectorize_inner(sch, out, sch.get_loops(out)[-1], LANES)
    # before the tensorized update loses its init: TVM then no longer sees a reduction under the task loop
    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(acc, k_outer)
    sch.tensorize(j_inner, INTRIN)
