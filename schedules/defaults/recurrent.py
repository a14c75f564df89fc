"""LSTM steps as one kernel each: the recurrent product and the whole cell update fused.

``relay_frontend.ops.rnn`` unrolls a layer into, per step, ``gates = gi + h @ W_hh.T + b_hh``, a
4-way split and the cell arithmetic: five kernels and four launches of tiny element-wise work. Here
the step becomes ONE kernel over an interleaved packed weight ``[H / hb, K, 4, hb]``: a task owns
``hb`` hidden units, accumulates their four gates in registers and updates ``c`` and ``h`` for
them, so the step needs no split and no intermediate gates tensor. The per-step input projection
is read in place from the whole-sequence projection.

The pattern is matched exactly; anything else is left to the generic rules.
"""
from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax, te, tirx
from tvm.s_tir import Schedule

from . import common, fastmath
from .cpu import CpuInfo
from .layout import Rewriter, dtype_of, static_shape

GATES = "aotnn_lstm_gates"
CELL = "aotnn_lstm_c"
HIDDEN = "aotnn_lstm_h"


@dataclass
class LstmStep:
    gates_in: relax.Expr         # (B, 4H), or (1, B, 4H) with ``step`` 0
    step: int | None
    h: relax.Expr
    c: relax.Expr
    weight: relax.Var            # W_hh (4H, H), a parameter
    bias: relax.Expr | None      # b_hh (4H,)
    c_new: relax.Var
    h_new: relax.Var


def is_call(value, name: str) -> bool:
    """Whether ``value`` is a call of the Relax operator ``name``."""
    return isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) and value.op.name == name


def bindings_and_users(func: relax.Function) -> tuple[dict[relax.Var, relax.Expr], dict[relax.Var, list[relax.Var]]]:
    """({variable: its bound value}, {variable: the variables whose value uses it}) over ``func``'s blocks."""
    bound: dict[relax.Var, relax.Expr] = {}
    for block in func.body.blocks:
        for binding in block.bindings:
            if isinstance(binding, relax.VarBinding):
                bound[binding.var] = binding.value
    users: dict[relax.Var, list[relax.Var]] = {}
    for var, value in bound.items():
        if isinstance(value, relax.Call):
            for arg in value.args:
                if isinstance(arg, relax.Var):
                    users.setdefault(arg, []).append(var)
        elif isinstance(value, relax.TupleGetItem) and isinstance(value.tuple_value, relax.Var):
            users.setdefault(value.tuple_value, []).append(var)
    return bound, users


def _find_steps(func: relax.Function) -> dict[relax.Var, LstmStep]:
    """LSTM steps in ``func``, keyed by both their ``c_new`` and ``h_new`` variables."""
    bound, users = bindings_and_users(func)

    def value_of(var, name):
        value = bound.get(var) if isinstance(var, relax.Var) else None
        return value if is_call(value, name) else None

    def unary_of(var, name):
        value = value_of(var, name)
        return value.args[0] if value is not None else None

    steps: dict[relax.Var, LstmStep] = {}
    for split_var, split in bound.items():
        if not is_call(split, "relax.split") or int(split.attrs.axis) != 1:
            continue
        shape = static_shape(split.args[0])
        if shape is None or len(shape) != 2 or shape[1] % 4 or dtype_of(split.args[0]) != "float32":
            continue
        sections = split.attrs.indices_or_sections
        if not isinstance(sections, (int, tirx.IntImm)) or int(sections) != 4:
            continue
        hidden = shape[1] // 4
        items = {bound[u].index: u for u in users.get(split_var, []) if isinstance(bound[u], relax.TupleGetItem)}
        if sorted(items) != [0, 1, 2, 3]:
            continue
        # gates = gi + (h @ W.T [+ b])
        gates = bound.get(split.args[0])
        if not is_call(gates, "relax.add"):
            continue
        recurrent = None
        for mine, other in ((gates.args[0], gates.args[1]), (gates.args[1], gates.args[0])):
            product, bias = mine, None
            if value_of(mine, "relax.add") is not None:
                product, bias = value_of(mine, "relax.add").args
            matmul = value_of(product, "relax.matmul")
            if matmul is None:
                continue
            transpose = value_of(matmul.args[1], "relax.permute_dims")
            if transpose is None or not isinstance(transpose.args[0], relax.Var) or transpose.args[0] in bound:
                continue
            if static_shape(transpose.args[0]) != (4 * hidden, static_shape(matmul.args[0])[-1]):
                continue
            if bias is not None and static_shape(bias) != (4 * hidden,):
                continue
            recurrent = (matmul.args[0], transpose.args[0], bias, other)
            break
        if recurrent is None:
            continue
        h, weight, bias, gates_in = recurrent
        i, f, g, o = (items[k] for k in range(4))
        # c' = sigmoid(f) * c + sigmoid(i) * tanh(g);  h' = sigmoid(o) * tanh(c')
        found = None
        for user in users.get(f, []):
            sig_f = user if value_of(user, "relax.sigmoid") is not None else None
            for product in users.get(sig_f, []) if sig_f is not None else []:
                mul = value_of(product, "relax.multiply")
                if mul is None:
                    continue
                c = mul.args[1] if mul.args[0].same_as(sig_f) else mul.args[0]
                for c_new in users.get(product, []):
                    add = value_of(c_new, "relax.add")
                    if add is None:
                        continue
                    rest = add.args[1] if add.args[0].same_as(product) else add.args[0]
                    mul2 = value_of(rest, "relax.multiply")
                    if mul2 is None:
                        continue
                    a, b = mul2.args
                    if not ((unary_of(a, "relax.sigmoid") is not None and unary_of(a, "relax.sigmoid").same_as(i)
                             and unary_of(b, "relax.tanh") is not None and unary_of(b, "relax.tanh").same_as(g)) or
                            (unary_of(b, "relax.sigmoid") is not None and unary_of(b, "relax.sigmoid").same_as(i)
                             and unary_of(a, "relax.tanh") is not None and unary_of(a, "relax.tanh").same_as(g))):
                        continue
                    found = (c, c_new)
        if found is None:
            continue
        c, c_new = found
        h_new = None
        for tanh_c in users.get(c_new, []):
            if unary_of(tanh_c, "relax.tanh") is None:
                continue
            for candidate in users.get(tanh_c, []):
                mul = value_of(candidate, "relax.multiply")
                if mul is None:
                    continue
                other = mul.args[1] if mul.args[0].same_as(tanh_c) else mul.args[0]
                if unary_of(other, "relax.sigmoid") is not None and unary_of(other, "relax.sigmoid").same_as(o):
                    h_new = candidate
        if h_new is None or static_shape(h) != static_shape(c) or static_shape(h)[-1] != hidden:
            continue
        source, step = step_source(bound, gates_in, shape)
        record = LstmStep(source, step, h, c, weight, bias, c_new, h_new)
        steps[c_new] = record
        steps[h_new] = record
    return steps


def step_source(bound, gates_in, shape):
    """(the (1, B, 4H) step slice that ``gates_in`` reshapes, 0), or (gates_in, None).

    Reading the slice in place saves a copy per step, and keeps every step's kernel the same
    function (a step index baked in would make one kernel per step).
    """
    reshape = bound.get(gates_in) if isinstance(gates_in, relax.Var) else None
    if is_call(reshape, "relax.reshape") and isinstance(reshape.args[0], relax.Var):
        source = reshape.args[0]
        if static_shape(source) == (1, *shape):
            return source, 0
    return gates_in, None


# ---------------------------------------------------------------- TE computes

def pack_weight(w: te.Tensor, hidden_block: int) -> te.Tensor:
    """W_hh (4H, K) -> (H / hb, K, 4, hb): a hidden block's four gates side by side."""
    rows, k = (int(d) for d in w.shape)
    hidden = rows // 4
    return te.compute((hidden // hidden_block, k, 4, hidden_block),
                      lambda o, kk, q, l: w[q * hidden + o * hidden_block + l, kk], name="aotnn_pack_lstm_weight")


def lstm_step(gates_in: te.Tensor, h: te.Tensor, c: te.Tensor, wp: te.Tensor, *bias, step: int | None):
    batch, k = (int(d) for d in h.shape)
    blocks, _, _, hidden_block = (int(d) for d in wp.shape)
    hidden = blocks * hidden_block
    rk = te.reduce_axis((0, k), "k")
    acc = te.compute((batch, 4, hidden),
                     lambda b, q, j: te.sum(h[b, rk] * wp[j // hidden_block, rk, q, j % hidden_block], axis=[rk]),
                     name=GATES, attrs={"aotnn_tile_h": hidden_block})

    def gate_tensor(q: int) -> te.Tensor:
        def element(b, j):
            value = acc[b, q, j]
            value = value + (gates_in[step, b, q * hidden + j] if step is not None else gates_in[b, q * hidden + j])
            return value + bias[0][q * hidden + j] if bias else value
        return te.compute((batch, hidden), element, name=f"aotnn_lstm_gate{q}")

    i, f, g, o = (gate_tensor(q) for q in range(4))
    # vectorizable transcendentals (these stages are inlined into the two below)
    sig_i, sig_f, sig_o, tanh_g = fastmath.sigmoid(i), fastmath.sigmoid(f), fastmath.sigmoid(o), fastmath.tanh(g)
    cell = te.compute((batch, hidden), lambda b, j: sig_f[b, j] * c[b, j] + sig_i[b, j] * tanh_g[b, j],
                      name="aotnn_lstm_cell")
    tanh_c = fastmath.tanh(cell)
    # h' recomputes c' (``cell`` is inlined into both) instead of reading it: both then depend on the
    # gates only, so that the schedule can put them under one loop nest right after the gates
    c_new = te.compute((batch, hidden), lambda b, j: cell[b, j], name=CELL)
    h_new = te.compute((batch, hidden), lambda b, j: sig_o[b, j] * tanh_c[b, j], name=HIDDEN)
    return [h_new, c_new]


# ---------------------------------------------------------------- the Relax rewrite

def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    steps = rw.memo.get("lstm_steps")
    if steps is None:
        steps = rw.memo["lstm_steps"] = _find_steps(rw.func)
    record = steps.get(var)
    if record is None:
        return False
    key = ("lstm_step", record.c_new)
    if key not in rw.memo:  # first of the pair (c' comes before h'): emit the fused step
        lanes = rw.cpu.lanes("float32")
        hidden = static_shape(record.h)[-1]
        hidden_block = next((b for b in (2 * lanes, lanes) if hidden % b == 0), None)
        if hidden_block is None:
            return False
        bb = rw.bb
        packed = rw.emit_once(("lstm", record.weight, hidden_block), lambda: bb.call_te(
            pack_weight, rw.nchw(record.weight), hidden_block, primfunc_name_hint="aotnn_pack_lstm_weight"))
        extra = [rw.nchw(record.bias)] if record.bias is not None else []
        rw.memo[key] = bb.emit(bb.call_te(lstm_step, rw.nchw(record.gates_in), rw.nchw(record.h),
                                          rw.nchw(record.c), packed, *extra, step=record.step,
                                          primfunc_name_hint="aotnn_lstm_step"))
    result = rw.memo[key]
    rw.set_nchw(var, rw.bb.emit(relax.TupleGetItem(result, 0 if var.same_as(record.h_new) else 1)))
    return True


# ---------------------------------------------------------------- schedule

def matches(sch: Schedule) -> bool:
    return common.find_block(sch, GATES) is not None


def schedule(sch: Schedule, cpu: CpuInfo) -> None:
    gates = common.find_block(sch, GATES)
    cell = common.find_block(sch, CELL)
    hidden = common.find_block(sch, HIDDEN)
    if cell is None or hidden is None:
        raise common.NotScheduled("LSTM step without its cell update")
    work = common.block_work(sch, gates)
    hidden_block = int(sch.get(gates).annotations["aotnn_tile_h"])
    common.inline_producers(sch, gates)
    for block in common.root_blocks(sch):  # the gate arithmetic, into c' and h'
        if common.block_name(sch, block) not in (GATES, CELL, HIDDEN):
            sch.compute_inline(block)
    # a task owns a block of hidden units: their four gates, then their c and h
    nests = []
    for block in (cell, hidden):
        b, j = sch.get_loops(block)
        j_outer, j_inner = sch.split(j, [None, hidden_block])
        sch.reorder(j_outer, b, j_inner)
        nests.append((j_outer, b, j_inner))
    j_outer = sch.merge(nests[0][0], nests[1][0])
    b = sch.merge(*(sch.get_loops(block)[1] for block in (cell, hidden)))
    sch.compute_at(gates, b, preserve_unit_loops=True)
    common.accumulate_in_registers(sch, gates)
    *_, q, lane, k = sch.get_loops(gates)
    sch.reorder(k, q, lane)
    sch.unroll(q)
    sch.vectorize(lane)
    for block in (cell, hidden):
        sch.vectorize(sch.get_loops(block)[-1])
    common.parallel_if_worth(sch, j_outer, work, cpu)
    sch.decompose_reduction(gates, k)
