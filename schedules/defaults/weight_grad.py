"""Weight gradients of ungrouped 2-D convolutions as one channels-last GEMM per convolution.

The gradient rule (``relay_frontend/gradients.py``) writes ``dw`` of ``y = conv2d(x, w)`` as one
matmul per kernel tap over NCHW data: ``x`` transposed to (C, N, H, W) and padded, a strided
slice copied out per tap, ``gy`` transposed to (N*OH*OW, O), the taps concatenated and transposed
back to OIHW. On ResNet-18 the copies alone (transposes, pads, slices, the concatenation) cost as
much as the products. Here that whole chain, recognized at its last binding, becomes one kernel
over the channels-last twins of ``x`` and ``gy``:

    dw[o, c, a, b] = sum over (n, i, j) of xp[n, i*sh + a*dh, j*sw + b*dw, c] * gy[n, i, j, o]

with ``xp`` the NHWC input padded once. The tap loop sits outside the reduction over batch x
positions; each task owns a register tile of ``c_block`` input x ``o_block`` output channels (and,
for few channels, ``tap_block`` taps of a kernel row): per position it broadcasts ``c_block``
contiguous input values and loads ``o_block / lanes`` vectors of the output gradient. The tile is
laid out (tap, C, O), output channels contiguous, and transposed into the OIHW result as it is
written back, once per tile. Where the operands exceed the caches (ResNet's stem: 5 MB of input,
26 MB of output gradient, read once per tap), positions come in chunks of output rows that fit L2
and a task's taps all reuse a chunk (see ``_schedule_chunked``). The chain's other bindings are
left dead for the build's dead-code elimination. Other targets (no CPU defaults) keep the per-tap
form.
"""
from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax, te
from tvm.s_tir import SBlockRealize, Schedule

from . import common
from .cpu import CpuInfo
from .layout import Rewriter, dtype_of, static_shape

WGRAD = "aotnn_conv2d_wgrad"
OPAQUE = 8  # tvm.relax OpPatternKind.kOpaque: the product stays a kernel of its own


@dataclass(frozen=True)
class WeightGradChain:
    """What the per-tap chain computes: ``x``/``gy`` (NCHW vars) and the convolution's geometry."""

    x: relax.Expr
    gy: relax.Expr
    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilation: tuple[int, int]
    padding: tuple[int, int, int, int]  # top, bottom, left, right


# ---------------------------------------------------------------- recognizing the per-tap chain

def _call(rw: Rewriter, expr, op_name: str) -> relax.Call | None:
    """The call bound to ``expr`` if it is a call of ``op_name``."""
    value = rw.value_of(expr) if isinstance(expr, relax.Var) else expr
    if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == op_name:
        return value
    return None


def _ints(value) -> tuple[int, ...] | None:
    try:
        return tuple(int(v) for v in (value.values if hasattr(value, "values") else value))
    except (TypeError, ValueError):
        return None


def _axes_are(call: relax.Call | None, axes: tuple[int, ...]) -> bool:
    return call is not None and call.attrs.axes is not None and _ints(call.attrs.axes) == axes


def _slice_geometry(call: relax.Call) -> tuple[tuple, tuple, tuple] | None:
    """(begin, end, strides) of a ``strided_slice`` over axes (2, 3) with constant bounds."""
    if len(call.args) < 4:
        return None
    axes, begin, end = (_ints(a) for a in call.args[1:4])
    strides = _ints(call.args[4]) if len(call.args) > 4 else (1, 1)
    if axes != (2, 3) or begin is None or end is None or strides is None:
        return None
    return begin, end, strides


def _tap_slice(rw: Rewriter, field) -> tuple[relax.Call, relax.Expr] | None:
    """``expand_dims(matmul(reshape(strided_slice(D)), G), 0)`` -> (the slice, G)."""
    expand = _call(rw, field, "relax.expand_dims")
    if expand is None or _ints(expand.attrs.axis) != (0,):
        return None
    product = _call(rw, expand.args[0], "relax.matmul")
    if product is None:
        return None
    rows = _call(rw, product.args[0], "relax.reshape")
    taps = _call(rw, rows.args[0], "relax.strided_slice") if rows is not None else None
    if taps is None:
        return None
    return taps, product.args[1]


def match_chain(rw: Rewriter, var: relax.Var, call: relax.Call) -> WeightGradChain | None:
    """The convolution whose per-tap weight gradient ends in ``var = call``, or None."""
    if call.op.name != "relax.reshape":
        return None
    w_shape = static_shape(var)
    back = _call(rw, call.args[0], "relax.permute_dims")
    if w_shape is None or len(w_shape) != 4 or not _axes_are(back, (2, 1, 0)):
        return None
    o, c, kh, kw = w_shape
    stacked = rw.value_of(back.args[0]) if isinstance(back.args[0], relax.Var) else None
    if isinstance(stacked, relax.Call) and isinstance(stacked.op, tvm.ir.Op) and stacked.op.name == "relax.concat":
        fields = stacked.args[0]
        fields = rw.value_of(fields) if isinstance(fields, relax.Var) else fields
        if not isinstance(fields, relax.Tuple) or int(stacked.attrs.axis or 0) != 0:
            return None
        fields = list(fields.fields)
    else:
        fields = [back.args[0]]
    if len(fields) != kh * kw:
        return None
    taps = [_tap_slice(rw, f) for f in fields]
    if any(t is None for t in taps):
        return None
    source, grads = taps[0][0].args[0], taps[0][1]
    if any(not t[0].args[0].same_as(source) or not t[1].same_as(grads) for t in taps):
        return None
    # grads = reshape(permute_dims(gy, [0, 2, 3, 1]), [N*OH*OW, O])
    flat = _call(rw, grads, "relax.reshape")
    to_nhwc = _call(rw, flat.args[0], "relax.permute_dims") if flat is not None else None
    if not _axes_are(to_nhwc, (0, 2, 3, 1)):
        return None
    gy = to_nhwc.args[0]
    # source = [pad(]permute_dims(x, [1, 0, 2, 3])[)]
    padding = (0, 0, 0, 0)
    pad = _call(rw, source, "relax.nn.pad")
    if pad is not None:
        widths = _ints(pad.attrs.pad_width)
        if (widths is None or len(widths) != 8 or any(widths[:4]) or pad.attrs.pad_mode != "constant"
                or float(pad.attrs.pad_value) != 0.0):
            return None
        padding = widths[4:]
        source = pad.args[0]
    swap = _call(rw, source, "relax.permute_dims")
    if not _axes_are(swap, (1, 0, 2, 3)):
        return None
    x = swap.args[0]
    x_shape, gy_shape = static_shape(x), static_shape(gy)
    if (x_shape is None or gy_shape is None or len(x_shape) != 4 or len(gy_shape) != 4
            or x_shape[1] != c or gy_shape[:2] != (x_shape[0], o)
            or not dtype_of(x).startswith("float") or dtype_of(gy) != dtype_of(x) or dtype_of(var) != dtype_of(x)):
        return None
    geometry = [_slice_geometry(t[0]) for t in taps]
    if any(g is None for g in geometry):
        return None
    strides = geometry[0][2]
    dilation = (geometry[kw][0][0] if kh > 1 else 1, geometry[1][0][1] if kw > 1 else 1)
    oh, ow = gy_shape[2:]
    for index, (begin, end, step) in enumerate(geometry):
        a, b = divmod(index, kw)
        first = (a * dilation[0], b * dilation[1])
        if (begin != first or step != strides
                or end != (first[0] + (oh - 1) * strides[0] + 1, first[1] + (ow - 1) * strides[1] + 1)):
            return None
    return WeightGradChain(x, gy, (kh, kw), tuple(strides), tuple(dilation), tuple(padding))


# ---------------------------------------------------------------- the kernel

def weight_grad_nhwc(xp: te.Tensor, gy: te.Tensor, kernel: tuple[int, int], strides: tuple[int, int],
                     dilation: tuple[int, int]) -> te.Tensor:
    """Padded NHWC input ``xp`` and NHWC output gradient ``gy`` -> the OIHW weight gradient."""
    n, oh, ow, o = (int(d) for d in gy.shape)
    c = int(xp.shape[3])
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilation
    rn = te.reduce_axis((0, n), name="n")
    ri = te.reduce_axis((0, oh), name="i")
    rj = te.reduce_axis((0, ow), name="j")
    return te.compute(
        (o, c, kh, kw),
        lambda oc, ic, a, b: te.sum(xp[rn, ri * sh + a * dh, rj * sw + b * dw, ic] * gy[rn, ri, rj, oc],
                                    axis=[rn, ri, rj]),
        name=WGRAD)


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """The per-tap weight-gradient chain ending in ``var = call`` -> one channels-last kernel."""
    chain = match_chain(rw, var, call)
    if chain is None:
        return False
    bb = rw.bb
    data = rw.nhwc(chain.x)
    top, bottom, left, right = chain.padding
    if top or bottom or left or right:
        data = bb.emit(relax.op.nn.pad(data, [0, 0, top, bottom, left, right, 0, 0]))
    product = bb.call_te(weight_grad_nhwc, data, rw.nhwc(chain.gy), chain.kernel, chain.strides, chain.dilation,
                         primfunc_name_hint=WGRAD)
    kernel = product.args[0]
    bb.update_func(kernel, bb.get()[kernel].with_attr("op_pattern", OPAQUE))
    rw.set_nchw(var, bb.emit(product))
    return True


# ---------------------------------------------------------------- schedule

@dataclass(frozen=True)
class WeightGradPlan:
    c_block: int  # input channels per tile (broadcast values)
    o_block: int  # output channels per tile (the vector axis)
    tap_block: int = 1  # neighbouring taps of a kernel row per tile (tiles of few channels)


def _divisor(extent: int, limit: int, multiple: int = 1) -> int:
    return next((d for d in range(min(extent, limit), 0, -1) if extent % d == 0 and d % multiple == 0), 1)


def plan_weight_grad(cpu: CpuInfo, c: int, o: int, kw: int, dtype: str) -> WeightGradPlan:
    """The tile with the most multiply-adds per load whose accumulators fit the register file.

    Where few channels leave registers free (LeNet's first layer: 1 input, 6 outputs), the tile
    also spans neighbouring taps of a kernel row: they share the output gradient's vectors.
    """
    lanes = cpu.lanes(dtype)
    if o < lanes or o % lanes:
        o_choices = [_divisor(o, 2 * lanes)] if o >= lanes else [o]
    else:
        # wide tiles (4 vectors x 4 channels) measured slower than 2 x 8 on AVX-512 for 64-512 channels:
        # they stream the output gradient twice as often; few input channels leave room for them
        widths = (4, 3, 2, 1) if c < 8 else (2, 1)
        o_choices = [v * lanes for v in widths if (o // lanes) % v == 0]
    best, best_score = None, -1.0
    for o_block in o_choices:
        vectors = -(-o_block // lanes)
        budget = max(1, (cpu.vector_registers - vectors - 2) // vectors)
        c_block = _divisor(c, min(12, budget))
        tap_block = _divisor(kw, max(1, budget // c_block))
        rows = tap_block * c_block
        score = rows * vectors / (rows + vectors)
        if score > best_score + 1e-9:
            best, best_score = WeightGradPlan(c_block, o_block, tap_block), score
    return best


def matches(sch: Schedule) -> bool:
    return common.find_block(sch, WGRAD) is not None


def _operand_bytes(sch: Schedule, block) -> int:
    """Bytes of the kernel's inputs (the padded input and the output gradient)."""
    total = 0
    for region in sch.get(block).reads:
        count = 1
        for dim in region.source.shape:
            count *= int(dim)
        total += count * tvm.DataType(region.source.dtype).bits // 8
    return total


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    block = common.find_block(sch, WGRAD)
    if len(common.root_blocks(sch)) != 1:
        raise common.NotScheduled("the weight-gradient kernel holds other computations")
    kh, kw = (common.extent(sch, loop) for loop in sch.get_loops(block)[2:4])
    if kh * kw > 1 and _operand_bytes(sch, block) > CHUNKED_MIN_L2S * cpu.l2_bytes:
        _schedule_chunked(sch, block, cpu)
    else:
        _schedule_streaming(sch, block, cpu)


# Operands this many times one core's L2 take the chunked form. On znver5 (1 MB L2), kernel alone:
# ResNet-18's stem (8x230x230x3 input, 8x112x112x64 gradient, 31 MB) 62 -> 18 ms, its first strided
# 3x3 layer (10 MB) 12 -> 7 ms, 256 channels at 14x14 (3.7 MB) 20 -> 17 ms; the 512-channel layers
# (2.1 MB) stay in cache and ran 10-15% slower chunked.
CHUNKED_MIN_L2S = 3


def _schedule_streaming(sch: Schedule, block, cpu: CpuInfo) -> None:
    """Each register tile (taps x input x output channels) streams every batch position."""
    stmt = sch.get(block)
    dtype = str(stmt.writes[0].source.dtype)
    o_loop, c_loop, a_loop, b_loop, n_loop, i_loop, j_loop = sch.get_loops(block)
    kw, c, o = (common.extent(sch, loop) for loop in (b_loop, c_loop, o_loop))
    plan = plan_weight_grad(cpu, c, o, kw, dtype)
    b_outer, b_inner = sch.split(b_loop, [None, plan.tap_block])
    c_outer, c_inner = sch.split(c_loop, [None, plan.c_block])
    o_outer, o_inner = sch.split(o_loop, [None, plan.o_block])
    sch.reorder(a_loop, b_outer, c_outer, o_outer, n_loop, i_loop, j_loop, b_inner, c_inner, o_inner)
    # the tile sits at an unfused loop: under a fused one its buffer would not compact to the tile
    tile = sch.cache_write(block, 0, "global")  # a register tile: see common.accumulate_in_registers
    sch.transform_layout(block, ("write", 0), lambda oc, ic, a, b: (a, b, ic, oc))  # vectors along O
    sch.reverse_compute_at(tile, o_outer, preserve_unit_loops=True)
    task = sch.fuse(a_loop, b_outer, c_outer)
    sch.unroll(b_inner)
    sch.unroll(c_inner)
    sch.vectorize(o_inner)
    common.parallel_if_worth(sch, task, common.block_work(sch, block), cpu)
    sch.decompose_reduction(block, n_loop)


def _schedule_chunked(sch: Schedule, block, cpu: CpuInfo) -> None:
    """Batch positions in chunks of output rows whose operands fit half of L2, every tap of a task's
    kernel row reusing a chunk before the next is read.

    A task (kernel row x input x output channel tile) keeps its sums over the chunks in a buffer laid
    out (tap, C, O); per chunk and tap group a register tile (``rfactor`` over the chunks) sums the
    chunk's positions and is added to it. The streaming form reads the whole output gradient once per
    tap and input-channel tile, from memory where it exceeds the caches.
    """
    stmt = sch.get(block)
    dtype = str(stmt.writes[0].source.dtype)
    o_loop, c_loop, a_loop, b_loop, n_loop, i_loop, j_loop = sch.get_loops(block)
    kw, c, o, oh, ow = (common.extent(sch, loop) for loop in (b_loop, c_loop, o_loop, i_loop, j_loop))
    plan = plan_weight_grad(cpu, c, o, kw, dtype)
    row_bytes = ow * (plan.o_block * tvm.DataType(dtype).bits // 8 + 64)  # + the input's cache line per position
    rows = _divisor(oh, max(1, (cpu.l2_bytes // 2) // row_bytes))
    i_outer, i_inner = sch.split(i_loop, [None, rows])
    b_outer, b_inner = sch.split(b_loop, [None, plan.tap_block])
    c_outer, c_inner = sch.split(c_loop, [None, plan.c_block])
    o_outer, o_inner = sch.split(o_loop, [None, plan.o_block])
    sch.reorder(a_loop, c_outer, o_outer, n_loop, i_outer, b_outer, i_inner, j_loop, b_inner, c_inner, o_inner)
    task = sch.fuse(a_loop, c_outer, o_outer)
    chunk = sch.fuse(n_loop, i_outer)
    partial = sch.rfactor(chunk, factor_axis=0)  # partial[chunk, o, c, a, b]: one chunk's sums
    sch.transform_layout(partial, ("write", 0), lambda ch, oc, ic, a, b: (ch, a, b, ic, oc))
    sch.compute_at(partial, sch.get_loops(block)[2], preserve_unit_loops=True)
    # positions outside the tile: (i, j, b, c, o) in the partial's iter order (ch, o, c, a, b, i, j)
    tiled = _loops_binding(sch, partial, sch.get_loops(partial)[3:])
    order = [tiled[k] for k in (5, 6, 4, 2, 1) if tiled[k] is not None]
    sch.reorder(*order)
    total = sch.cache_write(block, 0, "global")
    sch.transform_layout(block, ("write", 0), lambda oc, ic, a, b: (a, b, ic, oc))
    sch.reverse_compute_at(total, task, preserve_unit_loops=True)
    lanes = cpu.lanes(dtype)
    sch.unroll(b_inner)
    sch.unroll(c_inner)
    common.vectorize_registers(sch, block, o_inner, lanes)
    for k in (4, 2):
        if tiled[k] is not None:
            sch.unroll(tiled[k])
    if tiled[1] is not None:
        common.vectorize_registers(sch, partial, tiled[1], lanes)
    common.parallel_if_worth(sch, task, common.block_work(sch, partial), cpu)
    sch.decompose_reduction(block, chunk)
    sch.decompose_reduction(partial, order[0])


def _loops_binding(sch: Schedule, block, loops) -> list:
    """For each iter var of ``block``, the one of ``loops`` its binding uses (None: none of them)."""
    realize = sch.get(loops[-1]).body
    while not isinstance(realize, SBlockRealize):
        realize = realize.body
    found = []
    for value in realize.iter_values:
        used = [loop for loop in loops if common.uses_var(value, sch.get(loop).loop_var)]
        found.append(used[-1] if used else None)
    return found
