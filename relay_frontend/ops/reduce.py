"""Lowering rules for reductions."""
from __future__ import annotations

from tvm import relax

from ..capture import static_shape
from .common import cast, emit, normalize_axes, normalize_axis
from .registry import rule

_op = relax.op


def _reduction(name: str, fn) -> None:
    @rule(name)
    def lower(x, axis=None, keep_dims=False):
        return fn(x, axis=normalize_axes(axis, len(static_shape(x))), keepdims=bool(keep_dims))


for _name, _fn in {"sum": _op.sum, "mean": _op.mean, "max": _op.max, "min": _op.min, "prod": _op.prod}.items():
    _reduction(_name, _fn)


def _arg_reduction(name: str, fn) -> None:
    @rule(name)
    def lower(x, axis=None, keep_dims=False, dtype="int64"):
        if axis is None:
            out = fn(_op.reshape(x, [-1]), axis=0, keepdims=False)
        else:
            out = fn(x, axis=normalize_axis(axis, len(static_shape(x))), keepdims=bool(keep_dims))
        return cast(emit(out), dtype)  # emitted first: cast needs the result's dtype


_arg_reduction("argmax", _op.argmax)
_arg_reduction("argmin", _op.argmin)
