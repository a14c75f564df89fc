"""Reverse-mode gradients of a captured sub-function, inlined into the graph being captured.

``grad_call`` captures ``fn`` as a separate Relax function, differentiates it with Relax's
``Gradient`` pass (with the extra rules of ``relay_frontend.gradients``), adds the adjoint as
a private function of the outer module and emits one call to it. The build pipeline inlines
private functions before lowering, so the training step stays ONE kernel sequence.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tvm import relax

from . import gradients  # noqa: F401  (registers our gradient rules)
from .capture import Capture, current, dtype_of, static_shape
from .errors import CaptureError


class GradResult:
    """What one differentiated call produced, as Relax variables of the outer graph."""

    def __init__(self, outputs: list[relax.Expr], input_grads: list[relax.Expr], param_grads: list[relax.Expr],
                 param_keys: list[Any]):
        self.outputs = outputs          # the function's outputs (the first is the differentiated scalar)
        self.input_grads = input_grads  # gradients for the requested inputs, in order
        self.param_grads = param_grads  # gradients for the requested parameters, in order
        self.param_keys = param_keys


@relax.expr_functor.mutator
class _RenameKernels(relax.PyExprMutator):
    """Points references to kernels at their copies in the outer module (by name)."""

    def __init__(self, renamed: dict[str, relax.GlobalVar]):
        super().__init__()
        self.renamed = renamed

    def visit_global_var_(self, op):
        return self.renamed.get(op.name_hint, op)


def _move_kernels(outer: Capture, mod, adjoint: relax.Function) -> relax.Function:
    """Copy the kernels (PrimFuncs) that rules built with ``call_te`` while ``fn`` was captured into
    the outer module, and make ``adjoint`` call those copies."""
    renamed = {gv.name_hint: outer.builder.add_func(func, gv.name_hint)
               for gv, func in mod.functions_items() if not isinstance(func, relax.Function)}
    return _RenameKernels(renamed).visit_expr(adjoint) if renamed else adjoint


def grad_call(fn: Callable[[Sequence[relax.Expr]], tuple[list[relax.Expr], Capture]],
              inputs: Sequence[relax.Expr], grad_inputs: Sequence[int], params: Sequence[Any],
              param_expr: Callable[[Any], relax.Expr]) -> GradResult:
    """Differentiate ``fn`` and emit its adjoint into the current capture.

    Args:
        fn: traces the forward computation: called inside a fresh Capture with that capture's
            input variables, returns the output expressions (the first one must be a float scalar).
            Parameters it reads become inputs of the sub-function (keyed like the outer capture).
        inputs: the outer graph's values for the sub-function's inputs.
        grad_inputs: positions of inputs to differentiate with respect to.
        params: parameter keys to differentiate with respect to (registered if ``fn`` did not read them).
        param_expr: gives the outer graph's expression for a parameter key.
    Returns:
        a :class:`GradResult`.
    Raises:
        CaptureError: no capture is active, the target is not a float scalar, or an op has no gradient.
    """
    outer = current()
    if outer is None:
        raise CaptureError("grad_call needs an active capture")
    inner = Capture("main")
    inner.differentiating = True
    with inner:
        in_vars = [inner.input(f"a{i}", static_shape(x), dtype_of(x)) for i, x in enumerate(inputs)]
        outputs, register_param = fn(in_vars)
        for key in params:
            register_param(key)
        if not outputs:
            raise CaptureError("the differentiated function returned nothing")
        target = outputs[0]
        if static_shape(target) != () or not dtype_of(target).startswith("float"):
            raise CaptureError(f"gradients need a float scalar as the first output, got "
                               f"{dtype_of(target)}{list(static_shape(target))}")
        num_updates = len(inner.param_updates)
        mod = inner.finish(outputs)
    index_of = {id(k): i for i, k in enumerate(inner.param_keys)}
    require = [inner.inputs[i] for i in grad_inputs] + [inner.param_vars[index_of[id(k)]] for k in params]
    require += [var for var, _ in inner.grad_probes]
    try:
        mod = relax.transform.InlinePrivateFunctions()(mod)  # nested gradients (double backward)
        mod = relax.transform.Gradient("main", require_grads=require, target_index=0)(mod)
    except Exception as err:  # TVM names the op without a gradient rule
        last = str(err).strip().splitlines()[-1]
        missing = re.search(r"FPrimalGradient has not been registered for (\S+)", last)
        if missing:
            raise CaptureError(f"cannot differentiate this network: the op {missing.group(1)} has no gradient "
                               f"rule (add one in relay_frontend/gradients.py)") from None
        raise CaptureError(f"cannot differentiate this network: {last}") from None
    adjoint = _move_kernels(outer, mod, mod["main_adjoint"].without_attr("global_symbol"))
    gvar = outer.builder.add_func(adjoint, "grad_fn")
    # random samples drawn inside fn (dropout masks, sampled classes) are inputs of the sub-function too,
    # and so are gradient probes (zeros)
    randoms = iter(inner.random_inputs)
    extras = []
    for name, var in zip(inner.input_names[len(inputs):], inner.inputs[len(inputs):]):
        if name.startswith("__probe"):
            extras.append(outer.emit(relax.op.zeros(static_shape(var), dtype_of(var)), "probe"))
        else:
            shape, dtype = next(randoms)
            extras.append(outer.random_input(shape, dtype))
    args = list(inputs) + extras + [param_expr(key) for key in inner.param_keys]
    call = outer.emit(relax.Call(gvar, args), "grad_call")
    forward = outer.emit(relax.TupleGetItem(call, 0), "forward")
    grads = outer.emit(relax.TupleGetItem(call, 1), "grads")
    total = len(outputs) + num_updates
    values = [outer.emit(relax.TupleGetItem(forward, i)) for i in range(total)]
    grad_values = [outer.emit(relax.TupleGetItem(grads, i)) for i in range(len(require))]
    for (param_index, _), value in zip(inner.param_updates, values[len(outputs):]):
        outer.update_param(inner.param_keys[param_index], value)
    probe_grads = grad_values[len(require) - len(inner.grad_probes):]
    for (_, on_grad), grad in zip(inner.grad_probes, probe_grads):
        on_grad(grad)
    return GradResult(values[:len(outputs)], grad_values[:len(grad_inputs)],
                      grad_values[len(grad_inputs):len(grad_inputs) + len(params)], list(params))
