"""On microcontrollers, merge a lone padding kernel into the convolution group that alone reads its result.

``int8_conv2d`` pads its input with the zero point in an ``nn.pad`` of its own (``relay_frontend/ops/int8.py``),
which ``FuseOps`` leaves as a kernel apart: its padded copy (DS-CNN: 27x7x64 bytes against the 25x5x64 map)
lives in the arena beside the convolution's input and output, the largest share of the 8-bit network's RAM.
Merged between ``FuseOps`` and ``FuseTIR``, the padding becomes a stage of the convolution's kernel that its
schedule inlines into the reads (``int8.py``: ``inline_producers``), so no padded copy exists. On x86 the
int8 convolution rewrite absorbs the padding itself (``int8_conv.py``).
"""
from __future__ import annotations

import tvm
from tvm import relax

from .block_fusion import _kernel_name, _primitive_calls, rewrite_dataflow_blocks
from .cpu import current_cpu
from .layout import dtype_of

PAD = "pad"
CONV = "conv2d"
NARROW = ("int8", "uint8")


def _is_pad(value: relax.Expr) -> bool:
    """A lone padding kernel of one 8-bit input in ``main`` (float convolutions pad inside their op)."""
    return (isinstance(value, relax.Call) and value.op == tvm.ir.Op.get("relax.call_tir")
            and value.args[0].name_hint.startswith(PAD) and len(value.args[1].fields) == 1
            and dtype_of(value.args[1].fields[0]) in NARROW)


def _convolves(func: relax.Function, index: int) -> bool:
    """``func`` is a fused group whose first kernel, a convolution, reads parameter ``index`` directly."""
    calls = _primitive_calls(func)
    return bool(calls) and _kernel_name(calls[0]).startswith(CONV) and calls[0].args[1].fields[0].same_as(
        func.params[index])


def _with_pad(pad: relax.Call, group: relax.Function, index: int) -> relax.Function:
    """``pad`` on a new parameter, then ``group``'s body with parameter ``index`` bound to its result."""
    source = relax.Var("padded_input", pad.args[1].fields[0].ty)
    padded = relax.Var("padded", pad.ty)
    call = relax.Call(pad.op, [pad.args[0], relax.Tuple([source])], pad.attrs, pad.ty_args)
    bound = group.bind_params({group.params[index]: padded})
    bindings = [relax.VarBinding(padded, call), *bound.body.blocks[0].bindings]
    body = relax.SeqExpr([relax.DataflowBlock(bindings)], bound.body.body)
    return relax.Function([source, *bound.params], body, group.ret_ty, is_pure=True, attrs=group.attrs)


def merge_pad(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge each lone padding kernel into the convolution group that alone consumes its result.

    Args:
        mod: a module after ``relax.transform.FuseOps``.
    Returns:
        the module with the merged groups (unchanged where no pair qualifies).
    """

    def rewrite_block(block, uses, builder):
        pads = {b.var: b.value for b in block.bindings if _is_pad(b.value)}
        rewritten, dropped = {}, set()
        for binding in block.bindings:
            call = binding.value
            if not (isinstance(call, relax.Call) and isinstance(call.op, tvm.ir.GlobalVar)):
                continue
            group = mod[call.op]
            if not isinstance(group, relax.Function):
                continue
            for index, arg in enumerate(call.args):
                if arg in pads and uses.get(arg, 0) == 1 and arg not in dropped and _convolves(group, index):
                    gvar = builder.add_func(_with_pad(pads[arg], group, index), f"pad_{call.op.name_hint}")
                    others = [a for i, a in enumerate(call.args) if i != index]
                    rewritten[binding.var] = relax.Call(gvar, [pads[arg].args[1].fields[0], *others])
                    dropped.add(arg)
                    break
        return rewritten, dropped

    return rewrite_dataflow_blocks(mod, rewrite_block)


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergePad")
def merge_pad_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_pad` as a module pass, on small-memory targets only (between FuseOps and FuseTIR)."""
    return merge_pad(mod) if current_cpu().small_memory else mod
