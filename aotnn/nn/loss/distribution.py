"""Losses of distributions: KLDivLoss, PoissonNLLLoss and GaussianNLLLoss."""
from __future__ import annotations

import math

from ... import ops
from ...common import dtype as mstype
from ._utils import check_float_tensor, check_same_shape
from .loss_base import LossBase, check_reduction

__all__ = ['KLDivLoss', 'PoissonNLLLoss', 'GaussianNLLLoss']


class KLDivLoss(LossBase):
    r"""Kullback-Leibler divergence: :math:`\ell = y (\log y - x)` (0 where :math:`y = 0`), ``x`` being
    log-probabilities.

    Args:
        reduction (str): 'mean' (over every element), 'batchmean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - log-probabilities, float16 or float32.
        - **labels** (Tensor) - probabilities of ``logits``' shape.

    Raises:
        ValueError: a bad ``reduction``; at call time, shapes that differ.
    """

    def __init__(self, reduction: str = 'mean'):
        if reduction != 'batchmean':
            check_reduction(reduction, type(self).__name__)
        super().__init__('none' if reduction == 'batchmean' else reduction)
        self.reduction = reduction

    def construct(self, logits, labels):
        return ops.kl_div(logits, labels, self.reduction)


class PoissonNLLLoss(LossBase):
    r"""Negative log-likelihood of a Poisson target: with ``log_input`` :math:`e^x - y x`, else
    :math:`x - y \log(x + eps)`; with ``full`` plus Stirling's term
    :math:`y \log y - y + \frac{1}{2}\log(2\pi y)` where :math:`y > 1`.

    Args:
        log_input (bool): whether ``input`` is the log of the rate. Default: True.
        full (bool): add Stirling's term. Default: False.
        eps (float): added inside the log when not ``log_input``. Default: 1e-8.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **input** (Tensor) - rates (or log rates), float.
        - **target** (Tensor) - counts of ``input``'s shape.

    Raises:
        TypeError: flags not bools, ``eps`` not a float.
        ValueError: a bad ``reduction``; ``eps`` <= 0.
    """

    def __init__(self, log_input: bool = True, full: bool = False, eps: float = 1e-08, reduction: str = 'mean'):
        super().__init__(reduction)
        for name, value in (("log_input", log_input), ("full", full)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{self.cls_name}', the '{name}' must be a bool, but got {type(value).__name__}.")
        if isinstance(eps, bool) or not isinstance(eps, float) or eps <= 0:
            raise ValueError(f"For '{self.cls_name}', the 'eps' must be a positive float, but got {eps!r}.")
        self.log_input, self.full, self.eps = log_input, full, eps

    def construct(self, input, target):  # noqa: A002 (MindSpore's argument name)
        check_float_tensor(input, 'input', self.cls_name, mstype.float_type)
        check_float_tensor(target, 'target', self.cls_name, mstype.float_type)
        check_same_shape(input, target, 'input', 'target', self.cls_name)
        x, y = ops.cast(input, mstype.float32), ops.cast(target, mstype.float32)
        if self.log_input:
            loss = ops.exp(x) - y * x
        else:
            loss = x - y * ops.log(x + self.eps)
        if self.full:
            big = ops.greater(y, 1.0)
            safe = ops.select(big, y, ops.ones_like(y))
            stirling = safe * ops.log(safe) - safe + 0.5 * ops.log(safe * (2 * math.pi))
            loss = loss + ops.select(big, stirling, ops.zeros_like(y))
        return self.get_loss(loss)


class GaussianNLLLoss(LossBase):
    r"""Negative log-likelihood of a Gaussian target:
    :math:`\frac{1}{2}\left(\log \max(var, eps) + \frac{(x - y)^2}{\max(var, eps)}\right)`, plus
    :math:`\frac{1}{2}\log 2\pi` with ``full``.

    Args:
        full (bool): add the constant term. Default: False.
        eps (float): the smallest variance used. Default: 1e-6.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - predicted means, float.
        - **labels** (Tensor) - targets of ``logits``' shape.
        - **var** (Tensor) - predicted variances of ``logits``' shape (or with a last axis of 1).

    Raises:
        TypeError: ``full`` not a bool, ``eps`` not a float.
        ValueError: ``eps`` <= 0, a bad ``reduction``.
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-06, reduction: str = 'mean'):
        super().__init__(reduction)
        if not isinstance(full, bool):
            raise TypeError(f"For '{self.cls_name}', the 'full' must be a bool, but got {type(full).__name__}.")
        if isinstance(eps, bool) or not isinstance(eps, float) or eps <= 0:
            raise ValueError(f"For '{self.cls_name}', the 'eps' must be a positive float, but got {eps!r}.")
        self.full, self.eps = full, eps

    def construct(self, logits, labels, var):
        for name, value in (("logits", logits), ("labels", labels), ("var", var)):
            check_float_tensor(value, name, self.cls_name, mstype.float_type)
        check_same_shape(logits, labels, 'logits', 'labels', self.cls_name)
        v = ops.maximum(ops.cast(var, mstype.float32), self.eps)
        diff = ops.cast(logits, mstype.float32) - ops.cast(labels, mstype.float32)
        loss = (ops.log(v) + diff * diff / v) * 0.5
        if self.full:
            loss = loss + 0.5 * math.log(2 * math.pi)
        return self.get_loss(loss)
