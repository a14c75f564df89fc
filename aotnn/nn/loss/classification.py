"""MindSpore 2.x classification losses: CrossEntropyLoss and NLLLoss (over ``ops.cross_entropy`` /
``ops.nll_loss``) and MultiLabelSoftMarginLoss."""
from __future__ import annotations

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ._utils import check_float_tensor, check_same_shape, softplus
from .loss_base import LossBase

__all__ = ['CrossEntropyLoss', 'NLLLoss', 'MultiLabelSoftMarginLoss']


def _check_weight(weight, cls_name: str):
    if weight is not None and not isinstance(weight, Tensor):
        raise TypeError(f"For '{cls_name}', the 'weight' must be a Tensor or None, but got {type(weight).__name__}.")
    return weight


def _check_ignore_index(ignore_index, cls_name: str) -> int:
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
        raise TypeError(f"For '{cls_name}', the 'ignore_index' must be an int, but got "
                        f"{type(ignore_index).__name__}.")
    return ignore_index


class NLLLoss(LossBase):
    r"""Negative log-likelihood of class indices from log-probabilities (see :func:`ops.nll_loss`).

    Args:
        weight (Tensor): (C,) class weights. Default: None.
        ignore_index (int): a target value that contributes nothing. Default: -100.
        reduction (str): 'mean' (divided by the kept targets' total weight), 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - (N, C) or (N, C, d1, ...) log-probabilities.
        - **labels** (Tensor) - int32/int64 (N,) or (N, d1, ...) class indices.

    Raises:
        TypeError: ``weight`` not a Tensor, ``ignore_index`` not an int; at call time, bad input dtypes.
        ValueError: a bad ``reduction``; at call time, shapes that do not match.
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = 'mean'):
        super().__init__(reduction)
        self.weight = _check_weight(weight, self.cls_name)
        self.ignore_index = _check_ignore_index(ignore_index, self.cls_name)

    def construct(self, logits, labels):
        return ops.nll_loss(logits, labels, self.weight, self.ignore_index, self.reduction)


class CrossEntropyLoss(LossBase):
    r"""Cross entropy of logits against class indices or class probabilities (see :func:`ops.cross_entropy`).

    Args:
        weight (Tensor): (C,) class weights. Default: None.
        ignore_index (int): for class indices, a target value that contributes nothing. Default: -100.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
        label_smoothing (float): in [0, 1]: the target becomes (1 - ε) target + ε / C. Default: 0.0.

    Inputs:
        - **logits** (Tensor) - (N, C) or (N, C, d1, ...) or (C,) logits.
        - **labels** (Tensor) - int class indices (N, d1, ...) or float probabilities of ``logits``' shape.

    Raises:
        TypeError: ``weight`` not a Tensor, ``ignore_index`` not an int, ``label_smoothing`` not a float.
        ValueError: a bad ``reduction`` or ``label_smoothing`` outside [0, 1].
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = 'mean',
                 label_smoothing: float = 0.0):
        super().__init__(reduction)
        self.weight = _check_weight(weight, self.cls_name)
        self.ignore_index = _check_ignore_index(ignore_index, self.cls_name)
        if isinstance(label_smoothing, bool) or not isinstance(label_smoothing, (int, float)):
            raise TypeError(f"For '{self.cls_name}', the 'label_smoothing' must be a float, but got "
                            f"{type(label_smoothing).__name__}.")
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"For '{self.cls_name}', the 'label_smoothing' must be in [0, 1], but got "
                             f"{label_smoothing}.")
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        return ops.cross_entropy(logits, labels, self.weight, self.ignore_index, self.reduction,
                                 self.label_smoothing)


class MultiLabelSoftMarginLoss(LossBase):
    r"""One-versus-all multi-label loss over C classes:
    :math:`\ell_n = -\frac{1}{C}\sum_c w_c [y_{nc} \log\sigma(x_{nc}) + (1 - y_{nc}) \log\sigma(-x_{nc})]`.

    Args:
        weight (Tensor): (C,) class weights. Default: None.
        reduction (str): 'mean', 'sum' or 'none' (one value per sample). Default: 'mean'.

    Inputs:
        - **x** (Tensor) - (N, C) or (C,) logits.
        - **target** (Tensor) - 0/1 labels of ``x``'s shape.

    Raises:
        TypeError: ``weight`` not a Tensor; inputs not float Tensors.
        ValueError: a bad ``reduction``; shapes that differ.
    """

    def __init__(self, weight=None, reduction: str = 'mean'):
        super().__init__(reduction)
        self.weight = _check_weight(weight, self.cls_name)

    def construct(self, x, target):
        check_float_tensor(x, 'x', self.cls_name)
        check_float_tensor(target, 'target', self.cls_name)
        check_same_shape(x, target, 'x', 'target', self.cls_name)
        logits, labels = ops.cast(x, mstype.float32), ops.cast(target, mstype.float32)
        # -log sigma(x) = softplus(-x), -log sigma(-x) = softplus(x)
        terms = labels * softplus(ops.neg(logits)) + (1.0 - labels) * softplus(logits)
        if self.weight is not None:
            terms = terms * ops.cast(self.weight, mstype.float32)
        per_sample = ops.reduce_mean(terms, -1)
        if self.reduction == 'none':
            return ops.cast(per_sample, x.dtype)
        return ops.cast(self.get_loss(per_sample), x.dtype)
