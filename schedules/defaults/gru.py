"""GRU steps as one kernel each: the recurrent product and the whole gate update fused.

``relay_frontend.ops.rnn`` unrolls a GRU layer into, per step, ``gh = h @ W_hh.T + b_hh``, two
3-way splits and the gate arithmetic

    r = sigmoid(i_r + h_r);  z = sigmoid(i_z + h_z);  n = tanh(i_n + r * h_n);  h' = n + z * (h - n)

(a dozen kernels, most of them tiny element-wise ones). Here the step becomes ONE kernel over an
interleaved packed weight ``[H / hb, K, 3, hb]``: a task owns ``hb`` hidden units, accumulates
their three gates in registers and computes ``h'`` for them (the LSTM step's treatment, see
``recurrent``). The per-step input projection is read in place from the whole-sequence projection.

The pattern is matched exactly; anything else is left to the generic rules.
"""
from __future__ import annotations

from dataclasses import dataclass

from tvm import relax, te, tirx
from tvm.s_tir import Schedule

from . import common, fastmath
from .cpu import CpuInfo
from .layout import Rewriter, dtype_of, static_shape
from .recurrent import bindings_and_users, is_call, step_source

GATES = "aotnn_gru_gates"
HIDDEN = "aotnn_gru_h"
_GATE_COUNT = 3
# registers a hidden block's product needs besides its accumulators: the broadcast h value, a weight load
_SPARE_REGISTERS = 2


@dataclass
class GruStep:
    gates_in: relax.Expr         # (B, 3H), or (1, B, 3H) with ``step`` 0
    step: int | None
    h: relax.Expr
    weight: relax.Var            # W_hh (3H, H), a parameter
    bias: relax.Expr | None      # b_hh (3H,)


def _split_items(bound, items) -> relax.Var | None:
    """The split whose items 0, 1, 2 (in order) are ``items``, if it is a 3-way split on axis 1."""
    sources = []
    for index, item in enumerate(items):
        value = bound.get(item) if isinstance(item, relax.Var) else None
        if not isinstance(value, relax.TupleGetItem) or value.index != index:
            return None
        sources.append(value.tuple_value)
    if not all(s.same_as(sources[0]) for s in sources):
        return None
    split = bound.get(sources[0]) if isinstance(sources[0], relax.Var) else None
    if not is_call(split, "relax.split") or int(split.attrs.axis) != 1:
        return None
    sections = split.attrs.indices_or_sections
    if not isinstance(sections, (int, tirx.IntImm)) or int(sections) != _GATE_COUNT:
        return None
    return split.args[0]


def _recurrent_product(bound, gh, h, hidden):
    """(W_hh, b_hh or None) when ``gh`` is ``h @ W_hh.T [+ b_hh]`` with W_hh a (3H, H) parameter."""
    value = bound.get(gh) if isinstance(gh, relax.Var) else None
    product, bias = gh, None
    if is_call(value, "relax.add"):
        product, bias = value.args
        value = bound.get(product) if isinstance(product, relax.Var) else None
    if not is_call(value, "relax.matmul") or not value.args[0].same_as(h):
        return None
    transpose = bound.get(value.args[1]) if isinstance(value.args[1], relax.Var) else None
    if not is_call(transpose, "relax.permute_dims"):
        return None
    weight = transpose.args[0]
    if not isinstance(weight, relax.Var) or weight in bound or static_shape(weight) != (_GATE_COUNT * hidden, hidden):
        return None
    if bias is not None and static_shape(bias) != (_GATE_COUNT * hidden,):
        return None
    return weight, bias


def _match(bound, value) -> GruStep | None:
    """The GRU step whose ``h'`` is ``value`` = ``n + z * (h - n)``, or None."""
    if not is_call(value, "relax.add"):
        return None
    new, blend = value.args

    def call_of(var, name):
        found = bound.get(var) if isinstance(var, relax.Var) else None
        return found if is_call(found, name) else None

    def operands(var, outer, inner):
        """The operands of ``inner`` under the unary ``outer`` (``outer(inner(a, b))``), or None."""
        unary = call_of(var, outer)
        call = call_of(unary.args[0], inner) if unary is not None else None
        return tuple(call.args) if call is not None else None

    mul = call_of(blend, "relax.multiply")
    if mul is None:
        return None
    update, difference = mul.args
    sub = call_of(difference, "relax.subtract")
    if sub is None or not sub.args[1].same_as(new):
        return None
    h = sub.args[0]
    new_sum, update_sum = operands(new, "relax.tanh", "relax.add"), operands(update, "relax.sigmoid", "relax.add")
    if new_sum is None or update_sum is None:
        return None
    i_n, reset_product = new_sum
    reset_mul = call_of(reset_product, "relax.multiply")
    if reset_mul is None:
        return None
    reset, h_n = reset_mul.args
    reset_sum = operands(reset, "relax.sigmoid", "relax.add")
    if reset_sum is None:
        return None
    (i_r, h_r), (i_z, h_z) = reset_sum, update_sum
    gates_in = _split_items(bound, (i_r, i_z, i_n))
    gh = _split_items(bound, (h_r, h_z, h_n))
    h_shape = static_shape(h)
    if gates_in is None or gh is None or h_shape is None or len(h_shape) != 2 or dtype_of(h) != "float32":
        return None
    batch, hidden = h_shape
    shape = (batch, _GATE_COUNT * hidden)
    if static_shape(gates_in) != shape or dtype_of(gates_in) != "float32":
        return None
    product = _recurrent_product(bound, gh, h, hidden)
    if product is None:
        return None
    source, step = step_source(bound, gates_in, shape)
    return GruStep(source, step, h, *product)


def _find_steps(func: relax.Function) -> dict[relax.Var, GruStep]:
    """GRU steps in ``func``, keyed by their ``h'`` variables."""
    bound, _ = bindings_and_users(func)
    steps = {}
    for var, value in bound.items():
        record = _match(bound, value)
        if record is not None:
            steps[var] = record
    return steps


# ---------------------------------------------------------------- TE computes

def pack_weight(w: te.Tensor, hidden_block: int) -> te.Tensor:
    """W_hh (3H, K) -> (H / hb, K, 3, hb): a hidden block's three gates side by side."""
    rows, k = (int(d) for d in w.shape)
    hidden = rows // _GATE_COUNT
    return te.compute((hidden // hidden_block, k, _GATE_COUNT, hidden_block),
                      lambda o, kk, q, l: w[q * hidden + o * hidden_block + l, kk], name="aotnn_pack_gru_weight")


def gru_step(gates_in: te.Tensor, h: te.Tensor, wp: te.Tensor, *bias, step: int | None) -> te.Tensor:
    """h' of one GRU step from the input projection, the state and the packed W_hh (+ b_hh)."""
    batch, k = (int(d) for d in h.shape)
    blocks, _, _, hidden_block = (int(d) for d in wp.shape)
    hidden = blocks * hidden_block
    rk = te.reduce_axis((0, k), "k")
    acc = te.compute((batch, _GATE_COUNT, hidden),
                     lambda b, q, j: te.sum(h[b, rk] * wp[j // hidden_block, rk, q, j % hidden_block], axis=[rk]),
                     name=GATES, attrs={"aotnn_tile_h": hidden_block})

    def projected(q: int, b, j):
        return gates_in[step, b, q * hidden + j] if step is not None else gates_in[b, q * hidden + j]

    def recurrent(q: int, b, j):
        return acc[b, q, j] + bias[0][q * hidden + j] if bias else acc[b, q, j]

    reset = fastmath.sigmoid(te.compute((batch, hidden), lambda b, j: projected(0, b, j) + recurrent(0, b, j),
                                        name="aotnn_gru_reset_in"))
    update = fastmath.sigmoid(te.compute((batch, hidden), lambda b, j: projected(1, b, j) + recurrent(1, b, j),
                                         name="aotnn_gru_update_in"))
    new = fastmath.tanh(te.compute((batch, hidden),
                                   lambda b, j: projected(2, b, j) + reset[b, j] * recurrent(2, b, j),
                                   name="aotnn_gru_new_in"))
    # (1 - z) * n + z * h: ``n`` appears once, so inlining it does not repeat its tanh
    return te.compute((batch, hidden), lambda b, j: (1.0 - update[b, j]) * new[b, j] + update[b, j] * h[b, j],
                      name=HIDDEN)


def hidden_block_for(hidden: int, cpu: CpuInfo) -> int | None:
    """Hidden units per task: two vectors' worth if the three gates' accumulators fit the registers."""
    lanes = cpu.lanes("float32")
    for vectors in (2, 1):
        fits = _GATE_COUNT * vectors + _SPARE_REGISTERS <= cpu.vector_registers
        if fits and hidden % (vectors * lanes) == 0:
            return vectors * lanes
    return None


# ---------------------------------------------------------------- the Relax rewrite

def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    steps = rw.memo.get("gru_steps")
    if steps is None:
        steps = rw.memo["gru_steps"] = _find_steps(rw.func)
    record = steps.get(var)
    if record is None:
        return False
    hidden_block = hidden_block_for(static_shape(record.h)[-1], rw.cpu)
    if hidden_block is None:
        return False
    bb = rw.bb
    packed = rw.emit_once(("gru", record.weight, hidden_block), lambda: bb.call_te(
        pack_weight, rw.nchw(record.weight), hidden_block, primfunc_name_hint="aotnn_pack_gru_weight"))
    extra = [rw.nchw(record.bias)] if record.bias is not None else []
    rw.set_nchw(var, bb.emit(bb.call_te(gru_step, rw.nchw(record.gates_in), rw.nchw(record.h), packed, *extra,
                                        step=record.step, primfunc_name_hint="aotnn_gru_step")))
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, GATES) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    gates = common.find_block(sch, GATES)
    hidden = common.find_block(sch, HIDDEN)
    if hidden is None:
        raise common.NotScheduled("GRU step without its state update")
    work = common.block_work(sch, gates)
    hidden_block = int(sch.get(gates).annotations["aotnn_tile_h"])
    common.inline_producers(sch, gates)
    for block in common.root_blocks(sch):  # the gate arithmetic, into h'
        if common.block_name(sch, block) not in (GATES, HIDDEN):
            sch.compute_inline(block)
    # a task owns a block of hidden units: their three gates, then their h'
    b, j = sch.get_loops(hidden)
    j_outer, j_inner = sch.split(j, [None, hidden_block])
    sch.reorder(j_outer, b, j_inner)
    sch.compute_at(gates, b, preserve_unit_loops=True)
    common.accumulate_in_registers(sch, gates)
    *_, q, lane, k = sch.get_loops(gates)
    sch.reorder(k, q, lane)
    sch.unroll(q)
    sch.vectorize(lane)
    sch.vectorize(sch.get_loops(hidden)[-1])
    common.parallel_if_worth(sch, j_outer, work, cpu)
    sch.decompose_reduction(gates, k)
