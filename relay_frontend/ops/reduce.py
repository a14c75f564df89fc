"""Lowering rules for reductions."""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of, static_shape
from .common import cast, emit, normalize_axes, normalize_axis
from .registry import rule

_op = relax.op


def _reduction(name: str, fn) -> None:
    @rule(name)
    def lower(x, axis=None, keep_dims=False):
        return fn(x, axis=normalize_axes(axis, len(static_shape(x))), keepdims=bool(keep_dims))


for _name, _fn in {"sum": _op.sum, "mean": _op.mean, "max": _op.max, "min": _op.min, "prod": _op.prod}.items():
    _reduction(_name, _fn)


def nan_first_arg(fn, x: relax.Expr, axis: int, keepdims: bool = False) -> relax.Expr:
    """``fn`` (``argmax``/``argmin``) along ``axis``, where a NaN counts as the extreme: the index of
    the first NaN where there is one, as PyTorch and numpy answer (TVM's comparisons skip NaNs)."""
    if "float" not in dtype_of(x):
        return fn(x, axis=axis, keepdims=keepdims)
    nan = emit(_op.astype(_op.isnan(x), "int32"))
    first_nan = emit(_op.argmax(nan, axis=axis, keepdims=keepdims))
    any_nan = emit(_op.greater(_op.max(nan, axis=axis, keepdims=keepdims), relax.const(0, "int32")))
    return _op.where(any_nan, first_nan, emit(fn(x, axis=axis, keepdims=keepdims)))


def _arg_reduction(name: str, fn) -> None:
    @rule(name)
    def lower(x, axis=None, keep_dims=False, dtype="int64"):
        if axis is None:
            out = nan_first_arg(fn, emit(_op.reshape(x, [-1])), 0)
        else:
            out = nan_first_arg(fn, x, normalize_axis(axis, len(static_shape(x))), bool(keep_dims))
        return cast(emit(out), dtype)  # emitted first: cast needs the result's dtype


_arg_reduction("argmax", _op.argmax)
_arg_reduction("argmin", _op.argmin)
