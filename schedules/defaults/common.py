"""Schedule helpers shared by the op-class schedules: finding blocks, inlining, vectorizing, parallel loops."""
from __future__ import annotations

from tvm import tirx
from tvm.s_tir import Schedule

from .cpu import CpuInfo


def accumulate_in_registers(sch: Schedule, block) -> None:
    """Keep ``block``'s output tile (a product's accumulators, computed at a tile loop) in registers.

    The tile's buffer gets the "global" scope, never "local": TVM's LowerTVMBuiltin keeps a small
    constant-size "global" buffer on the stack, where LLVM promotes it to registers, but turns any
    "local" one into a TVMBackendAllocWorkspace call, heap memory whose every update is a load and
    a store. MobileNetV2's convolutions ran 10-30% faster (depthwise ones up to 3x in parallel
    loops) once their tiles stayed "global".
    """
    sch.set_scope(block, 0, "global")


# A parallel launch costs a few microseconds while the pool's threads poll between kernels (the
# runtime's backend), a wake-up of tens of microseconds after they went to sleep. Kernels smaller
# than this stay on the calling thread. Products: 256K multiply-accumulates (10-30 us on one
# core); from there two cores win, e.g. an LSTM step's 256x1024 matrix-vector product reads half
# the weights per core (LSTM zoo model 1.1 -> 0.73 ms), MobileNetV2's 7x7 depthwise layers -30%.
PARALLEL_MIN_ELEMENTS = 64 * 1024     # injective kernels: output elements
PARALLEL_MIN_MACS = 1 << 18           # products: multiply-accumulates


class NotScheduled(Exception):
    """A schedule rule does not apply to this kernel (the next rule, or none, is tried)."""


def find_block(sch: Schedule, name: str):
    """The block called ``name`` in the function being scheduled, or None."""
    try:
        return sch.get_sblock(name)
    except Exception:
        return None


def root_blocks(sch: Schedule) -> list:
    """The blocks directly under the root block, in program order."""
    root = sch.get_sblock("root") if find_block(sch, "root") is not None else None
    if root is None:
        return []
    return list(sch.get_child_blocks(root))


def named_blocks(sch: Schedule, prefix: str) -> list:
    """The root blocks called ``prefix`` or ``prefix`` plus FuseTIR's numeric suffix, in order."""
    return [block for block in root_blocks(sch)
            if (name := block_name(sch, block)) == prefix or (name.startswith(prefix) and name[len(prefix):].isdigit())]


def single_reduction_block(sch: Schedule):
    """The kernel's only reduction block at the root, or None when it has none or several."""
    reductions = [b for b in root_blocks(sch) if is_reduction(sch, b)]
    return reductions[0] if len(reductions) == 1 else None


def block_name(sch: Schedule, block) -> str:
    return sch.get(block).name_hint


def is_reduction(sch: Schedule, block) -> bool:
    return any(int(iv.iter_type) == tirx.IterVar.CommReduce for iv in sch.get(block).iter_vars)


def uses_var(expr, var) -> bool:
    """Whether the TIR expression ``expr`` reads the variable ``var``."""
    return any(v.same_as(var) for v in tirx.analysis.undefined_vars(expr))


def extent(sch: Schedule, loop) -> int | None:
    value = sch.get(loop).extent
    return int(value) if isinstance(value, tirx.IntImm) else None


def inline_producers(sch: Schedule, block, keep=()) -> None:
    """Inline every element-wise producer chain feeding ``block`` (those that refuse stay as they are)."""
    keep_names = set(keep)
    pending = list(sch.get_producers(block))
    while pending:
        producer = pending.pop()
        try:  # a producer reached twice (a diamond) is gone after its first inlining
            if block_name(sch, producer) in keep_names:
                continue
            upstream = list(sch.get_producers(producer))
            sch.compute_inline(producer)
        except Exception:  # noqa: BLE001 - refused, or already inlined
            continue
        pending.extend(upstream)


def output_blocks(sch: Schedule) -> list:
    """Blocks that write the function's outputs."""
    try:
        return list(sch.get_output_blocks(sch.get_sblock("root")))
    except Exception:  # noqa: BLE001
        return []


def inline_consumers(sch: Schedule, block) -> None:
    """Fold the element-wise epilogue after ``block`` into it.

    The epilogue may be a DAG (``where(x >= 0, x, 0.1 * x)``): its inner nodes are first inlined
    forward into their consumers, which leaves one block per output; then a lone consumer is
    inlined backward into ``block``, as long as there is exactly one (inlining one of several
    consumers would orphan the others).
    """
    outputs = {sch.get(b).name_hint for b in output_blocks(sch)}
    seen, frontier = set(), list(sch.get_consumers(block))
    order = []
    while frontier:
        consumer = frontier.pop(0)
        name = block_name(sch, consumer)
        if name in seen:
            continue
        seen.add(name)
        order.append(consumer)
        frontier.extend(sch.get_consumers(consumer))
    for consumer in order:
        if block_name(sch, consumer) in outputs or is_reduction(sch, consumer):
            continue
        try:
            sch.compute_inline(consumer)
        except Exception:  # noqa: BLE001 - it stays a block of its own
            pass
    while True:
        consumers = sch.get_consumers(block)
        if len(consumers) != 1:
            return
        if len(sch.get_producers(consumers[0])) != 1:
            _inline_side_inputs(sch, consumers[0], block)
        if len(sch.get_producers(consumers[0])) != 1:
            return
        try:
            sch.reverse_compute_inline(consumers[0])
        except Exception:  # noqa: BLE001
            return


def _ancestors(sch: Schedule, block) -> set[str]:
    names, pending = set(), [block]
    while pending:
        current = pending.pop()
        name = block_name(sch, current)
        if name not in names:
            names.add(name)
            pending.extend(sch.get_producers(current))
    return names


def _numel(buffer) -> int:
    total = 1
    for dim in buffer.shape:
        total *= int(dim) if isinstance(dim, tirx.IntImm) else 1
    return total


def _inline_side_inputs(sch: Schedule, consumer, block) -> None:
    """Inline into ``consumer`` the element-wise chains of its other operands (a residual add's
    dequantized skip computed in the same kernel): left as blocks of their own they run as serial
    whole-map loops and keep the epilogue out of ``block``'s write-back. Only chains whose blocks
    are no larger than ``consumer``'s output: a per-channel value broadcast over the map would be
    recomputed per element (``broadcast_epilogue.py`` handles those)."""
    size = _numel(sch.get(consumer).writes[0].source)
    keep = _ancestors(sch, block)
    pending = [p for p in sch.get_producers(consumer) if block_name(sch, p) not in keep]
    while pending:
        producer = pending.pop()
        try:
            if block_name(sch, producer) in keep or is_reduction(sch, producer):
                continue
            if _numel(sch.get(producer).writes[0].source) > size:
                continue
            upstream = [p for p in sch.get_producers(producer) if block_name(sch, p) not in keep]
            sch.compute_inline(producer)
        except Exception:  # noqa: BLE001 - refused, or already inlined (a diamond)
            continue
        pending.extend(upstream)


def block_work(sch: Schedule, block) -> int:
    """Iterations of ``block`` (spatial x reduction extents): its multiply-accumulates for a product."""
    work = 1
    for iv in sch.get(block).iter_vars:
        extent_ = iv.dom.extent
        work *= int(extent_) if isinstance(extent_, tirx.IntImm) else 1
    return work


def parallel_if_worth(sch: Schedule, loop, work: int, cpu: CpuInfo, minimum: int = PARALLEL_MIN_MACS) -> None:
    """Mark ``loop`` parallel when there are cores to share and ``work`` is worth a launch."""
    if cpu.cores > 1 and work >= minimum and (extent(sch, loop) or 0) > 1:
        sch.parallel(loop)


def touches_bool(sch: Schedule, block) -> bool:
    """Whether ``block`` reads or writes a bool buffer. TVM's LLVM code generator mixes the
    in-memory (i8) and computed (i1) forms of a bool vector (``or <4 x i8>, <4 x i1>``), so such
    blocks stay scalar."""
    stmt = sch.get(block)
    return any(str(region.source.dtype) == "bool" for region in list(stmt.reads) + list(stmt.writes))


def vectorize_inner(sch: Schedule, block, loop, max_lanes: int) -> None:
    """Vectorize ``loop`` (the block's innermost) by its largest divisor up to ``max_lanes``."""
    size = extent(sch, loop)
    if size is None or size <= 1 or touches_bool(sch, block):
        return
    if size <= max_lanes:
        sch.vectorize(loop)
        return
    factor = next((f for f in range(max_lanes, 1, -1) if size % f == 0), 1)
    if factor > 1:
        _, inner = sch.split(loop, [None, factor])
        sch.vectorize(inner)


def vectorize_registers(sch: Schedule, block, loop, lanes: int) -> None:
    """Vectorize ``loop`` (the block's innermost, a register tile's channels) one register at a time.

    A write-back clamps its values (ReLU6 is ``min(max(x, 0), 6)``). On vectors wider than a register
    LLVM splits the comparison and the selection apart and lowers ``max(x, 0)`` as a compare and a
    mask (two instructions); on register-wide vectors it emits one ``max``.
    """
    size = extent(sch, loop)
    if size is not None and size > lanes and size % lanes == 0 and not touches_bool(sch, block):
        outer, inner = sch.split(loop, [None, lanes])
        sch.unroll(outer)
        sch.vectorize(inner)
        return
    vectorize_inner(sch, block, loop, lanes)


def _compute_lanes(sch: Schedule, block, cpu: CpuInfo) -> int:
    """Lanes of one vector of the written dtype, or of a wider float operand read: a float32 -> uint8
    quantize computes in float32, and 64 uint8 lanes rarely fit its innermost axis - the vector then spans
    rows and each lane divides its index to find its channel's scale (0.12 ms for a 3x224x224 input,
    0.009 ms with float32 lanes). Integer reads (indices) do not narrow the vector."""
    stmt = sch.get(block)
    if not stmt.writes:
        return 4
    dtypes = [str(stmt.writes[0].source.dtype)]
    dtypes += [str(region.source.dtype) for region in stmt.reads if str(region.source.dtype).startswith("float")]
    return min(cpu.lanes(dtype) for dtype in dtypes)


def schedule_injective_block(sch: Schedule, block, cpu: CpuInfo) -> None:
    """Spatial block: fuse its loops, vectorize the contiguous tail, spread the rest over the cores."""
    loops = sch.get_loops(block)
    if not loops:
        return
    extents = [extent(sch, loop) for loop in loops]
    if any(e is None for e in extents):
        return
    total = 1
    for e in extents:
        total *= e
    lanes = _compute_lanes(sch, block, cpu)
    # vectors within the innermost axis first: across rows a vector's indices into a transposed,
    # sliced or concatenated operand are divisions per lane (Swin's window partitions, a roll)
    vector = next((f for f in (4 * lanes, 2 * lanes, lanes) if extents[-1] % f == 0), None)
    if vector is None:
        vector = next((f for f in (4 * lanes, 2 * lanes, lanes) if total % f == 0 and total >= f), None)
    if vector is None:
        vector = next((f for f in range(min(total, 4 * lanes), 1, -1) if total % f == 0), 1)
    if touches_bool(sch, block):
        vector = 1
    if vector > 1:
        # vectors within the innermost axis where it divides them: a condition on the outer axes
        # (a padded copy's border) stays one value per vector; across rows TVM scalarizes the loop
        within = extents[-1] % vector == 0
        rest, inner = sch.split(loops[-1] if within else sch.fuse(*loops), [None, vector])
        sch.vectorize(inner)
        loops = [*loops[:-1], rest] if within else [rest]
    outer = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    parallel_if_worth(sch, outer, total, cpu, PARALLEL_MIN_ELEMENTS)
