"""Matrix products of two activations (``relax.matmul`` legalized: batched ``C[.., i, j] = A[.., i, k] B[.., k, j]``).

Register tiles of ``m_block`` rows x ``n_block`` columns accumulate while k runs, the columns being
the vector axis (B's rows are contiguous); batches and row blocks are spread over the cores. Tile
sizes divide the extents, so no tail code is needed. Products whose B is transposed, or that do
not look like the above, are left to the generic rules.
"""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule

from . import common
from .cpu import CpuInfo


def _matmul_block(sch: Schedule):
    """The single reduction block of a batched NN matmul kernel, or None."""
    block = common.single_reduction_block(sch)
    if block is None:
        return None
    stmt = sch.get(block)
    kinds = [int(iv.iter_type) for iv in stmt.iter_vars]
    if kinds.count(tirx.IterVar.CommReduce) != 1 or kinds[-1] != tirx.IterVar.CommReduce or len(kinds) < 3:
        return None
    if len(stmt.reads) != 3 and len(stmt.reads) != 2:
        return None
    i_var, j_var, k_var = (iv.var for iv in stmt.iter_vars[-3:])
    loops = sch.get_loops(block)
    if len(loops) != len(kinds):
        return None

    def last_index_is(region, var) -> bool:
        last = region.region[-1].min
        return isinstance(last, tirx.Var) and last.same_as(var)

    write = stmt.writes[0]
    if not last_index_is(write, j_var):
        return None
    inputs = [r for r in stmt.reads if not r.source.same_as(write.source)]
    a = [r for r in inputs if last_index_is(r, k_var)]
    b = [r for r in inputs if last_index_is(r, j_var)]
    if len(a) != 1 or len(b) != 1:
        return None
    return block


def matches(sch: Schedule) -> bool:
    return _matmul_block(sch) is not None


def _divisor(extent: int, limit: int, multiple: int = 1) -> int:
    return next((d for d in range(min(extent, limit), 0, -1) if extent % d == 0 and d % multiple == 0), 1)


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = _matmul_block(sch)
    common.inline_producers(sch, block)
    stmt = sch.get(block)
    work = common.block_work(sch, block)
    dtype = str(stmt.writes[0].source.dtype)
    lanes = cpu.lanes(dtype)
    loops = sch.get_loops(block)
    batch, (i, j, k) = loops[:-3], loops[-3:]
    i_extent, j_extent = common.extent(sch, i), common.extent(sch, j)
    if i_extent is None or j_extent is None:
        raise common.NotScheduled("dynamic extents")
    n_block = _divisor(j_extent, 2 * lanes, lanes) if j_extent >= lanes else j_extent
    if n_block == 1:
        n_block = _divisor(j_extent, 2 * lanes)
    n_vectors = max(1, -(-n_block // lanes))
    budget = cpu.vector_registers - n_vectors - 2
    m_block = _divisor(i_extent, max(1, min(8, budget // n_vectors)))
    i_outer, i_inner = sch.split(i, [None, m_block])
    j_outer, j_inner = sch.split(j, [None, n_block])
    sch.reorder(*batch, i_outer, j_outer, k, i_inner, j_inner)
    task = sch.fuse(*batch, i_outer) if batch else i_outer

    consumers = sch.get_consumers(block)
    if len(consumers) == 1:  # an intermediate: keep the tile local and fold the epilogue into its write-back
        common.accumulate_in_registers(sch, block)
        out = consumers[0]
        common.inline_consumers(sch, out)
        common.inline_producers(sch, out)  # the epilogue's other inputs (a bias cast) must follow it into the tile
    else:
        out = sch.cache_write(block, 0, "global")  # a register tile: see common.accumulate_in_registers
    sch.reverse_compute_at(out, j_outer, preserve_unit_loops=True)
    common.vectorize_inner(sch, out, sch.get_loops(out)[-1], 4 * lanes)
    sch.unroll(i_inner)
    sch.vectorize(j_inner)
    common.parallel_if_worth(sch, task, work, cpu)
    sch.decompose_reduction(block, k)
