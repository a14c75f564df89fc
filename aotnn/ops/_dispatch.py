"""Every op call goes through here: emitted into the graph being captured, or run eagerly.

Eager calls are not computed by a numpy twin: the single op is captured, compiled (cached by
its signature in memory and by content hash on disk) and run through the runtime, so an eager
call exercises exactly the code a compiled network uses.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax

import relay_frontend
from relay_frontend.ops import lookup

from ..common.buffer import Buffer
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from ..jit import mixed_precision

_EAGER_CACHE: dict[Any, Any] = {}


def _to_expr(value: Any, capture: relay_frontend.Capture) -> Any:
    if isinstance(value, Tensor):
        if value.is_symbolic:
            owner = getattr(value, "_owner", None)
            if owner is not None and owner is not capture:
                raise relay_frontend.CaptureError(
                    "a tensor computed outside the function being differentiated was used inside it; "
                    "pass it to that function as an argument instead of closing over it")
            return value._expr
        if isinstance(value, (Parameter, Buffer)):
            var = capture.param(value, value.name, value.shape, value.dtype.name)
            compute = mixed_precision.current_dtype()
            if compute is not None and value.dtype.is_float and value.dtype != compute:
                var = capture.emit(relax.op.astype(var, compute.name), "cast_param")
            return var
        return relax.const(value._data)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        return type(value)(_to_expr(v, capture) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _wrap(capture: relay_frontend.Capture, out: Any, name: str) -> Any:
    if isinstance(out, relax.Tuple):
        return tuple(Tensor._from_expr(capture.emit(field, name)) for field in out.fields)
    if isinstance(out, (list, tuple)):
        return type(out)(_wrap(capture, item, name) for item in out)
    return Tensor._from_expr(capture.emit(out, name))


def apply(op: str, *args: Any, **attrs: Any) -> Any:
    """Run op ``op`` on ``args``: emit it when capturing, else compile-and-run it eagerly."""
    capture = relay_frontend.current()
    if capture is not None:
        rule = lookup(op)
        exprs = [_to_expr(a, capture) for a in args]
        return _wrap(capture, rule(*exprs, **attrs), op)
    return _run_eager(op, args, attrs)


def _signature(value: Any) -> Any:
    if isinstance(value, Tensor):
        return ("T", value.shape, value.dtype.name)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_signature(v) for v in value))
    return ("C", repr(value))


def _run_eager(op: str, args: tuple, attrs: dict) -> Any:
    from ..jit.compiled import compile_function

    from ..jit.tensor_tree import fill_tensors, split_tensors

    tensors: list[Tensor] = []
    template = split_tensors(args, tensors)
    if not tensors:
        raise TypeError(f"{op}: expected at least one Tensor argument, got {[type(a).__name__ for a in args]}")
    key = (op, _signature(args), repr(sorted(attrs.items())))
    compiled = _EAGER_CACHE.get(key)
    if compiled is None:
        def single_op(*symbolic):
            return apply(op, *fill_tensors(template, symbolic), **attrs)

        specs = [(f"x{i}", t.shape, t.dtype.name) for i, t in enumerate(tensors)]
        compiled = compile_function(single_op, specs)
        _EAGER_CACHE[key] = compiled
    return compiled([t._data for t in tensors])
