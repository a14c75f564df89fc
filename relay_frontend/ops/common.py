"""Helpers shared by lowering rules: scalars, dtype promotion, axis normalisation."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError

_FLOAT_KINDS = "f"


def is_tensor(value) -> bool:
    return isinstance(value, relax.Expr)


def promote(a, b) -> tuple[relax.Expr, relax.Expr]:
    """Make a binary op's operands two tensors of one dtype, as MindSpore's implicit promotion does.

    Two tensors of different dtypes meet at numpy's result type, except that an integer or bool
    tensor with a float one gives the float one's dtype (MindSpore's rule). A Python scalar takes the
    tensor's dtype, except a float scalar with an integer or bool tensor, which gives float32.
    """
    if is_tensor(a) and is_tensor(b):
        if dtype_of(a) != dtype_of(b):
            kinds = {np.dtype(dtype_of(a)).kind, np.dtype(dtype_of(b)).kind}
            if "f" in kinds and len(kinds) > 1:  # MindSpore: int/bool with float gives that float type
                target = dtype_of(a) if np.dtype(dtype_of(a)).kind == "f" else dtype_of(b)
            else:
                target = str(np.result_type(dtype_of(a), dtype_of(b)))
            return cast(a, target), cast(b, target)
        return a, b
    if not (is_tensor(a) or is_tensor(b)):
        raise CaptureError("binary op: at least one operand must be a tensor")
    tensor, scalar = (a, b) if is_tensor(a) else (b, a)
    if isinstance(scalar, float) and np.dtype(dtype_of(tensor)).kind != "f":
        tensor = cast(tensor, "float32")
    constant = scalar_like(scalar, tensor)
    return (tensor, constant) if is_tensor(a) else (constant, tensor)


def scalar_like(value, like: relax.Expr) -> relax.Expr:
    """A constant scalar with ``like``'s dtype (float32 if ``value`` is a float and ``like`` is not)."""
    dtype = dtype_of(like)
    if isinstance(value, (bool, np.bool_)) and dtype != "bool":
        value = int(value)
    if isinstance(value, float) and np.dtype(dtype).kind not in _FLOAT_KINDS:
        raise CaptureError("scalar promotion to float must cast the tensor first")
    return relax.const(value, dtype)


def cast(x: relax.Expr, dtype: str) -> relax.Expr:
    # emitted so that callers can read the result's dtype (an unemitted call has no tensor type yet)
    return x if dtype_of(x) == dtype else emit(relax.op.astype(x, dtype))


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise CaptureError(f"{what}: expected a value in [{-ndim}, {ndim}), got {axis}")
    return axis % max(ndim, 1)


def normalize_axes(axis, ndim: int) -> list[int] | None:
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return None
    if isinstance(axis, int):
        axis = [axis]
    return [normalize_axis(int(a), ndim) for a in axis]


def ndim(x: relax.Expr) -> int:
    return len(static_shape(x))


def as_pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    if isinstance(value, Sequence) and len(value) == 2:
        return int(value[0]), int(value[1])
    raise CaptureError(f"{what}: expected an int or a pair of ints, got {value!r}")


def emit(expr: relax.Expr) -> relax.Var:
    """Emit an intermediate of a multi-op rule so that later ops see its type."""
    return relax.BlockBuilder.current().emit(expr)
