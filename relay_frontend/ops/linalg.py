"""Lowering rules for matrix products."""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of
from ..errors import CaptureError, DTypeMismatchError
from .common import ndim
from .registry import rule


def same_dtype(op: str, *tensors: relax.Expr) -> None:
    """Raise DTypeMismatchError if the tensors' dtypes differ (conv and matmul do not promote)."""
    dtypes = [dtype_of(t) for t in tensors]
    if len(set(dtypes)) > 1:
        raise DTypeMismatchError(f"{op}: operands must have one dtype, got {', '.join(dtypes)}")


def _swap_last(x: relax.Expr) -> relax.Expr:
    rank = ndim(x)
    axes = list(range(rank))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return relax.op.permute_dims(x, axes)


@rule("matmul")
def matmul(a, b, transpose_a: bool = False, transpose_b: bool = False):
    same_dtype("matmul", a, b)
    if ndim(a) < 1 or ndim(b) < 1:
        raise CaptureError("matmul: operands must have at least one dimension")
    if transpose_a:
        a = _swap_last(a)
    if transpose_b:
        b = _swap_last(b)
    return relax.op.matmul(a, b)


@rule("dense")
def dense(x, weight, bias=None):
    """``x @ weight.T + bias`` with weight laid out (out_channels, in_channels) as MindSpore's Dense."""
    same_dtype("dense", x, weight)
    out = relax.op.matmul(x, relax.op.permute_dims(weight, [1, 0]))
    if bias is not None:
        same_dtype("dense", x, bias)
        out = relax.op.add(out, bias)
    return out
