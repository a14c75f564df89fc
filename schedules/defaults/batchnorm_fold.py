"""Fold an inference batch norm into the convolution before it.

A convolution followed by an inference batch norm computes ``conv(x, W) * s + b`` per output
channel, ``s`` and ``b`` read from parameters only. The convolution kernel then spends, per
output vector, a multiply-add after its reduction. Folded, it computes ``conv(x, W * s)`` with
its accumulators starting at ``b``: the scaled weights are a parameter-only computation (the
build runs it once per parameter change, like weight packing) and the epilogue shrinks to what
follows the batch norm (an activation, a residual add). Inference engines fold the same way;
results differ from the unfolded form by rounding only.

A convolution with a bias ``c`` (``add(conv, c)`` per channel, read from parameters only) folds
the same way: ``(conv + c) * s + b = conv * s + (c * s + b)``.

The fold applies where the convolution's result (or its bias sum) feeds only ``multiply(., s)``,
that product only ``add(., b)``, and the sum is consumed by element-wise operations only: the convolution
then still fuses with an epilogue (the block merges of ``block_fusion.py`` need one). A training
step's batch norm, whose statistics come from the convolution's own output, is not folded.
"""
from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax, tirx
from tvm.s_tir import SBlockRealize

from .layout import BINARY, UNARY, Rewriter, static_shape
from .tir_rewrite import replace_first, with_block


@dataclass(frozen=True)
class Fold:
    """The bindings a folded batch norm replaces and its per-channel operands (old variables)."""

    product: relax.Var  # multiply(conv, scale): dropped
    total: relax.Var    # add(product, shift): becomes the convolution's result
    scale: relax.Expr
    shift: relax.Expr
    biased: relax.Var | None = None  # add(conv, bias) before the product: dropped
    bias: relax.Expr | None = None

    def dropped(self) -> list[relax.Var]:
        """The bindings the folded convolution replaces besides ``total``."""
        return [self.product] if self.biased is None else [self.biased, self.product]


def _other_operand(call: relax.Call, var: relax.Var) -> relax.Expr | None:
    a, b = call.args
    if a.same_as(var) and not b.same_as(var):
        return b
    if b.same_as(var) and not a.same_as(var):
        return a
    return None


def _single_user(rw: Rewriter, var: relax.Var, op: str) -> tuple[relax.Var, relax.Expr] | None:
    """The one binding that uses ``var``, when it is a call to ``op`` with ``var`` as one operand."""
    users = rw.users(var)
    if len(users) != 1 or not isinstance(var, relax.DataflowVar):
        return None
    user = users[0]
    value = rw.value_of(user)
    if not (isinstance(value, relax.Call) and getattr(value.op, "name", None) == op):
        return None
    operand = _other_operand(value, var)
    return None if operand is None else (user, operand)


def _per_channel(expr: relax.Expr, channels: int) -> bool:
    shape = static_shape(expr)
    return (shape in ((1, channels, 1, 1), (channels, 1, 1))
            and str(expr.ty.dtype) == "float32")


def find_fold(rw: Rewriter, conv: relax.Var, channels: int) -> Fold | None:
    """The batch norm after the convolution bound to ``conv`` (``channels`` outputs), if foldable."""
    biased, bias = None, None
    added = _single_user(rw, conv, "relax.add")
    if added is not None and _per_channel(added[1], channels) and rw.param_only(added[1]):
        biased, bias = added
    scaled = _single_user(rw, conv if biased is None else biased, "relax.multiply")
    if scaled is None:
        return None
    product, scale = scaled
    shifted = _single_user(rw, product, "relax.add")
    if shifted is None:
        return None
    total, shift = shifted
    for operand in (scale, shift):
        if not (_per_channel(operand, channels) and rw.param_only(operand)):
            return None
    if not _feeds_elementwise_only(rw, total):
        return None
    return Fold(product, total, scale, shift, biased, bias)


def _feeds_elementwise_only(rw: Rewriter, var: relax.Var) -> bool:
    """Whether every use of ``var`` (through aliases) is an element-wise operation."""
    users = rw.users(var)
    if not users:
        return False
    for user in users:
        value = rw.value_of(user)
        if isinstance(value, relax.Var):  # an alias: look at its users
            if not _feeds_elementwise_only(rw, user):
                return False
        elif not (isinstance(value, relax.Call) and getattr(value.op, "name", None) in UNARY | BINARY):
            return False
    return True


def scaled_weight(rw: Rewriter, weight: relax.Expr, fold: Fold, channels: int) -> relax.Expr:
    """``weight`` (OIHW, new expression) times the fold's scale per output channel."""
    scale = relax.op.reshape(rw.nchw(fold.scale), (channels, 1, 1, 1))
    return rw.bb.emit(relax.op.multiply(weight, scale))


def shift_vector(rw: Rewriter, fold: Fold, channels: int) -> relax.Expr:
    """The fold's shift (with a bias: ``bias * scale + shift``) as a ``(channels,)`` vector (new expression)."""
    shift = relax.op.reshape(rw.nchw(fold.shift), (channels,))
    if fold.bias is not None:
        bias = relax.op.reshape(rw.nchw(fold.bias), (channels,))
        shift = relax.op.add(relax.op.multiply(bias, relax.op.reshape(rw.nchw(fold.scale), (channels,))), shift)
    return rw.bb.emit(shift)


def start_at_bias(bb: relax.BlockBuilder, call: relax.Call, block: str) -> None:
    """Make the reduction ``block`` of ``call``'s kernel start at the kernel's third parameter.

    The TE computes state that start (``te.sum(..., init=bias[o])``), but ``te.create_prim_func``
    drops a reduction's init: this writes it into the kernel. The last index of the accumulator is
    the channel; channels padded up to a whole tile read the last bias value.
    """
    gvar = call.args[0]
    func = bb.get()[gvar]
    bias = func.params[2]
    last = int(bias.ty.shape[0]) - 1

    def change(node):
        if not (isinstance(node, SBlockRealize) and node.block.name_hint == block and node.block.init is not None):
            return None
        init = node.block.init
        channel = tirx.min(init.indices[-1], last)
        start = tirx.BufferStore(init.buffer, tirx.BufferLoad(bias, [channel]), init.indices)
        reads = [*node.block.reads, tirx.BufferRegion(bias, [tvm.ir.Range.from_min_extent(channel, 1)])]
        return SBlockRealize(node.iter_values, node.predicate, with_block(node.block, reads=reads, init=start))

    body = replace_first(func.body, change)
    if body is None:
        raise ValueError(f"start_at_bias: no reduction block {block!r} in {gvar.name_hint}")
    bb.update_func(gvar, func.with_body(body))
