"""Checks and small compositions shared by the losses.

Compositions use only ops that ``relax.transform.Gradient`` differentiates (exp, log, abs,
maximum, where, comparisons, sums, casts), so that training graphs through a loss need no
extra gradient rules.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor

FLOAT_TYPES = (mstype.float16, mstype.float32)


def check_tensor(value: Any, name: str, cls_name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{cls_name}', the '{name}' must be a Tensor, but got {type(value).__name__}.")
    return value


def check_float_tensor(value: Any, name: str, cls_name: str, allowed=FLOAT_TYPES) -> Tensor:
    check_tensor(value, name, cls_name)
    if value.dtype not in allowed:
        raise TypeError(f"For '{cls_name}', the dtype of '{name}' must be one of "
                        f"{[str(d) for d in allowed]}, but got {value.dtype}.")
    return value


def check_same_shape(a: Tensor, b: Tensor, name_a: str, name_b: str, cls_name: str) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise ValueError(f"For '{cls_name}', the shape of '{name_a}' must be the same as '{name_b}', "
                         f"but got {tuple(a.shape)} and {tuple(b.shape)}.")


def broadcast_shape(a: Tensor, b: Tensor, cls_name: str) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ValueError(f"For '{cls_name}', 'logits' shape {tuple(a.shape)} and 'labels' shape "
                         f"{tuple(b.shape)} cannot be broadcast to each other.") from None


def check_logits_labels(logits: Any, labels: Any, cls_name: str, floats: bool = False,
                        same_shape: bool = True) -> None:
    """``logits`` and ``labels`` Tensors (float16/float32 ones when ``floats``) of one shape, or, unless
    ``same_shape``, of shapes that broadcast together."""
    check = check_float_tensor if floats else check_tensor
    check(logits, 'logits', cls_name)
    check(labels, 'labels', cls_name)
    if same_shape:
        check_same_shape(logits, labels, 'logits', 'labels', cls_name)
    else:
        broadcast_shape(logits, labels, cls_name)


def check_positive_float(value: Any, name: str, cls_name: str) -> float:
    """MindSpore's ``check_positive_float``: a Python float > 0 (an int is a TypeError)."""
    if isinstance(value, bool) or not isinstance(value, float):
        raise TypeError(f"For '{cls_name}', the '{name}' must be float, but got {type(value).__name__}.")
    if not value > 0:
        raise ValueError(f"For '{cls_name}', the '{name}' must be float and must > 0, but got {value}.")
    return value


def wide(x: Tensor) -> Tensor:
    """``x`` in float32 when it is float16 (for exp/log chains), else unchanged."""
    return ops.cast(x, mstype.float32) if x.dtype == mstype.float16 else x


def softplus(x: Tensor) -> Tensor:
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log(1 + exp(-|x|))``."""
    return ops.maximum(x, 0.0) + ops.log(ops.exp(ops.neg(ops.abs(x))) + 1.0)


def one_hot(indices: Tensor, depth: int, axis: int = -1, dtype=mstype.float32) -> Tensor:
    """One-hot encoding by comparison with ``0..depth-1`` placed on ``axis`` of the result.

    Negative indices count from the end (``-1`` is class ``depth - 1``).
    """
    indices = ops.cast(indices, mstype.int32)
    indices = ops.select(ops.less(indices, 0), indices + depth, indices)
    rank = len(indices.shape) + 1
    axis = axis % rank
    classes = Tensor(np.arange(depth, dtype=np.int32).reshape([depth if i == axis else 1 for i in range(rank)]))
    return ops.cast(ops.equal(ops.expand_dims(indices, axis), classes), dtype)


def log_softmax(x: Tensor, axis: int) -> Tensor:
    """Log-softmax computed in float32 for float16 input; the result keeps float32."""
    return ops.log_softmax(wide(x), axis)
