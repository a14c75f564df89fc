"""Capture: records a traced function into a Relax IRModule.

The caller (aotnn's jit driver) creates a :class:`Capture`, makes symbolic tensors from
:meth:`Capture.input`, runs the user's ``construct`` with them, and passes the results
to :meth:`Capture.finish`. Parameters become function inputs the first time an op uses
them, so the module's inputs are exactly the data and the parameters it reads.
"""
from __future__ import annotations

import re

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax

from .errors import CaptureError

_state = threading.local()


def current() -> Capture | None:
    """The capture active on this thread, or None when running eagerly."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


def tensor_type(shape: Sequence[int], dtype: str) -> relax.TensorType:
    """The Relax type of a static-shape tensor."""
    return relax.TensorType([int(dim) for dim in shape], str(dtype))


def static_shape(expr: relax.Expr) -> tuple[int, ...]:
    """Static shape of a tensor-typed Relax expression."""
    ty = expr.ty
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise CaptureError(f"expected a tensor with a static shape, got {ty}")
    return tuple(int(dim) for dim in ty.shape.values)


def dtype_of(expr: relax.Expr) -> str:
    """Element type of a tensor-typed Relax expression, as a numpy-style string."""
    return str(expr.ty.dtype)


def _identifier(name: str) -> str:
    """``name`` as a C/WGSL identifier: kernel generators name buffers after Relax variables, and a
    parameter such as ``0.weight`` (a SequentialCell child) would make ``0_weight``, which no
    compiler accepts. The user-facing names (``param_names``, ``input_names``) stay unchanged."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return text if text[:1].isalpha() or text[:1] == "_" else f"v_{text}"


class Capture:
    """Builds one Relax function, ``main``, from traced op calls."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.builder = relax.BlockBuilder()
        self.inputs: list[relax.Var] = []
        self.input_names: list[str] = []
        self.param_vars: list[relax.Var] = []
        self.param_names: list[str] = []
        self.param_keys: list[Any] = []
        self._param_index: dict[int, int] = {}
        self.param_updates: list[tuple[int, relax.Expr]] = []
        self.random_inputs: list[tuple[tuple[int, ...], str]] = []
        self.grad_probes: list[tuple[relax.Var, Any]] = []
        self.differentiating = False  # set by autodiff.grad_call on the capture it differentiates
        self._function_scope = None
        self._dataflow_scope = None

    def __enter__(self) -> Capture:
        self._function_scope = self.builder.function(self.name)
        self._function_scope.__enter__()
        self._dataflow_scope = self.builder.dataflow()
        self._dataflow_scope.__enter__()
        if not hasattr(_state, "stack"):
            _state.stack = []
        _state.stack.append(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        _state.stack.pop()
        if exc_type is not None:
            # The builder cannot be closed cleanly half-way; drop it.
            self.builder = None

    def input(self, name: str, shape: Sequence[int], dtype: str) -> relax.Var:
        """Declare a data input of the function."""
        var = relax.Var(_identifier(name), ty=tensor_type(shape, dtype))
        self.inputs.append(var)
        self.input_names.append(name)
        return var

    def random_input(self, shape: Sequence[int], dtype: str) -> relax.Var:
        """An input the caller fills with fresh U[0, 1) samples on every call (dropout masks...)."""
        var = self.input(f"__random{len(self.random_inputs)}", shape, dtype)
        self.random_inputs.append((tuple(int(d) for d in shape), str(dtype)))
        return var

    def grad_probe(self, expr: relax.Expr, on_grad: Any) -> relax.Expr:
        """``expr`` plus a zero input whose gradient (the gradient of ``expr``) is passed, once the function
        is differentiated, to ``on_grad(gradient_expr)`` inside the enclosing graph (THOR layers save
        statistics of their output gradients this way). Outside a differentiated capture: ``expr``."""
        if not self.differentiating:
            return expr
        var = self.input(f"__probe{len(self.grad_probes)}", static_shape(expr), dtype_of(expr))
        self.grad_probes.append((var, on_grad))
        return self.emit(relax.op.add(expr, var), "probed")

    def param(self, key: Any, name: str, shape: Sequence[int], dtype: str) -> relax.Var:
        """The Relax variable of a parameter, created on first use. ``key`` identifies it."""
        index = self._param_index.get(id(key))
        if index is None:
            index = len(self.param_vars)
            self._param_index[id(key)] = index
            unique, suffix = name, 1
            while unique in self.param_names or unique in self.input_names:
                unique, suffix = f"{name}_{suffix}", suffix + 1
            self.param_vars.append(relax.Var(_identifier(unique), ty=tensor_type(shape, dtype)))
            self.param_names.append(unique)
            self.param_keys.append(key)
        return self.param_vars[index]

    def has_param(self, key: Any) -> bool:
        return id(key) in self._param_index

    def update_param(self, key: Any, value: relax.Expr) -> None:
        """Record that the parameter ``key`` takes ``value`` after the call (an in-place update)."""
        if id(key) not in self._param_index:
            raise CaptureError("update_param: the parameter was never read in this graph")
        self.param_updates.append((self._param_index[id(key)], value))

    def pending_value(self, key: Any) -> relax.Expr | None:
        """The value most recently recorded for parameter ``key`` by :meth:`update_param` in this graph
        (what the parameter will hold after the call), or None."""
        index = self._param_index.get(id(key))
        for updated, value in reversed(self.param_updates):
            if updated == index:
                return value
        return None

    def guard_updates(self, since: int, keep_old: relax.Expr) -> None:
        """Make the parameter updates recorded from position ``since`` on conditional: where the
        boolean scalar ``keep_old`` is true, each parameter keeps its value (e.g. a skipped
        optimizer step after a gradient overflow)."""
        for i in range(since, len(self.param_updates)):
            index, value = self.param_updates[i]
            old = self.param_vars[index]
            self.param_updates[i] = (index, self.emit(relax.op.where(keep_old, old, value), "guarded"))

    def emit(self, expr: relax.Expr, name_hint: str = "") -> relax.Var:
        """Emit one binding and return its variable."""
        try:
            return self.builder.emit(expr, name_hint=name_hint)
        except Exception as err:  # TVM's shape/type inference reports bad op arguments here.
            raise CaptureError(f"{name_hint or 'op'}: {str(err).strip().splitlines()[-1]}") from None

    @staticmethod
    def constant(value: np.ndarray | float | int, dtype: str) -> relax.Expr:
        """A constant embedded in the graph."""
        return relax.const(np.asarray(value, dtype=dtype) if np.ndim(value) else value, dtype)

    def finish(self, outputs: Sequence[relax.Expr]) -> tvm.IRModule:
        """Close the function with ``outputs`` (then every recorded parameter update) and return the module.

        The function returns a tuple expression of the output variables (a form autodiff accepts).
        """
        values = list(outputs) + [value for _, value in self.param_updates]
        if not values:
            raise CaptureError("construct returned no tensor")
        results = [self.builder.emit_output(value) for value in values]
        self._dataflow_scope.__exit__(None, None, None)
        self.builder.emit_func_output(relax.Tuple(results), params=self.inputs + self.param_vars)
        self._function_scope.__exit__(None, None, None)
        return self.builder.get()
