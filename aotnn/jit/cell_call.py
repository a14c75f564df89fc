"""Compiling a Cell's construct for one input signature, and calling the result."""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

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
    params = tuple((id(p), p.shape, p.dtype.name) for p in cell.get_parameters())
    return (_version[0], sig(args), sig(tuple(sorted(kwargs.items()))), cells, params)


def compiled_for(cell, args: tuple, kwargs: dict) -> tuple[Compiled, list[Tensor]]:
    """The compiled construct for these arguments (built on first use) and the tensor inputs."""
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
