"""MindSpore 2.x classification losses over ``ops.cross_entropy`` / ``ops.nll_loss``: CrossEntropyLoss and
NLLLoss."""
from __future__ import annotations

from ... import ops
from ...common.tensor import Tensor
from .loss_base import LossBase

__all__ = ['CrossEntropyLoss', 'NLLLoss']


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
