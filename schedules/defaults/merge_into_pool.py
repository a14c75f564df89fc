"""On microcontrollers, merge an integer layer's kernel into the average pooling that alone reads its output.

An int8 layer whose output is pooled in float32 (DS-CNN's last 1x1 convolution, dequantized before its
global average pooling) writes a float32 map 4x the size of its 8-bit result (32 KB for DS-CNN's 25x5x64),
only for the pooling to read it back: more than the whole 8-bit network needs otherwise. Merged between
Relax's ``FuseOps`` and ``FuseTIR``, the pooling runs in the layer's kernel,
whose microcontroller schedule (``stream_rows.py``) keeps only the region one pooled output needs. The
element-wise operations and the pooling's summation order are those of the separate kernels, so the
results are the same bit for bit.
"""
from __future__ import annotations

import tvm
from tvm import relax

from .block_fusion import _primitive_calls, rewrite_dataflow_blocks
from .cpu import current_cpu
from .layout import dtype_of

POOL = "avg_pool2d"
_NARROW = ("int8", "uint8")


def _is_pool(value: relax.Expr) -> bool:
    """A lone average-pooling kernel in ``main`` (FuseOps leaves a single op outside any group)."""
    return (isinstance(value, relax.Call) and value.op == tvm.ir.Op.get("relax.call_tir")
            and value.args[0].name_hint.startswith(POOL) and len(value.args[1].fields) == 1)


def _integer_layer(func: relax.Function) -> bool:
    """A group reading an 8-bit tensor and writing a float32 one (a dequantized int8 layer)."""
    if not _primitive_calls(func):
        return False
    narrow = any(isinstance(p.ty, relax.TensorType) and dtype_of(p) in _NARROW for p in func.params)
    out = func.body.body
    return narrow and isinstance(out.ty, relax.TensorType) and dtype_of(out) == "float32"


def _with_pool(first: relax.Function, pool: relax.Call) -> relax.Function:
    """``first``'s body followed by ``pool`` applied to its result."""
    pooled = relax.Var("pooled", pool.ty)
    call = relax.Call(pool.op, [pool.args[0], relax.Tuple([first.body.body])], pool.attrs, pool.ty_args)
    bindings = [*first.body.blocks[0].bindings, relax.VarBinding(pooled, call)]
    body = relax.SeqExpr([relax.DataflowBlock(bindings)], pooled)
    return relax.Function(first.params, body, pool.ty, is_pure=True, attrs=first.attrs)


def merge_into_pool(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge each dequantized int8 layer group into the average pooling that alone consumes its output.

    Args:
        mod: a module after ``relax.transform.FuseOps``.
    Returns:
        the module with the merged groups (unchanged where no pair qualifies).
    """

    def rewrite_block(block, uses, builder):
        groups = {b.var: b.value for b in block.bindings
                  if isinstance(b.value, relax.Call) and isinstance(b.value.op, tvm.ir.GlobalVar)}
        rewritten, dropped = {}, set()
        for binding in block.bindings:
            if not _is_pool(binding.value):
                continue
            source = binding.value.args[1].fields[0]
            group = groups.get(source)
            if group is None or uses.get(source, 0) != 1:
                continue
            first = mod[group.op]
            if not (isinstance(first, relax.Function) and _integer_layer(first)):
                continue
            gvar = builder.add_func(_with_pool(first, binding.value), f"{group.op.name_hint}_{POOL}")
            rewritten[binding.var] = relax.Call(gvar, list(group.args))
            dropped.add(source)
        return rewritten, dropped

    return rewrite_dataflow_blocks(mod, rewrite_block)


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergeIntoPool")
def merge_into_pool_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_into_pool` as a module pass, on small-memory targets only (between FuseOps and FuseTIR)."""
    return merge_into_pool(mod) if current_cpu().small_memory else mod
