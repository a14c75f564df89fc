"""Compiling a Cell's construct for one input signature, and calling the result."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from relay_frontend import current as current_capture

from ..common.parameter import PARAMETER_STATE
from ..common.tensor import Tensor
from .compiled import Compiled, compile_function
from .tensor_tree import fill_tensors, split_tensors


def _input_names(cell, count: int) -> list[str]:
    try:
        params = list(inspect.signature(cell.construct).parameters.values())
    except (TypeError, ValueError):
        params = []
    names: list[str] = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += [f"{p.name}{i}" for i in range(count - len(names))]
    names += [f"input{i}" for i in range(len(names), count)]
    return names[:count]


def _signature(cell, args: tuple, kwargs: dict) -> tuple:
    from ..nn.cell import _version
    def sig(value):
        if isinstance(value, Tensor):
            return ("T", value.shape, value.dtype.name)
        if isinstance(value, (list, tuple)):
            return tuple(sig(v) for v in value)
        if hasattr(value, "_tree_parts"):  # a COOTensor/CSRTensor: its tensors are inputs, not constants
            return (type(value).__name__, sig(value._tree_parts()))
        return ("C", repr(value))
    cells = tuple((id(c), c.training, str(c._mixed_precision)) for _, c in cell.cells_and_names())
    params = tuple((id(p), *_param_layout(p)) for p in cell.get_parameters())
    return (_version[0], sig(args), sig(tuple(sorted(kwargs.items()))), cells, params)


def _param_layout(param) -> tuple:
    """(shape, dtype) of a parameter's value, read from its array (``Parameter.dtype`` costs
    microseconds: it maps the numpy dtype to MindSpore's each time)."""
    data = param._data
    return (param.shape, param.dtype.name) if data is None else (data.shape, data.dtype)


class _CallMemo:
    """What the last plain call of a cell (Tensors only, no keyword arguments) resolved to, and
    what it depended on: the structure version (sub-cells, parameters, modes, hooks), the input
    layouts and the parameters' layouts (checked again only when a parameter's version moved, and
    looked at only when some Parameter of the process changed since the last check)."""

    __slots__ = ("structure", "inputs", "params", "versions", "layouts", "compiled", "state", "direct")

    def __init__(self, structure: int, inputs: tuple, params: list, compiled: Compiled, direct: bool = False):
        self.structure, self.inputs, self.params, self.compiled = structure, inputs, params, compiled
        # the cell has no hooks of its own and runs compiled (no child hooks, nothing eager): a
        # repeated call may go straight to the compiled function (``call_memoized``); registering
        # a hook moves the structure version, so this holds as long as ``structure`` does
        self.direct = direct
        self.state = PARAMETER_STATE[0]
        self.versions = tuple(p._version for p in params)
        self.layouts = tuple(_param_layout(p) for p in params)

    def params_unchanged(self) -> bool:
        if self.state == PARAMETER_STATE[0]:
            return True
        state = PARAMETER_STATE[0]
        versions = tuple(p._version for p in self.params)
        if versions == self.versions:
            self.state = state
            return True
        if tuple(_param_layout(p) for p in self.params) != self.layouts:
            return False
        self.versions = versions  # new values in the same layout: the same compiled function
        self.state = state
        return True


def _plain_inputs(args: tuple) -> tuple | None:
    """The (shape, dtype) of each argument when every one is a concrete Tensor, else None."""
    layouts = []
    for value in args:
        if type(value) is not Tensor or value._expr is not None:
            return None
        layouts.append((value._data.shape, value._data.dtype))
    return tuple(layouts)


def compiled_for(cell, args: tuple, kwargs: dict) -> tuple[Compiled, list[Tensor]]:
    """The compiled construct for these arguments (built on first use) and the tensor inputs."""
    from ..nn.cell import _version
    plain = None if kwargs else _plain_inputs(args)
    memo = cell.__dict__.get("_call_memo")
    if (plain is not None and memo is not None and memo.structure == _version[0] and memo.inputs == plain
            and memo.params_unchanged()):
        return memo.compiled, list(args)
    compiled, tensors = _compiled_for(cell, args, kwargs)
    if plain is not None:
        direct = not (cell._forward_pre_hooks or cell._forward_hooks or cell._runs_eagerly())
        object.__setattr__(cell, "_call_memo",
                           _CallMemo(_version[0], plain, list(cell.get_parameters()), compiled, direct))
    return compiled, tensors


_NOT_MEMOIZED = object()


def call_memoized(cell, args: tuple, structure: int) -> Any:
    """The result of calling ``cell`` on ``args`` (concrete Tensors, no keyword arguments) when the
    last such call's compiled function still applies and nothing else is to run (no hooks, no
    eager children, no capture under way); else ``_NOT_MEMOIZED``, and the full call path runs.
    ``structure`` is the cells' structure version now.

    A repeated call runs on caches the kernels of the last call evicted: every lookup the full
    path makes (hooks, the eager plan, the capture stack) costs microseconds there.
    """
    memo = cell.__dict__.get("_call_memo")
    if memo is None or not memo.direct or memo.structure != structure or current_capture() is not None:
        return _NOT_MEMOIZED
    if _plain_inputs(args) != memo.inputs or not memo.params_unchanged():
        return _NOT_MEMOIZED
    return memo.compiled([t._data for t in args])


def _compiled_for(cell, args: tuple, kwargs: dict) -> tuple[Compiled, list[Tensor]]:
    tensors: list[Tensor] = []
    template_args = split_tensors(args, tensors)
    template_kwargs = split_tensors(kwargs, tensors)
    if any(t.is_symbolic for t in tensors):
        raise TypeError("a symbolic tensor reached a top-level Cell call")
    key = _signature(cell, args, kwargs)
    compiled = cell._jit_cache.get(key)
    if compiled is None:
        def run_construct(*symbolic):
            call_args = fill_tensors(template_args, symbolic)
            call_kwargs = fill_tensors(template_kwargs, symbolic)
            return cell._construct_with_precision(call_args, call_kwargs)

        names = _input_names(cell, len(tensors))
        specs = [(name, t.shape, t.dtype.name) for name, t in zip(names, tensors)]
        compiled = compile_function(run_construct, specs)
        cell._jit_cache.clear()
        cell._jit_cache[key] = compiled
    return compiled, tensors


def call_compiled(cell, args: tuple, kwargs: dict) -> Any:
    compiled, tensors = compiled_for(cell, args, kwargs)
    return compiled([t._data for t in tensors])
