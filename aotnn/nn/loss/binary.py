"""Two-class losses: BCELoss, BCEWithLogitsLoss, SoftMarginLoss."""
from __future__ import annotations

from typing import Any

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ._utils import check_logits_labels, softplus, wide
from .loss_base import LossBase

__all__ = ['BCELoss', 'BCEWithLogitsLoss', 'SoftMarginLoss']

# MindSpore's BinaryCrossEntropy kernels clamp the log's argument at this value (log(1e-12) = -27.63).
_BCE_EPS = 1e-12


def _optional_weight(value: Any, name: str, cls_name: str) -> Tensor | None:
    if value is None:
        return None
    if isinstance(value, Parameter):
        raise TypeError(f"For '{cls_name}', the '{name}' can not be a Parameter.")
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{cls_name}', the '{name}' must be a Tensor or None, but got {type(value).__name__}.")
    return value


class BCELoss(LossBase):
    r"""Binary cross entropy between probabilities and targets.

    .. math::
        l_n = - w_n \left[ y_n \log x_n + (1 - y_n) \log (1 - x_n) \right]

    The logarithms' arguments are clamped at 1e-12, as MindSpore's kernels do.

    Args:
        weight (Tensor, optional): rescaling weight broadcastable to ``logits``. Default: None.
        reduction (str): 'none', 'mean' or 'sum'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - probabilities in [0, 1], float16 or float32.
        - **labels** (Tensor) - targets, same shape and dtype as ``logits``.

    Outputs:
        Tensor: ``logits``' dtype; its shape for 'none', else a scalar.

    Raises:
        TypeError: non-float inputs, or a ``weight`` that is not a Tensor.
        ValueError: invalid ``reduction``, or ``logits`` and ``labels`` of different shapes.
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = 'mean'):
        super().__init__(reduction)
        self.weight = _optional_weight(weight, 'weight', self.cls_name)
        if self.weight is not None and not self.weight.dtype.is_float:
            raise TypeError(f"For '{self.cls_name}', the dtype of 'weight' must be float16 or float32, "
                            f"but got {self.weight.dtype}.")

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, floats=True)
        x, y = wide(logits), wide(labels)
        log_x = ops.log(ops.maximum(x, _BCE_EPS))
        log_not_x = ops.log(ops.maximum(1.0 - x, _BCE_EPS))
        loss = ops.neg(y * log_x + (1.0 - y) * log_not_x)
        if self.weight is not None:
            loss = loss * wide(self.weight)
        return ops.cast(self.get_loss(loss), logits.dtype)


class BCEWithLogitsLoss(LossBase):
    r"""Binary cross entropy on logits (a sigmoid then BCE, computed stably).

    .. math::
        L_{ij} = -w_{ij}\left[p_{j} Y_{ij} \log \sigma(X_{ij}) + (1 - Y_{ij}) \log(1 - \sigma(X_{ij}))\right]

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
        weight (Tensor, optional): weight broadcastable to ``logits``. Default: None.
        pos_weight (Tensor, optional): weight of positive examples, broadcastable to ``logits``
            (typically one per class). Default: None.

    Inputs:
        - **logits** (Tensor) - float16 or float32, shape :math:`(N, *)`.
        - **labels** (Tensor) - same shape and dtype as ``logits``.

    Outputs:
        Tensor: ``logits``' shape for 'none', else a scalar.

    Raises:
        TypeError: ``weight`` or ``pos_weight`` is a Parameter or not a Tensor; non-float inputs.
        ValueError: invalid ``reduction``; ``logits`` and ``labels`` of different shapes.
    """

    def __init__(self, reduction: str = 'mean', weight: Tensor | None = None, pos_weight: Tensor | None = None):
        super().__init__(reduction)
        self.weight = _optional_weight(weight, 'weight', self.cls_name)
        self.pos_weight = _optional_weight(pos_weight, 'pos_weight', self.cls_name)

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, floats=True)
        x, y = wide(logits), wide(labels)
        positive = y * softplus(ops.neg(x))
        if self.pos_weight is not None:
            positive = positive * wide(self.pos_weight)
        loss = positive + (1.0 - y) * softplus(x)
        if self.weight is not None:
            loss = loss * wide(self.weight)
        return ops.cast(self.get_loss(loss), logits.dtype)


class SoftMarginLoss(LossBase):
    r"""Two-class logistic loss for labels in {-1, 1}: :math:`\log(1 + \exp(-y x))`, then reduced.

    Args:
        reduction (str): 'none', 'mean' or 'sum'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - float16 or float32.
        - **labels** (Tensor) - same shape and dtype as ``logits``, values 1 or -1.

    Outputs:
        Tensor: ``logits``' shape for 'none', else a scalar.

    Raises:
        TypeError: non-float inputs.
        ValueError: invalid ``reduction``; different shapes.
    """

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, floats=True)
        loss = softplus(ops.neg(wide(labels) * wide(logits)))
        return ops.cast(self.get_loss(loss), logits.dtype)
