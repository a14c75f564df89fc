"""Merge a pooling kernel into the kernel that computes its input (RAM on a microcontroller).

A training step runs its frozen convolutions on the whole batch: LeNet5's first convolution
writes 4x28x28x6 floats (75 KB) only for the 2x2 max-pool after it to read them back at a
quarter of the size. Merged into one group between ``FuseOps`` and ``FuseTIR``, the convolution's
result becomes a buffer inside the kernel, which ``stream_rows`` shrinks to the rows that one
output row of the pool needs: the large tensor never exists.
"""
from __future__ import annotations

import tvm
from tvm import relax

from .defaults.block_fusion import _merge_pairs, _primitive_calls

CALL_TIR = "relax.call_tir"
GROUP_PREFIX = "group_"  # the name of a pooling's own group; FuseTIR's kernel name keeps it


def is_merged_pooling(kernel: str) -> bool:
    """Whether the kernel called ``kernel`` is a pooling merged with its input's producer: its rows
    are streamed (``stream_rows``) rather than scheduled as the producer alone would be."""
    return f"_{GROUP_PREFIX}" in kernel and "pool2d" in kernel


def _is_pooling(mod: tvm.IRModule, value: relax.Expr) -> bool:
    """A ``call_tir`` of a 2-D pooling kernel on one tensor."""
    return (isinstance(value, relax.Call) and value.op == tvm.ir.Op.get(CALL_TIR)
            and "pool2d" in value.args[0].name_hint and len(value.args[1].fields) == 1
            and isinstance(value.args[1].fields[0], relax.Var))


def _pooling_groups(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` with each bare pooling ``call_tir`` in ``main`` wrapped in a primitive group of its
    own (the form ``FuseOps`` gives fused kernels), so that groups can be merged with it."""
    main_var = mod.get_global_var("main")
    main = mod[main_var]
    if not isinstance(main.body, relax.SeqExpr):
        return mod
    builder = relax.BlockBuilder(mod)
    blocks, changed = [], False
    for block in main.body.blocks:
        if not isinstance(block, relax.DataflowBlock):
            blocks.append(block)
            continue
        bindings = []
        for binding in block.bindings:
            value = binding.value
            if isinstance(binding, relax.VarBinding) and _is_pooling(mod, value):
                source = value.args[1].fields[0]
                param = relax.Var("pool_input", source.ty)
                result = relax.DataflowVar("pooled", binding.var.ty)
                body = relax.SeqExpr([relax.DataflowBlock([relax.VarBinding(
                    result, relax.call_tir(value.args[0], [param], value.ty))])], result)
                group = relax.Function([param], body, binding.var.ty, is_pure=True,
                                       attrs=tvm.ir.make_node("ir.DictAttrs", Primitive=True))
                gvar = builder.add_func(group, f"{GROUP_PREFIX}{value.args[0].name_hint}")
                binding = relax.VarBinding(binding.var, relax.Call(gvar, [source]))
                changed = True
            bindings.append(binding)
        blocks.append(relax.DataflowBlock(bindings))
    if not changed:
        return mod
    builder.update_func(main_var, relax.Function(main.params, relax.SeqExpr(blocks, main.body.body), main.ret_ty,
                                                 is_pure=main.is_pure, attrs=main.attrs))
    return relax.transform.Normalize()(builder.get())


def _is_pooling_group(func: relax.Function) -> bool:
    calls = _primitive_calls(func)
    return len(calls) == 1 and "pool2d" in calls[0].args[0].name_hint


def _pools_rows(func: relax.Function) -> bool:
    """Whether a pooling group's result is a channels-last map of several rows and columns: its
    producer can then be computed a few rows at a time (a global pooling needs the whole map)."""
    shape = func.ret_ty.shape if isinstance(func.ret_ty, relax.TensorType) else None
    if shape is None or len(shape.values) != 4:
        return False
    return all(isinstance(d, tvm.tirx.IntImm) and int(d) > 1 for d in shape.values[1:3])


def merge_pooling(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge every pooling kernel into the fused group that computes its input, where that input
    is read by the pooling alone and the pooling keeps rows (not a global pooling).

    Args:
        mod: a module after ``relax.transform.FuseOps``.
    Returns:
        the module with the merged groups (the poolings in groups of their own where none qualifies).
    """
    grouped = _pooling_groups(mod)
    return _merge_pairs(grouped, lambda second: 0 if _is_pooling_group(second) else None,
                        lambda first, second: (bool(_primitive_calls(first)) and not _is_pooling_group(first)
                                               and _pools_rows(second)))


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergePooling")
def merge_pooling_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_pooling` as a module pass (between FuseOps and FuseTIR)."""
    return merge_pooling(mod)
