"""Merge a depthwise convolution's kernel into the 1x1 convolution that consumes it.

In MobileNet-style blocks (1x1 expand -> 3x3 depthwise -> 1x1 project) the depthwise result is
written out whole only to be read back by the projection. Merged into one kernel (see
``dw_pointwise.py`` for its schedule), each task computes one row of the depthwise result into
a buffer that stays in the core's cache and projects it at once: the intermediate tensor never
goes to memory, one parallel launch per block disappears, and the small depthwise kernels of
deep layers, too small to be worth a launch of their own, run spread over the cores.

Where the tensor the block's 1x1 expand convolution writes would not fit in L2 (MobileNetV2's
112x112, 56x56 and 28x28 blocks), the expansion joins the kernel too (:func:`merge_expand`,
``inverted_residual.py``): the expanded rows a task needs are computed in the task. A stem
convolution before a block without expansion (MobileNetV2's first 3x3 convolution, 1.6 MB read
back by block 1's depthwise convolution) joins it the same way. Where the
depthwise convolution stays apart from its projection (deep layers over small maps, whose
projection weights are too big for row tasks), a flat 1x1 expansion before it joins it instead
(:func:`merge_expand_depthwise`, ``expand_depthwise.py``): one task per block of channels.

The merges happen between Relax's ``FuseOps`` and ``FuseTIR``: the two fused groups (the
depthwise convolution with its epilogue, the 1x1 convolution with its epilogue) become one group,
which ``FuseTIR`` turns into one kernel with the depthwise result as an internal buffer.
"""
from __future__ import annotations

import math

import tvm
from tvm import relax
from tvm.s_tir import Schedule

from .conv2d import CONV, DEPTHWISE, UNFLAT, tile
from .cpu import current_cpu
from .inverted_residual import band_rows, expand_row_tile
from .layout import static_shape

# An expanded tensor of a core's L2 or more (CpuInfo.expand_merge_min_bytes) is merged: with 512 KB
# (Zen 2/3) MobileNetV2's 28x28 blocks (588 KB) merged took 35 us off their six kernels (440 -> 405
# us in the model)


def _primitive_calls(func: relax.Function) -> list[relax.Call]:
    """The ``call_tir`` calls of a fused group, in order (empty if it is not a plain group)."""
    if not isinstance(func.body, relax.SeqExpr) or len(func.body.blocks) != 1:
        return []
    calls = []
    for binding in func.body.blocks[0].bindings:
        value = binding.value
        if not (isinstance(binding, relax.VarBinding) and isinstance(value, relax.Call)
                and value.op == tvm.ir.Op.get("relax.call_tir")):
            return []
        calls.append(value)
    return calls


def _kernel_name(call: relax.Call) -> str:
    return call.args[0].name_hint


def _is_depthwise_group(func: relax.Function) -> bool:
    calls = _primitive_calls(func)
    return bool(calls) and _kernel_name(calls[0]).startswith(DEPTHWISE)


def _param_index(func: relax.Function, value: relax.Expr) -> int | None:
    """Index of the parameter of ``func`` that ``value`` is, or None."""
    for index, param in enumerate(func.params):
        if param.same_as(value):
            return index
    return None


def _pointwise_input(func: relax.Function) -> int | None:
    """Index of the parameter that a 1x1, stride-1 convolution group convolves, where a row task
    may read its weights whole; None otherwise."""
    if not _row_task_convolution(func):
        return None
    call = _primitive_calls(func)[0]
    data, weight = call.args[1].fields[:2]
    x_shape, out_shape = static_shape(data), static_shape(call)
    if x_shape is None or tuple(static_shape(weight)[1:3]) != (1, 1) or x_shape[1:3] != out_shape[1:3]:
        return None
    return _param_index(func, data)


def _depthwise_input(func: relax.Function) -> int | None:
    """Index of the parameter a depthwise group (merged with its 1x1 convolution or not) convolves."""
    calls = _primitive_calls(func)
    if not calls or not _kernel_name(calls[0]).startswith(DEPTHWISE):
        return None
    return _param_index(func, calls[0].args[1].fields[0])


def _row_task_convolution(func: relax.Function) -> bool:
    """Whether ``func`` is a convolution group whose weights a row task may read whole: a 1x1
    expansion, or a stem convolution over the image."""
    calls = _primitive_calls(func)
    if not calls or not _kernel_name(calls[0]).startswith(CONV):
        return False
    w_shape, out_shape = static_shape(calls[0].args[1].fields[1]), static_shape(calls[0])
    if w_shape is None or out_shape is None or len(w_shape) != 5 or len(out_shape) != 4:
        return False
    _, kh, kw, ic, _ = w_shape
    return kh * kw * ic * out_shape[3] * 4 <= current_cpu().row_task_weight_bytes


def _worth_merging_expand(mod: tvm.IRModule, func: relax.Function, consumer: relax.Function) -> bool:
    """Whether ``func`` is a plain convolution group (a 1x1 expansion, or a stem convolution)
    whose result would not fit in L2 and whose rows ``inverted_residual.py`` can tile and cut
    into bands of ``consumer``'s rows."""
    if not _row_task_convolution(func):
        return False
    shape = static_shape(func.body.body)
    if shape is None or 4 * math.prod(shape) < current_cpu().expand_merge_min_bytes:  # float32: the only dtype rewritten
        return False
    consumer_calls = _primitive_calls(consumer)
    if not any(_kernel_name(call).startswith(CONV) for call in consumer_calls[1:]):
        return False  # the depthwise kernel alone: its 1x1 projection was not merged into it
    depthwise_shape = static_shape(consumer_calls[0])
    if depthwise_shape is None or band_rows(depthwise_shape[1], shape[1], 4 * shape[2] * shape[3]) is None:
        return False
    schedule = Schedule(mod[_primitive_calls(func)[0].args[0]])
    try:
        planned = tile(schedule.get(schedule.get_sblock(CONV)), "ow")
    except Exception:  # noqa: BLE001 - not the kernel conv2d.py emits
        return False
    return expand_row_tile(shape[2], planned) is not None


def _worth_merging_into_depthwise(mod: tvm.IRModule, func: relax.Function, consumer: relax.Function) -> bool:
    """Whether ``func`` is a plain 1x1 convolution group tiled flat (one task per block of output
    channels, every pixel) and ``consumer`` a depthwise group without a 1x1 convolution whose
    channel tiles fit in those blocks (``expand_depthwise.py`` schedules the result)."""
    calls, consumer_calls = _primitive_calls(func), _primitive_calls(consumer)
    if not calls or not _kernel_name(calls[0]).startswith(CONV):
        return False
    if not consumer_calls or not _kernel_name(consumer_calls[0]).startswith(DEPTHWISE):
        return False
    if any(_kernel_name(call).startswith(CONV) for call in consumer_calls[1:]):
        return False
    data, weight = calls[0].args[1].fields[:2]
    w_shape, x_shape, out_shape = static_shape(weight), static_shape(data), static_shape(calls[0])
    if w_shape is None or x_shape is None or out_shape is None or len(w_shape) != 5 or len(out_shape) != 4:
        return False
    blocks, kh, kw, _, oc_block = w_shape
    if (kh, kw) != (1, 1) or x_shape[1:3] != out_shape[1:3] or blocks * oc_block != out_shape[3]:
        return False  # not a 1x1 stride-1 convolution, or channels padded up to a whole block
    try:
        expansion = Schedule(mod[calls[0].args[0]])
        depthwise = Schedule(mod[consumer_calls[0].args[0]])
        expansion.get_sblock(UNFLAT)
        c_block = tile(depthwise.get(depthwise.get_sblock(DEPTHWISE)), "oc")
        planned = tile(expansion.get(expansion.get_sblock(CONV)), "oc")
    except Exception:  # noqa: BLE001 - not the kernels conv2d.py emits, or not tiled flat
        return False
    return planned == oc_block and oc_block % c_block == 0


def _merged(first: relax.Function, second: relax.Function, index: int) -> relax.Function:
    """One primitive function: ``first``'s body, then ``second``'s with parameter ``index`` bound
    to ``first``'s result."""
    result = first.body.body
    bound = second.bind_params({second.params[index]: result})
    bindings = [*first.body.blocks[0].bindings, *bound.body.blocks[0].bindings]
    body = relax.SeqExpr([relax.DataflowBlock(bindings)], bound.body.body)
    return relax.Function([*first.params, *bound.params], body, second.ret_ty, is_pure=True,
                          attrs=second.attrs)


def _count_vars(expr: relax.Expr, counts: dict) -> None:
    """Add one to ``counts[var]`` for every occurrence of a variable in ``expr``: a call that reads
    a tensor twice (a residual block's input, read by its depthwise convolution and by its add)
    counts twice."""
    if isinstance(expr, relax.Var):
        counts[expr] = counts.get(expr, 0) + 1
    elif isinstance(expr, relax.Call):
        for arg in expr.args:
            _count_vars(arg, counts)
    elif isinstance(expr, relax.Tuple):
        for field_ in expr.fields:
            _count_vars(field_, counts)
    elif isinstance(expr, relax.TupleGetItem):
        _count_vars(expr.tuple_value, counts)
    elif not isinstance(expr, tvm.ir.GlobalVar):
        # constants and shapes hold no variables; an expression of another kind: never merge its inputs
        for var in relax.analysis.free_vars(expr):
            counts[var] = counts.get(var, 0) + 2


def _uses(block: relax.BindingBlock, outputs: relax.Expr) -> dict:
    """How many times each variable is read in ``block`` and by ``outputs`` (every occurrence)."""
    counts: dict = {}
    for binding in block.bindings:
        _count_vars(binding.value, counts)
    _count_vars(outputs, counts)
    return counts


def rewrite_dataflow_blocks(mod: tvm.IRModule, rewrite_block) -> tvm.IRModule:
    """Rewrite each dataflow block of ``main``: ``rewrite_block(block, uses, builder)`` returns
    ``(rewritten, dropped)`` - new values of some bindings (by variable) and the variables whose
    bindings go; ``uses`` counts every read of each variable in the block and by main's result.
    New functions are added through ``builder``. The module is returned unchanged where no block
    changed."""
    main_var = mod.get_global_var("main")
    main = mod[main_var]
    if not isinstance(main.body, relax.SeqExpr):
        return mod
    blocks = list(main.body.blocks)
    builder = relax.BlockBuilder(mod)
    changed = False
    for position, block in enumerate(blocks):
        if not isinstance(block, relax.DataflowBlock):
            continue
        rewritten, dropped = rewrite_block(block, _uses(block, main.body.body), builder)
        if not rewritten:
            continue
        blocks[position] = relax.DataflowBlock(
            [relax.VarBinding(b.var, rewritten[b.var]) if b.var in rewritten else b
             for b in block.bindings if b.var not in dropped])
        changed = True
    if not changed:
        return mod
    new_main = relax.Function(main.params, relax.SeqExpr(blocks, main.body.body), main.ret_ty,
                              is_pure=main.is_pure, attrs=main.attrs)
    builder.update_func(main_var, new_main)
    return relax.transform.Normalize()(builder.get())


def _merge_pairs(mod: tvm.IRModule, second_input, qualifies) -> tvm.IRModule:
    """Merge group pairs: ``second_input(second)`` names the parameter of a consumer group that a
    producer group ``first`` computes, used by it alone, where ``qualifies(first, second)``."""

    def rewrite_block(block, uses, builder):
        producers = {}
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.GlobalVar):
                producers[binding.var] = value
        rewritten, dropped = {}, set()
        for binding in block.bindings:
            call = producers.get(binding.var)
            if call is None:
                continue
            second = mod[call.op]
            index = second_input(second) if isinstance(second, relax.Function) else None
            if index is None:
                continue
            source = call.args[index]
            first_call = producers.get(source)
            if first_call is None or uses.get(source, 0) != 1 or source in rewritten:
                continue
            first = mod[first_call.op]
            if not (isinstance(first, relax.Function) and qualifies(first, second)):
                continue
            merged = _merged(first, second, index)
            gvar = builder.add_func(merged, f"{first_call.op.name_hint}_{call.op.name_hint}")
            args = [*first_call.args, *(a for i, a in enumerate(call.args) if i != index)]
            rewritten[binding.var] = relax.Call(gvar, args, ty_args=call.ty_args)
            dropped.add(source)
        return rewritten, dropped

    return rewrite_dataflow_blocks(mod, rewrite_block)


def merge_expand(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge each 1x1 expand convolution group into the depthwise group (merged with its 1x1
    projection or not) that alone consumes it, where the expanded tensor would not fit in L2
    (``inverted_residual.py`` schedules the result).

    Args:
        mod: a module after :func:`merge_depthwise_pointwise`.
    Returns:
        the module with the merged groups (unchanged where no pair qualifies).
    """
    return _merge_pairs(mod, _depthwise_input, lambda first, second: _worth_merging_expand(mod, first, second))


def merge_depthwise_pointwise(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge every fused depthwise group whose only consumer is a fused 1x1 convolution group.

    Args:
        mod: a module after ``relax.transform.FuseOps``.
    Returns:
        the module with the merged groups (unchanged where no pair qualifies).
    """
    return _merge_pairs(mod, _pointwise_input, lambda first, _: _is_depthwise_group(first))


def merge_expand_depthwise(mod: tvm.IRModule) -> tvm.IRModule:
    """Merge each flat 1x1 convolution group into the depthwise group (not merged with a 1x1
    projection) that alone consumes it (``expand_depthwise.py`` schedules the result).

    Args:
        mod: a module after :func:`merge_expand`.
    Returns:
        the module with the merged groups (unchanged where no pair qualifies).
    """
    return _merge_pairs(mod, _depthwise_input, lambda first, second: _worth_merging_into_depthwise(mod, first, second))


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergeDepthwisePointwise")
def merge_depthwise_pointwise_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_depthwise_pointwise` as a module pass (between FuseOps and FuseTIR)."""
    return merge_depthwise_pointwise(mod)


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergeExpand")
def merge_expand_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_expand` as a module pass (after the depthwise/1x1 merge)."""
    return merge_expand(mod)


@tvm.transform.module_pass(opt_level=0, name="aotnn.MergeExpandDepthwise")
def merge_expand_depthwise_pass(mod: tvm.IRModule, _ctx) -> tvm.IRModule:
    """:func:`merge_expand_depthwise` as a module pass (after the expand merge)."""
    return merge_expand_depthwise(mod)
