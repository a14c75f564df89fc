"""MindSpore 2.x functional classification losses: ``nll_loss``, ``cross_entropy``,
``binary_cross_entropy_with_logits`` and ``kl_div``, composed from differentiable element-wise ops and reductions."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F

__all__ = ['nll_loss', 'cross_entropy', 'binary_cross_entropy_with_logits', 'binary_cross_entropy',
           'kl_div']

_REDUCTIONS = ("mean", "sum", "none")
_INDEX_TYPES = (mstype.int32, mstype.int64)


def _check(op: str, input: Any, target: Any, weight: Any, reduction: Any, label_smoothing: Any) -> None:  # noqa: A002
    if not isinstance(input, Tensor) or not input.dtype.is_float:
        raise TypeError(f"{op}: input must be a float Tensor, got {getattr(input, 'dtype', type(input).__name__)}")
    if not isinstance(target, Tensor):
        raise TypeError(f"{op}: target must be a Tensor, got {type(target).__name__}")
    if input.ndim < 1:
        raise ValueError(f"{op}: input must have a class axis, got a scalar")
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and (not isinstance(weight, Tensor) or tuple(weight.shape) != (classes,)):
        raise ValueError(f"{op}: weight must be a Tensor of shape ({classes},), got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)) \
            or not 0 <= label_smoothing <= 1:
        raise ValueError(f"{op}: label_smoothing must be a float in [0, 1], got {label_smoothing!r}")


def _class_view(values: Tensor, rank: int) -> Tensor:
    """A (C,) tensor shaped to broadcast along axis 1 of a rank-``rank`` input."""
    return F.reshape(values, (1, -1) + (1,) * (rank - 2)) if rank > 1 else values


def _one_hot(target: Tensor, classes: int, rank: int) -> Tensor:
    """float32 one-hot of class indices on axis 1 (axis 0 for an unbatched input); out-of-range is all zero."""
    shape = [1] * rank
    shape[1 if rank > 1 else 0] = classes
    ids = Tensor._from_numpy(np.arange(classes, dtype=np.int64).reshape(shape))
    return F.cast(F.equal(F.expand_dims(F.cast(target, mstype.int64), 1 if rank > 1 else 0), ids), mstype.float32)


def _reduce(loss: Tensor, reduction: str, denominator: Tensor | None) -> Tensor:
    if reduction == "none":
        return loss
    total = F.reduce_sum(loss)
    if reduction == "sum":
        return total
    return F.div(total, denominator) if denominator is not None else F.mean(loss)


def _nll_from_log_probs(log_probs: Tensor, target: Tensor, weight, ignore_index: int, reduction: str,
                        label_smoothing: float) -> Tensor:
    rank, class_axis = log_probs.ndim, 1 if log_probs.ndim > 1 else 0
    classes = log_probs.shape[class_axis]
    if target.dtype not in _INDEX_TYPES:
        raise TypeError(f"nll_loss: class-index target must be int32 or int64, got {target.dtype}")
    expected = log_probs.shape[:1] + log_probs.shape[2:] if rank > 1 else ()
    if tuple(target.shape) != tuple(expected):
        raise ValueError(f"nll_loss: target must have shape {expected} for input shape {log_probs.shape}, "
                         f"got {target.shape}")
    hot = _one_hot(target, classes, rank)
    class_weight = _class_view(F.cast(weight, mstype.float32), rank) if weight is not None else None
    weighted = F.mul(log_probs, class_weight) if class_weight is not None else log_probs
    keep = F.cast(F.not_equal(target, ignore_index), mstype.float32)
    picked = F.mul(F.neg(F.reduce_sum(F.mul(weighted, hot), class_axis)), keep)
    target_weight = F.mul(F.reduce_sum(F.mul(hot, class_weight), class_axis), keep) \
        if class_weight is not None else keep
    denominator = F.reduce_sum(target_weight)
    loss = picked
    if label_smoothing > 0:
        smooth = F.mul(F.neg(F.reduce_sum(weighted, class_axis)), keep)
        loss = F.add(F.mul(picked, 1.0 - label_smoothing), F.mul(smooth, label_smoothing / classes))
    return _reduce(loss, reduction, denominator)


def nll_loss(inputs, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
             label_smoothing: float = 0.0):
    r"""Negative log-likelihood of class-index targets from log-probabilities ``inputs``.

    :math:`\ell_n = -w_{t_n} x_{n, t_n}` (0 where :math:`t_n` = ``ignore_index``); 'mean' divides the sum by
    :math:`\sum_n w_{t_n}` over the kept targets. With ``label_smoothing`` ε the loss is
    :math:`(1 - ε)\ell_n + \frac{ε}{C}\sum_c -w_c x_{n, c}`.

    Args:
        inputs (Tensor): (N, C) or (N, C, d1, ...) or (C,) log-probabilities.
        target (Tensor): int32/int64 (N,) or (N, d1, ...) class indices.
        weight (Tensor): (C,) class weights. Default: None.
        ignore_index (int): a target value that contributes nothing. Default: -100.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
        label_smoothing (float): in [0, 1]. Default: 0.0.

    Raises:
        TypeError: inputs not a float Tensor, target not an int Tensor.
        ValueError: a bad weight shape, target shape, reduction or label_smoothing.
    """
    _check("nll_loss", inputs, target, weight, reduction, label_smoothing)
    return _nll_from_log_probs(F.cast(inputs, mstype.float32), target, weight, ignore_index, reduction,
                               float(label_smoothing))


def cross_entropy(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean",  # noqa: A002
                  label_smoothing: float = 0.0):
    r"""Cross entropy between logits ``input`` and class indices or class probabilities ``target``.

    Class indices (an int target): ``nll_loss(log_softmax(input, 1), target, ...)``. Probabilities (a float
    target of ``input``'s shape): :math:`\ell_n = -\sum_c w_c y_{n,c} \log p_{n,c}` with
    :math:`y \leftarrow (1 - ε) y + ε / C`; 'mean' divides by the number of samples (N * d1 * ...).

    Args:
        input (Tensor): (N, C) or (N, C, d1, ...) or (C,) logits.
        target (Tensor): int class indices or float probabilities.
        weight (Tensor): (C,) class weights. Default: None.
        ignore_index (int): for class indices, a target value that contributes nothing. Default: -100.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
        label_smoothing (float): in [0, 1]. Default: 0.0.

    Raises:
        TypeError: input not a float Tensor; target neither int nor float.
        ValueError: shapes that do not match, a bad reduction or label_smoothing.
    """
    _check("cross_entropy", input, target, weight, reduction, label_smoothing)
    class_axis = 1 if input.ndim > 1 else 0
    log_probs = F.log_softmax(F.cast(input, mstype.float32), class_axis)
    if target.dtype in _INDEX_TYPES:
        return _nll_from_log_probs(log_probs, target, weight, ignore_index, reduction, float(label_smoothing))
    if not target.dtype.is_float or tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"cross_entropy: target must be int class indices or float probabilities of shape "
                         f"{input.shape}, got {target.dtype} of shape {target.shape}")
    probs = F.cast(target, mstype.float32)
    if label_smoothing > 0:
        probs = F.add(F.mul(probs, 1.0 - label_smoothing), label_smoothing / input.shape[class_axis])
    terms = F.mul(log_probs, probs)
    if weight is not None:
        terms = F.mul(terms, _class_view(F.cast(weight, mstype.float32), input.ndim))
    return _reduce(F.neg(F.reduce_sum(terms, class_axis)), reduction, None)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,  # noqa: A002
                                     reduction: str = "mean"):
    r"""Sigmoid cross entropy: :math:`\ell = -w [p\,y \log\sigma(x) + (1 - y) \log(1 - \sigma(x))]`.

    Computed stably as :math:`w [(1 - y) x + (1 + (p - 1) y)\,\mathrm{softplus}(-x)]`.

    Args:
        input (Tensor): logits.
        target (Tensor): targets in [0, 1] of ``input``'s shape.
        weight (Tensor): weights broadcast to ``input``. Default: None.
        pos_weight (Tensor): weights of positive examples, broadcast along the last axis. Default: None.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Raises:
        TypeError: input or target not a float Tensor.
        ValueError: shapes differ, or a bad reduction.
    """
    for name, value in (("input", input), ("target", target)):
        if not isinstance(value, Tensor) or not value.dtype.is_float:
            raise TypeError(f"binary_cross_entropy_with_logits: {name} must be a float Tensor, got "
                            f"{getattr(value, 'dtype', type(value).__name__)}")
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: target shape {target.shape} differs from input "
                         f"shape {input.shape}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"binary_cross_entropy_with_logits: reduction must be one of {_REDUCTIONS}, got "
                         f"{reduction!r}")
    x, y = F.cast(input, mstype.float32), F.cast(target, mstype.float32)
    neg_x = F.neg(x)
    softplus_neg = F.add(F.maximum(neg_x, 0.0), F.log(F.add(F.exp(F.neg(F.abs(x))), 1.0)))
    coefficient = F.add(F.mul(F.sub(F.cast(pos_weight, mstype.float32), 1.0), y), 1.0) \
        if pos_weight is not None else None
    loss = F.add(F.mul(F.sub(1.0, y), x), F.mul(coefficient, softplus_neg) if coefficient is not None
                 else softplus_neg)
    if weight is not None:
        loss = F.mul(loss, F.cast(weight, mstype.float32))
    return F.cast(_reduce(loss, reduction, None), input.dtype)


_BCE_EPS = 1e-12  # MindSpore's kernels clamp the probabilities so that a log term is at most -log(1e-12)


def binary_cross_entropy(logits, labels, weight=None, reduction: str = "mean"):
    r"""Binary cross entropy of probabilities: :math:`\ell = -w [y \log x + (1 - y) \log(1 - x)]`, each
    log argument clamped to at least 1e-12 (as MindSpore, so a term is at most about 27.63).

    Args:
        logits (Tensor): probabilities in [0, 1], float.
        labels (Tensor): targets of ``logits``' shape.
        weight (Tensor): weights broadcast to ``logits``. Default: None.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Raises:
        TypeError: inputs not float Tensors.
        ValueError: shapes differ, or a bad reduction.
    """
    for name, value in (("logits", logits), ("labels", labels)):
        if not isinstance(value, Tensor) or not value.dtype.is_float:
            raise TypeError(f"binary_cross_entropy: {name} must be a float Tensor, got "
                            f"{getattr(value, 'dtype', type(value).__name__)}")
    if tuple(logits.shape) != tuple(labels.shape):
        raise ValueError(f"binary_cross_entropy: labels shape {labels.shape} differs from logits shape {logits.shape}")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"binary_cross_entropy: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    x, y = F.cast(logits, mstype.float32), F.cast(labels, mstype.float32)
    log_x = F.log(F.maximum(x, _BCE_EPS))
    log_not_x = F.log(F.maximum(F.sub(1.0, x), _BCE_EPS))
    loss = F.neg(F.add(F.mul(y, log_x), F.mul(F.sub(1.0, y), log_not_x)))
    if weight is not None:
        loss = F.mul(loss, F.cast(weight, mstype.float32))
    return F.cast(_reduce(loss, reduction, None), logits.dtype)


_KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


def kl_div(logits, labels, reduction: str = "mean"):
    r"""Kullback-Leibler divergence of ``labels`` from log-probabilities ``logits``:
    :math:`\ell = y (\log y - x)`, 0 where :math:`y = 0`.

    Args:
        logits (Tensor): log-probabilities, float.
        labels (Tensor): probabilities of ``logits``' shape.
        reduction (str): 'mean' (over every element), 'batchmean' (sum / first dimension), 'sum' or 'none'.
            Default: 'mean'.

    Raises:
        TypeError: inputs not float Tensors.
        ValueError: shapes differ, or a bad reduction.
    """
    for name, value in (("logits", logits), ("labels", labels)):
        if not isinstance(value, Tensor) or not value.dtype.is_float:
            raise TypeError(f"kl_div: {name} must be a float Tensor, got {getattr(value, 'dtype', type(value).__name__)}")
    if tuple(logits.shape) != tuple(labels.shape):
        raise ValueError(f"kl_div: labels shape {labels.shape} differs from logits shape {logits.shape}")
    if reduction not in _KL_REDUCTIONS:
        raise ValueError(f"kl_div: reduction must be one of {_KL_REDUCTIONS}, got {reduction!r}")
    x, y = F.cast(logits, mstype.float32), F.cast(labels, mstype.float32)
    positive = F.greater(y, 0.0)
    safe_log = F.log(F.select(positive, y, F.ones_like(y)))
    loss = F.select(positive, F.mul(y, F.sub(safe_log, x)), F.zeros_like(y))
    if reduction == "batchmean":
        out = F.div(F.reduce_sum(loss), float(logits.shape[0] if logits.ndim else 1))
    else:
        out = _reduce(loss, reduction, None)
    return F.cast(out, logits.dtype)
