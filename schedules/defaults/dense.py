"""Dense layers and matrix products with a parameter operand: a GEMM over packed weights.

``x @ W.T`` (or ``x @ B`` with B a parameter) becomes ``acc[m, n] = sum_k x[m, k] * Wp[n // nb, k, n % nb]``
with ``Wp = [N / nb, K, nb]``: an ``m_block x nb`` tile stays in registers while k runs, reading one
contiguous ``nb``-wide row of the packed weight per step. M and N are rounded up to whole tiles in a
private buffer; the write-back (with any fused epilogue: bias, activation) is clipped to the output.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import tvm
from tvm import relax, te, tirx
from tvm.s_tir import Schedule

from . import channel_gather, common
from .conv2d import _best_ow_block, _round_up
from .cpu import CpuInfo
from .layout import Rewriter, dtype_of, static_shape

DENSE = "aotnn_dense"
OUT = "aotnn_dense_out"


@dataclass(frozen=True)
class DensePlan:
    m_block: int
    n_block: int
    m_padded: int
    n_padded: int


def plan_dense(cpu: CpuInfo, m: int, n: int, dtype: str) -> DensePlan:
    """Register tile for an (m x k) @ (k x n) product.

    With one row the weights are streamed (each vector feeds one FMA as a memory operand), so
    the tile is as wide as 8 accumulators, enough independent FMA chains to hide their latency.
    With more rows the weight vectors are reused from registers: rows x vectors accumulators,
    plus the vectors and a broadcast, must fit the register file. On a microcontroller
    (``cpu.small_memory``) the tile divides ``n`` where it can: packed weights hold no padding.
    """
    lanes = cpu.lanes(dtype)
    n_vectors_max = max(1, -(-n // lanes))
    if m == 1:
        n_vectors, m_block = min(n_vectors_max, 8), 1
    elif m == 2:
        n_vectors, m_block = min(n_vectors_max, max(1, (cpu.vector_registers - 1) // 3), 4), 2
    else:
        n_vectors = min(2, n_vectors_max)
        m_block = _best_ow_block(m, n_vectors, cpu.vector_registers - n_vectors - 2, 8)
    n_block = n_vectors * lanes if n >= lanes else n
    if cpu.small_memory and n % n_block:  # no zero columns in a microcontroller's flash
        dividing = [b for b in range(n_block, 0, -lanes) if n % b == 0]
        n_block = dividing[0] if dividing else (n if n <= n_block else n_block)
    return DensePlan(m_block, n_block, _round_up(m, m_block), _round_up(n, n_block))


# ---------------------------------------------------------------- TE computes

def pack_weight(w: te.Tensor, n_block: int, n_padded: int, transposed: bool) -> te.Tensor:
    """``(N, K)`` weights (``(K, N)`` if ``transposed``) -> ``(Np / nb, K, nb)``, zero past N."""
    if transposed:
        k, n = (int(d) for d in w.shape)
    else:
        n, k = (int(d) for d in w.shape)
    zero = tirx.const(0, w.dtype)

    def element(o, kk, b):
        col = o * n_block + b
        safe = tirx.min(col, n - 1) if n_padded != n else col
        value = w[kk, safe] if transposed else w[safe, kk]
        return value if n_padded == n else tirx.if_then_else(col < n, value, zero)

    return te.compute((n_padded // n_block, k, n_block), element, name="aotnn_pack_dense_weight")


def dense_packed(x: te.Tensor, wp: te.Tensor, *, out_features: int, m_block: int, m_padded: int) -> te.Tensor:
    """``x (..., K) @ W.T`` as an (M, N) matrix, M the product of x's leading axes, W packed by
    :func:`pack_weight`. (A 2-D result keeps every tile's output rows one contiguous range.)"""
    n_blocks, _, n_block = (int(d) for d in wp.shape)
    return _dense(x, lambda j, rk: wp[j // n_block, rk, j % n_block], n_blocks * n_block, n_block,
                  out_features=out_features, m_block=m_block, m_padded=m_padded)


def dense_plain(x: te.Tensor, w: te.Tensor, *, transposed: bool, n_block: int, n_padded: int,
                out_features: int, m_block: int, m_padded: int) -> te.Tensor:
    """:func:`dense_packed` reading the weights where they are: ``(N, K)`` (``(K, N)`` if
    ``transposed``), for weights that change on every call (a training step's)."""
    n = out_features

    def weight_at(j, rk):
        col = tirx.min(j, n - 1) if n_padded != n else j
        return w[rk, col] if transposed else w[col, rk]

    return _dense(x, weight_at, n_padded, n_block, out_features=out_features, m_block=m_block, m_padded=m_padded)


def _dense(x: te.Tensor, weight_at, n_columns: int, n_block: int, *, out_features: int, m_block: int,
           m_padded: int) -> te.Tensor:
    lead = [int(d) for d in x.shape[:-1]]
    k = int(x.shape[-1])
    m = reduce(lambda a, b: a * b, lead, 1)
    rk = te.reduce_axis((0, k), "k")

    dims = [(pos, size) for pos, size in enumerate(lead) if size > 1]

    def row(flat):
        flat = tirx.min(flat, m - 1) if m_padded != m else flat
        index = [0] * len(lead)
        for count, (pos, size) in enumerate(reversed(dims)):
            index[pos] = flat if count == len(dims) - 1 else flat % size
            flat = flat // size
        return index

    acc = te.compute((m_padded, n_columns),
                     lambda i, j: te.sum(x[(*row(i), rk)] * weight_at(j, rk), axis=[rk]),
                     name=DENSE, attrs={"aotnn_tile_m": m_block, "aotnn_tile_n": n_block})
    return te.compute((m, out_features), lambda i, j: acc[i, j], name=OUT)


# ---------------------------------------------------------------- the Relax rewrite

def _parameter_source(rw: Rewriter, expr: relax.Expr) -> tuple[relax.Expr, bool] | None:
    """(the 2-D parameter, whether it is (K, N)) behind a matmul's right operand, or None."""
    if not isinstance(expr, relax.Var):
        return None
    value = rw.bound.get(expr)
    if value is None:  # a function parameter: used as (K, N)
        return expr, True
    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == "relax.permute_dims":
        source = value.args[0]
        axes = value.attrs.axes
        if isinstance(source, relax.Var) and source not in rw.bound and (axes is None or
                                                                       [int(a) for a in axes] == [1, 0]):
            return source, False
    return None


def _unreshaped(rw: Rewriter, x: relax.Expr, k: int) -> relax.Expr:
    """What ``x`` reshapes, when that keeps rows of ``k`` (the GEMM reads it in place: no copy)."""
    value = rw.bound.get(x) if isinstance(x, relax.Var) and not channel_gather.replaced(rw, x) else None
    if (isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == "relax.reshape"
            and not rw.has_twin(value.args[0])):
        shape = static_shape(value.args[0])
        if shape is not None and len(shape) >= 2 and shape[-1] == k:
            return value.args[0]
    return x


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """``matmul(x, W.T)`` / ``matmul(x, B)`` with a 2-D float32 parameter -> a packed GEMM."""
    if call.op.name != "relax.matmul":
        return False
    x, b = call.args
    x_shape, b_shape, out_shape = static_shape(x), static_shape(b), static_shape(var)
    if x_shape is None or b_shape is None or out_shape is None or len(b_shape) != 2 or len(x_shape) < 2:
        return False
    if not (dtype_of(x) == dtype_of(b) == dtype_of(var) == "float32"):
        return False
    source = _parameter_source(rw, b)
    if source is None:
        return False
    weight, transposed = source
    k, n = b_shape
    m = 1
    for d in x_shape[:-1]:
        m *= d
    plan = plan_dense(rw.cpu, m, n, "float32")
    bb = rw.bb
    source_x = _unreshaped(rw, x, k)
    if rw.updated_by_the_step(weight):
        out = bb.emit(bb.call_te(dense_plain, rw.nchw(source_x), rw.nchw(weight), transposed=transposed,
                                 n_block=plan.n_block, n_padded=plan.n_padded, out_features=n,
                                 m_block=plan.m_block, m_padded=plan.m_padded, primfunc_name_hint="aotnn_dense"))
        if len(x_shape) > 2:
            out = bb.emit(relax.op.reshape(out, out_shape))
        rw.set_nchw(var, out)
        return True
    packed = rw.emit_once(("dense", weight, plan.n_block, plan.n_padded, transposed), lambda: bb.call_te(
        pack_weight, rw.nchw(weight), plan.n_block, plan.n_padded, transposed,
        primfunc_name_hint="aotnn_pack_dense_weight"))
    out = bb.emit(bb.call_te(dense_packed, rw.nchw(source_x), packed, out_features=n, m_block=plan.m_block,
                             m_padded=plan.m_padded, primfunc_name_hint="aotnn_dense"))
    if len(x_shape) > 2:
        out = bb.emit(relax.op.reshape(out, out_shape))
    rw.set_nchw(var, out)
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, DENSE) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    dense = common.find_block(sch, DENSE)
    out = common.find_block(sch, OUT)
    if out is None:
        raise common.NotScheduled("dense without its output stage")
    common.inline_producers(sch, dense)
    common.inline_consumers(sch, out)
    stmt = sch.get(dense)
    work = common.block_work(sch, dense)
    m_block = int(stmt.annotations["aotnn_tile_m"])
    n_block = int(stmt.annotations["aotnn_tile_n"])
    dtype = str(stmt.writes[0].source.dtype)
    i, j, k = sch.get_loops(dense)
    i_outer, i_inner = sch.split(i, [None, m_block])
    j_outer, j_inner = sch.split(j, [None, n_block])
    sch.reorder(j_outer, i_outer, k, i_inner, j_inner)
    task = sch.fuse(j_outer, i_outer)
    common.accumulate_in_registers(sch, dense)
    try:
        sch.reverse_compute_at(out, task, preserve_unit_loops=True)
        common.vectorize_inner(sch, out, sch.get_loops(out)[-1], cpu.lanes(dtype) * 4)
    except Exception:  # an output index the tile cannot be mapped back to: write back at the end
        sch.set_scope(dense, 0, "global")
        common.schedule_injective_block(sch, out, cpu)
    sch.unroll(i_inner)
    sch.vectorize(j_inner)
    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(dense, k)
