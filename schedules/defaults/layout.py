"""Relax rewrite before legalization: channels-last convolution networks and packed weights.

Convolutions become NHWC kernels over packed weights (``conv2d.rewrite``), dense layers
GEMMs over packed weights (``dense.rewrite``). The NHWC form of a tensor (its *twin*) flows
through element-wise ops, pooling and channel-preserving reductions, so that a network pays
for the layout change once at its input and once where an op needs NCHW again. Weight packing
reads parameters only, so the build runs it once per parameter change, not per call.

The rewrite is all-or-nothing: anything unexpected leaves the module as it was.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable

import tvm
from tvm import relax, te

from .cpu import CpuInfo

_LOG = logging.getLogger(__name__)

NHWC_FROM_NCHW = (0, 2, 3, 1)
NCHW_FROM_NHWC = (0, 3, 1, 2)
NCHW_TO_NHWC_AXIS = {0: 0, 1: 3, 2: 1, 3: 2}

UNARY = {
    "relax.nn.relu", "relax.nn.silu", "relax.nn.gelu", "relax.nn.gelu_tanh", "relax.nn.leakyrelu",
    "relax.nn.softplus", "relax.sigmoid", "relax.tanh", "relax.exp", "relax.log", "relax.sqrt",
    "relax.rsqrt", "relax.abs", "relax.negative", "relax.square", "relax.erf", "relax.astype",
    "relax.clip", "relax.floor", "relax.ceil", "relax.round", "relax.sign", "relax.sin", "relax.cos",
}
BINARY = {
    "relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.maximum", "relax.minimum",
    "relax.power", "relax.floor_divide",
}
# selects and comparisons go channels-last only where no full-size operand is NCHW: relu's gradient
# (where(x > 0, dy, 0)) then keeps a backward pass channels-last, while LeNet's max-pool gradient
# (comparisons of NCHW window slices) stays in NCHW instead of transposing each slice
SELECTS = {"relax.where", "relax.greater", "relax.less", "relax.greater_equal", "relax.less_equal",
           "relax.equal", "relax.not_equal"}
POOL2D = {"relax.nn.max_pool2d", "relax.nn.avg_pool2d"}
REDUCE = {"relax.mean", "relax.sum", "relax.max", "relax.min"}


TEMP_NAME = "__aotnn_channels_last_main"


class Unsupported(Exception):
    """The function holds something the rewrite does not handle: keep the original."""


def static_shape(expr: relax.Expr) -> tuple[int, ...] | None:
    sinfo = expr.ty
    if not isinstance(sinfo, relax.TensorType) or sinfo.shape is None:
        return None
    try:
        return tuple(int(d) for d in sinfo.shape.values)
    except (TypeError, AttributeError):
        return None


def dtype_of(expr: relax.Expr) -> str:
    return str(expr.ty.dtype)


# attribute of ``main``: positions of the parameters a training step updates (left in their layout)
UPDATED_PARAMS_ATTR = "aotnn_updated_params"


class Rewriter:
    """Rebuilds ``main`` binding by binding; op-class rules (``rules``) may emit replacements.

    A rule is ``rule(rewriter, var, call) -> bool``: it emits what replaces ``var = call`` (calling
    :meth:`set_nchw` or :meth:`set_nhwc`) and returns True, or returns False to leave it alone.
    """

    def __init__(self, mod: tvm.IRModule, cpu: CpuInfo, rules: list[Callable]):
        self.bb = relax.BlockBuilder(mod)
        self.cpu = cpu
        self.rules = rules
        self.bound: dict[relax.Var, relax.Expr] = {}   # old var -> its old value
        self._nchw: dict[relax.Var, relax.Expr] = {}   # old var -> new expr, original layout
        self._nhwc: dict[relax.Var, relax.Expr] = {}   # old var -> new var, channels-last twin
        self.changed = False
        self.memo: dict = {}                           # rule-specific: e.g. one packed copy per weight
        self._values: dict[relax.Var, relax.Expr] = {}  # every binding of the function
        self._users: dict[relax.Var, list] = {}        # var -> binding vars using it (None: the result)
        self._params: set = set()
        self._updated: set = set()                      # parameters a training step changes
        self._param_only: dict[relax.Var, bool] = {}
        self._deferred: dict[relax.Var, Callable[[], None]] = {}
        self._dropped: set = set()

    # -- values in either layout
    def has_twin(self, old) -> bool:
        return isinstance(old, relax.Var) and old in self._nhwc

    def nchw(self, old: relax.Expr) -> relax.Expr:
        """The new expression of ``old`` in its original layout (materialized from the twin if needed)."""
        if isinstance(old, relax.Var):
            if old in self._nchw:
                return self._nchw[old]
            if old in self._nhwc:
                twin = self._nhwc[old]
                n, c, h, w = static_shape(old)
                if h * w == 1 or c == 1:  # same element order: a reshape, not a transpose
                    value = self.bb.emit(relax.op.reshape(twin, (n, c, h, w)))
                else:
                    value = self.bb.emit(relax.op.permute_dims(twin, NCHW_FROM_NHWC))
                self._nchw[old] = value
                return value
            return old  # a function parameter
        return self.substitute(old)

    def nhwc(self, old: relax.Expr) -> relax.Expr:
        """The channels-last form of a 4-D ``old`` (transposed now if it has no twin)."""
        if self.has_twin(old):
            return self._nhwc[old]
        value = self.bb.emit(relax.op.permute_dims(self.nchw(old), NHWC_FROM_NCHW))
        if isinstance(old, relax.Var):
            self._nhwc[old] = value
        return value

    def emit_once(self, key, make: Callable[[], relax.Expr]) -> relax.Var:
        """Emit ``make()`` the first time ``key`` is seen; later calls return that variable."""
        if key not in self.memo:
            self.memo[key] = self.bb.emit(make())
        return self.memo[key]

    # -- looking ahead: for rules that rewrite a binding together with the ones that use it
    def users(self, var: relax.Var) -> list:
        """The variables of the bindings that use ``var`` (None stands for the function's result)."""
        return self._users.get(var, [])

    def value_of(self, var: relax.Var | None) -> relax.Expr | None:
        """The value bound to ``var`` (None for a parameter or the function's result)."""
        return None if var is None else self._values.get(var)

    def param_only(self, expr: relax.Expr) -> bool:
        """Whether ``expr`` is computed from the function's parameters and constants alone."""
        if isinstance(expr, relax.Var):
            return expr in self._params or self._param_only.get(expr, False)
        return all(self.param_only(var) for var in relax.analysis.free_vars(expr))

    def defer(self, var: relax.Var, emit: Callable[[], None]) -> None:
        """Rewrite the binding of ``var`` (a later one) with ``emit()`` instead of the rules."""
        self._deferred[var] = emit

    def drop(self, var: relax.Var) -> None:
        """Emit nothing for the binding of ``var`` (a later one, whose only user a rule rewrote)."""
        self._dropped.add(var)

    def updated_by_the_step(self, expr: relax.Expr) -> bool:
        """Whether ``expr`` is a parameter that the function (a training step) updates on every call
        (listed by position in its ``UPDATED_PARAMS_ATTR`` attribute): a re-layout of it would be
        a copy made on every call, in RAM on a board."""
        return isinstance(expr, relax.Var) and expr in self._updated

    def _index(self, func: relax.Function) -> None:
        self._params = set(func.params)
        positions = func.attrs.get(UPDATED_PARAMS_ATTR, []) if func.attrs else []
        self._updated = {func.params[int(i)] for i in positions}
        for block in func.body.blocks:
            for binding in block.bindings:  # in order: a variable is bound before its uses
                self._values[binding.var] = binding.value
                used = relax.analysis.free_vars(binding.value)
                for var in used:
                    self._users.setdefault(var, []).append(binding.var)
                self._param_only[binding.var] = all(self.param_only(var) for var in used)
        for used in relax.analysis.free_vars(func.body.body):
            self._users.setdefault(used, []).append(None)

    def set_nchw(self, old: relax.Var, new: relax.Expr) -> None:
        self._nchw[old] = new
        self.changed = True

    def set_nhwc(self, old: relax.Var, new: relax.Expr) -> None:
        self._nhwc[old] = new
        self.changed = True

    def substitute(self, expr: relax.Expr) -> relax.Expr:
        """``expr`` with every variable replaced by its new original-layout value."""
        if isinstance(expr, relax.Var):
            return self.nchw(expr)
        if isinstance(expr, relax.Call):
            return relax.Call(expr.op, [self.substitute(a) for a in expr.args], expr.attrs, expr.ty_args)
        if isinstance(expr, relax.Tuple):
            return relax.Tuple([self.substitute(f) for f in expr.fields])
        if isinstance(expr, relax.TupleGetItem):
            return relax.TupleGetItem(self.substitute(expr.tuple_value), expr.index)
        if isinstance(expr, (relax.Function, relax.SeqExpr, relax.If)):
            raise Unsupported(f"expression {type(expr).__name__}")
        return expr  # constants, shapes, prim values, global vars: nothing to substitute

    # -- the function
    def run(self, func: relax.Function) -> relax.Function:
        self.func = func
        body = func.body
        if not isinstance(body, relax.SeqExpr):
            raise Unsupported("function body is not a sequence of blocks")
        self._index(func)
        bb = self.bb
        attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"} if func.attrs else {}
        with bb.function(TEMP_NAME, params=list(func.params), attrs=attrs, pure=func.is_pure, private=True):
            for block in body.blocks:
                if isinstance(block, relax.DataflowBlock):
                    with bb.dataflow():
                        outputs = self._block(block)
                        for old in outputs:
                            self._nchw[old] = bb.emit_output(self.nchw(old))
                else:
                    self._block(block)
            bb.emit_func_output(self.substitute(body.body))
        return bb.get()[TEMP_NAME]

    def _block(self, block) -> list[relax.Var]:
        outputs = []
        for binding in block.bindings:
            if not isinstance(binding, relax.VarBinding):
                raise Unsupported(f"binding {type(binding).__name__}")
            var, value = binding.var, binding.value
            self.bound[var] = value
            if isinstance(value, relax.Var) and isinstance(var, relax.DataflowVar):  # an alias
                if value in self._nhwc:
                    self._nhwc[var] = self._nhwc[value]
                if value in self._nchw or value not in self._nhwc:
                    self._nchw[var] = self.nchw(value)
                continue
            if var in self._dropped:
                continue
            deferred = self._deferred.pop(var, None)
            if deferred is not None:
                deferred()
                rewritten = True
            elif isinstance(value, relax.TupleGetItem):
                rewritten = split_item_rule(self, var, value)
            else:
                rewritten = (isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op)
                             and any(rule(self, var, value) for rule in self.rules))
            if rewritten:
                if not isinstance(var, relax.DataflowVar) and isinstance(block, relax.DataflowBlock):
                    outputs.append(var)
                elif not isinstance(var, relax.DataflowVar):
                    self.nchw(var)
                continue
            new = self.substitute(value)
            if isinstance(block, relax.DataflowBlock) and not isinstance(var, relax.DataflowVar):
                self._nchw[var] = self.bb.emit_output(new, name_hint=var.name)
            else:
                self._nchw[var] = self.bb.emit(new, name_hint=var.name)
        return outputs


# ---------------------------------------------------------------- rules that carry the twin along

OPAQUE = 8  # tvm.relax OpPatternKind.kOpaque: FuseOps fuses nothing into or out of such a kernel


def _copy(t: te.Tensor) -> te.Tensor:
    return te.compute(t.shape, lambda *i: t(*i), name="param_copy")


def materialized(rw: Rewriter, value: relax.Expr) -> relax.Expr:
    """``value`` (new expression, computed from parameters only) written to a buffer of its own.

    An inference batch norm that is not folded into a convolution (after a concatenation, a
    pool) multiplies by ``gamma / sqrt(var + eps)``: FuseOps would pull that parameter-only chain
    into the element-wise kernel that applies it, which then takes a square root and a division
    per element and per call (MixNet's concatenations ran 3x onnxruntime's time). Behind an
    opaque copy the chain is a kernel of its own that reads parameters only, so the build runs it
    once per parameter change and the element-wise kernel reads a plain per-channel vector.
    """
    call = rw.bb.call_te(_copy, value, primfunc_name_hint="aotnn_param_copy")
    gvar = call.args[0]
    rw.bb.update_func(gvar, rw.bb.get()[gvar].with_attr("op_pattern", OPAQUE))
    return rw.bb.emit(call)


def _broadcast_nhwc(rw: Rewriter, old: relax.Expr) -> relax.Expr | None:
    """The NHWC form of a binary op's operand that broadcasts against a 4-D NCHW tensor; an
    operand computed from parameters only comes from a kernel of its own (:func:`materialized`)."""
    if rw.has_twin(old):
        return rw.nhwc(old)
    shape = static_shape(old)
    if shape is None or len(shape) > 4:
        return None
    value = rw.nchw(old)
    if len(shape) == 0:
        return value
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    # only per-channel vectors (a batch norm's scale): a training step's full-size parameter
    # operands (momentum buffers, weights) change on every call and stay in the per-call kernels
    per_channel = padded[0] == 1 and padded[2] * padded[3] == 1
    if isinstance(old, relax.Var) and per_channel and rw.param_only(old) and math.prod(shape) > 1:
        key = ("param_nhwc", old)
        if key not in rw.memo:
            rw.memo[key] = _param_nhwc(rw, value, shape)
        return rw.memo[key]
    if len(shape) < 4:
        shape = (1,) * (4 - len(shape)) + shape
        value = relax.op.reshape(value, shape)
    if shape[1] == 1 and shape[2] * shape[3] == 1:
        return rw.bb.emit(value) if not isinstance(value, relax.Var) else value
    return rw.bb.emit(relax.op.permute_dims(value, NHWC_FROM_NCHW))


def _param_nhwc(rw: Rewriter, value: relax.Expr, shape: tuple[int, ...]) -> relax.Expr:
    """The NHWC form of a parameter-only operand of ``shape`` (new ``value``), materialized."""
    if len(shape) < 4:
        shape = (1,) * (4 - len(shape)) + shape
        value = rw.bb.emit(relax.op.reshape(value, shape))
    n, c, h, w = shape
    if c > 1 and h * w > 1:
        value = rw.bb.emit(relax.op.permute_dims(value, NHWC_FROM_NCHW))
    elif shape != (n, h, w, c):  # the same element order: a reshape
        value = rw.bb.emit(relax.op.reshape(value, (n, h, w, c)))
    return materialized(rw, value)


def elementwise_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    name = call.op.name
    if name in UNARY:
        x = call.args[0]
        if not rw.has_twin(x) or any(isinstance(a.ty, relax.TensorType) for a in call.args[1:]):
            return False
        rest = [rw.substitute(a) for a in call.args[1:]]
        rw.set_nhwc(var, rw.bb.emit(relax.Call(call.op, [rw.nhwc(x), *rest], call.attrs, call.ty_args)))
        return True
    if name in BINARY or name in SELECTS:
        out = static_shape(var)
        if out is None or len(out) != 4 or not any(rw.has_twin(a) for a in call.args):
            return False
        if name in SELECTS and any(not rw.has_twin(a) and static_shape(a) == out for a in call.args):
            return False
        for operand in call.args:
            shape = static_shape(operand)
            if shape is None or len(shape) > 4:
                return False
        operands = [_broadcast_nhwc(rw, a) for a in call.args]
        if any(o is None for o in operands):
            return False
        rw.set_nhwc(var, rw.bb.emit(relax.Call(call.op, operands, call.attrs, call.ty_args)))
        return True
    return False


def pool_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    name = call.op.name
    x = call.args[0]
    if not rw.has_twin(x):
        return False
    attrs = call.attrs
    if name in POOL2D:
        if attrs.layout != "NCHW" or attrs.out_layout != "NCHW":
            return False
        make = relax.op.nn.max_pool2d if name == "relax.nn.max_pool2d" else relax.op.nn.avg_pool2d
        new = make(rw.nhwc(x), pool_size=[int(v) for v in attrs.pool_size], strides=[int(v) for v in attrs.strides],
                   padding=[int(v) for v in attrs.padding], dilation=[int(v) for v in attrs.dilation],
                   ceil_mode=bool(attrs.ceil_mode), count_include_pad=bool(attrs.count_include_pad),
                   layout="NHWC", out_layout="NHWC")
        rw.set_nhwc(var, rw.bb.emit(new))
        return True
    if name == "relax.nn.adaptive_avg_pool2d":
        if attrs.layout != "NCHW" or attrs.out_layout != "NCHW":
            return False
        size = None if attrs.output_size is None else [int(v) for v in attrs.output_size]
        rw.set_nhwc(var, rw.bb.emit(relax.op.nn.adaptive_avg_pool2d(rw.nhwc(x), size, layout="NHWC",
                                                                     out_layout="NHWC")))
        return True
    if name in REDUCE:
        axes = list(range(4)) if attrs.axis is None else [int(a) % 4 for a in attrs.axis]
        make = getattr(relax.op, name.split(".")[-1])
        mapped = sorted(NCHW_TO_NHWC_AXIS[a] for a in axes)
        new = rw.bb.emit(make(rw.nhwc(x), axis=mapped, keepdims=bool(attrs.keepdims)))
        if attrs.keepdims:
            rw.set_nhwc(var, new)
            return True
        kept = [a for a in range(4) if a not in axes]
        if [NCHW_TO_NHWC_AXIS[a] for a in kept] == sorted(NCHW_TO_NHWC_AXIS[a] for a in kept):
            rw.set_nchw(var, new)  # what is left is in the original order
            return True
        rw.set_nchw(var, rw.bb.emit(relax.op.permute_dims(new, _order(kept))))
        return True
    return False



def concat_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """A concatenation of 4-D tensors, one of them channels-last, stays channels-last.

    Channel concatenations (MixNet, GhostNet, DenseNet, GoogLeNet) become concatenations along
    the innermost axis, which ``concat.py`` schedules branch-free; in NCHW each operand was
    transposed back and forth (MixNet-S ran 3x onnxruntime's time). Constant padding is lowered as concatenations with constant blocks along H and W (``nn.Pad``):
    in NCHW each costs a transpose of its operand and a strided gather (a padded ResNet-18 stem map
    took 2.2 ms of 8), and the pool after it fell to the generic fallback; channels-last, the
    blocks are contiguous copies and the pooling or convolution after them stays channels-last."""
    if call.op.name != "relax.concat":
        return False
    out = static_shape(var)
    parts = call.args[0]
    if isinstance(parts, relax.Var):
        parts = rw.value_of(parts)
    if out is None or len(out) != 4 or not isinstance(parts, relax.Tuple):
        return False
    fields = list(parts.fields)
    if not any(rw.has_twin(f) for f in fields):
        return False
    if any((shape := static_shape(f)) is None or len(shape) != 4 for f in fields):
        return False
    axis = NCHW_TO_NHWC_AXIS[int(call.attrs.axis) % 4]
    rw.set_nhwc(var, rw.bb.emit(relax.op.concat([rw.nhwc(f) for f in fields], axis=axis)))
    return True


def _split_bounds(indices_or_sections, size: int) -> list[int] | None:
    """[0, the split points..., size] of ``relax.split``'s attribute, or None if not static."""
    if isinstance(indices_or_sections, (int, tvm.tirx.IntImm)):
        sections = int(indices_or_sections)
        if sections < 1 or size % sections:
            return None
        return [i * (size // sections) for i in range(sections + 1)]
    try:
        points = [int(i) for i in indices_or_sections]
    except (TypeError, ValueError):
        return None
    return [0, *points, size]


def split_item_rule(rw: Rewriter, var: relax.Var, item: relax.TupleGetItem) -> bool:
    """A piece of a 4-D tensor's split (``relax.split``), the tensor channels-last: a channels-last
    slice. MixNet splits its channels between depthwise convolutions of several kernel sizes; in
    NCHW each split cost a transpose of its input, and a transpose back per piece."""
    source = item.tuple_value
    call = rw.value_of(source) if isinstance(source, relax.Var) else None
    if not (isinstance(call, relax.Call) and getattr(call.op, "name", None) == "relax.split"):
        return False
    x = call.args[0]
    shape = static_shape(x)
    if shape is None or len(shape) != 4 or not rw.has_twin(x):
        return False
    axis = int(call.attrs.axis) % 4
    bounds = _split_bounds(call.attrs.indices_or_sections, shape[axis])
    if bounds is None or not 0 <= item.index < len(bounds) - 1:
        return False
    piece = relax.op.strided_slice(rw.nhwc(x), axes=[NCHW_TO_NHWC_AXIS[axis]], begin=[bounds[item.index]],
                                   end=[bounds[item.index + 1]])
    rw.set_nhwc(var, rw.bb.emit(piece))
    return True


def _order(kept: list[int]) -> list[int]:
    """Axes permutation taking the kept axes from NHWC order back to their original order."""
    nhwc_positions = sorted(NCHW_TO_NHWC_AXIS[a] for a in kept)
    return [nhwc_positions.index(NCHW_TO_NHWC_AXIS[a]) for a in kept]


def rewrite(mod: tvm.IRModule, cpu: CpuInfo, rules: list[Callable], carry_twins: bool = True) -> tvm.IRModule:
    """Apply ``rules`` (then, with ``carry_twins``, the twin-propagating rules) to ``mod['main']``;
    the original on any surprise."""
    if "main" not in [g.name_hint for g in mod.get_global_vars()]:
        return mod
    twin_rules = [elementwise_rule, pool_rule, concat_rule] if carry_twins else []
    rewriter = Rewriter(mod, cpu, [*rules, *twin_rules])
    try:
        new_main = rewriter.run(mod["main"])
    except Unsupported:
        return mod
    except Exception:  # noqa: BLE001 - a rule's bug must not break the build: compile unrewritten
        _LOG.warning("default-schedule rewrite failed; compiling without it", exc_info=True)
        return mod
    if not rewriter.changed:
        return mod
    result = tvm.IRModule({gv: f for gv, f in rewriter.bb.get().functions.items() if gv.name_hint != TEMP_NAME},
                          attrs=mod.attrs)
    if mod["main"].attrs and "global_symbol" in mod["main"].attrs:
        new_main = new_main.with_attr("global_symbol", mod["main"].attrs["global_symbol"])
    result["main"] = new_main
    return relax.transform.DeadCodeElimination(["main"])(result)
