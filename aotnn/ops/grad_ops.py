"""Gradients: ``GradOperation``, ``value_and_grad`` and ``grad``, computed inside the compiled graph.

Inside a network being captured (a training step), a gradient call becomes one call of the
forward function's adjoint (Relax's reverse-mode autodiff), inlined into the same graph.
Called on concrete tensors, the same capture is compiled and run once per signature.
"""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import relay_frontend
from relay_frontend.autodiff import grad_call

from ..common.parameter import Parameter
from ..common.tensor import Tensor
from ._dispatch import _to_expr

# per function object (not its id: a collected lambda's id can be reused by another one)
_EAGER: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _as_params(weights) -> list[Parameter]:
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    params = list(weights)
    for p in params:
        if not isinstance(p, Parameter):
            raise TypeError(f"weights: expected Parameters, got {type(p).__name__}")
    return params


def _differentiate(fn: Callable, args: Sequence[Any], positions: Sequence[int], weights: list[Parameter],
                   sens: Tensor | None) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """(outputs, input grads, weight grads) of ``fn(*args)``; the target is the first output
    (times ``sens`` and summed when ``sens`` is given or the output is not a scalar)."""
    capture = relay_frontend.current()
    if capture is None:
        return _differentiate_eagerly(fn, args, positions, weights, sens)
    tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    for p in positions:
        if p not in tensor_positions:
            raise TypeError(f"grad_position: input {p} is not a Tensor")
    inputs = [_to_expr(args[i], capture) for i in tensor_positions]
    sens_expr = _to_expr(sens, capture) if isinstance(sens, Tensor) else None
    if sens_expr is not None:
        inputs.append(sens_expr)

    def trace(in_vars):
        symbolic = [Tensor._from_expr(v) for v in in_vars]
        call_args = list(args)
        for slot, i in enumerate(tensor_positions):
            call_args[i] = symbolic[slot]
        out = fn(*call_args)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        first = outs[0]
        if sens_expr is not None:
            first = (first * symbolic[-1]).sum()
        elif first.shape != ():
            first = first.sum()
        inner = relay_frontend.current()
        return [first._expr] + [o._expr for o in outs], (lambda key: _to_expr(key, inner))

    grad_slots = [tensor_positions.index(p) for p in positions]
    result = grad_call(trace, inputs, grad_slots, weights, lambda key: _to_expr(key, capture))
    outputs = [Tensor._from_expr(v) for v in result.outputs[1:]]
    return (outputs, [Tensor._from_expr(v) for v in result.input_grads],
            [Tensor._from_expr(v) for v in result.param_grads])


def _differentiate_eagerly(fn, args, positions, weights, sens):
    from ..jit.compiled import compile_function
    from ..nn.cell import Cell, _version
    tensors = [a for a in args if isinstance(a, Tensor)] + ([sens] if isinstance(sens, Tensor) else [])
    flags = tuple((id(c), c.training) for _, c in fn.cells_and_names()) if isinstance(fn, Cell) else ()
    key = (_version[0], flags, tuple(id(w) for w in weights), tuple(positions), sens is None,
           tuple((i, a.shape, a.dtype.name) if isinstance(a, Tensor) else (i, repr(a)) for i, a in enumerate(args)),
           None if sens is None else (sens.shape, sens.dtype.name))
    cache = _EAGER.setdefault(fn, {})
    compiled = cache.get(key)
    if compiled is None:
        def traced(*symbolic):
            call_args, k = list(args), 0
            for i, a in enumerate(args):
                if isinstance(a, Tensor):
                    call_args[i], k = symbolic[k], k + 1
            sens_sym = symbolic[k] if isinstance(sens, Tensor) else None
            return tuple(tuple(group) for group in _differentiate(fn, call_args, positions, weights, sens_sym))
        specs = [(f"x{i}", t.shape, t.dtype.name) for i, t in enumerate(tensors)]
        compiled = compile_function(traced, specs)
        cache[key] = compiled
    outputs, input_grads, weight_grads = compiled([t._data for t in tensors])
    return list(outputs), list(input_grads), list(weight_grads)


def _pack(input_grads, weight_grads, positions_given, single_position, with_weights):
    inputs_part = input_grads[0] if single_position else tuple(input_grads)
    if with_weights and positions_given:
        return inputs_part, tuple(weight_grads)
    if with_weights:
        return tuple(weight_grads)
    return inputs_part


class GradOperation:
    """MindSpore's ``ops.GradOperation``: a higher-order function that returns gradient functions.

    Args:
        get_all: gradients for all inputs (else only the first).
        get_by_list: gradients for the ``weights`` given at call time.
        sens_param: the gradient function takes an extra last input, the output's sensitivity.
    """

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn: Callable, weights=None) -> Callable:
        params = _as_params(weights) if self.get_by_list else []

        def after_grad(*args):
            sens = None
            if self.sens_param:
                *args, sens = args
            tensor_positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            positions = tensor_positions if self.get_all else tensor_positions[:1]
            if self.get_by_list and not self.get_all:
                positions = []
            _, input_grads, weight_grads = _differentiate(fn, args, positions, params, sens)
            if self.get_by_list and self.get_all:
                return tuple(input_grads), tuple(weight_grads)
            if self.get_by_list:
                return tuple(weight_grads)
            return tuple(input_grads) if self.get_all else input_grads[0]

        return after_grad


def _positions(grad_position, args) -> tuple[list[int], bool]:
    if grad_position is None:
        return [], False
    if isinstance(grad_position, int):
        return [grad_position], True
    return [int(p) for p in grad_position], False


def value_and_grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False) -> Callable:
    """``fn``'s value and its gradients (MindSpore's ``ops.value_and_grad``).

    Args:
        fn: a Cell or function of Tensors; its first output is differentiated (summed if not scalar).
        grad_position: input index, tuple of indices, or None (weights only).
        weights: Parameters to differentiate too.
        has_aux: ``fn`` returns a tuple whose first item is the differentiated value.
    Returns:
        a function returning ``(value, grads)``.
    """
    params = _as_params(weights)
    if grad_position is None and not params:
        raise ValueError("grad_position and weights cannot both be None")

    def wrapped(*args):
        positions, single = _positions(grad_position, args)
        outputs, input_grads, weight_grads = _differentiate(fn, args, positions, params, None)
        value = outputs[0] if len(outputs) == 1 else tuple(outputs)
        return value, _pack(input_grads, weight_grads, grad_position is not None, single, bool(params))

    return wrapped


def grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False) -> Callable:
    """``fn``'s gradients (MindSpore's ``ops.grad``); see :func:`value_and_grad`."""
    inner = value_and_grad(fn, grad_position, weights, has_aux)

    def wrapped(*args):
        value, grads = inner(*args)
        if has_aux:
            aux = value[1:] if isinstance(value, tuple) else ()
            return grads, aux
        return grads

    return wrapped


__all__ = ["GradOperation", "value_and_grad", "grad"]
