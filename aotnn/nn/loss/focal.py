"""FocalLoss."""
from __future__ import annotations

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ._utils import check_float_tensor, check_tensor, log_softmax, one_hot
from .loss_base import LossBase

__all__ = ['FocalLoss']

_LABEL_TYPES = (mstype.int32, mstype.int64, mstype.float16, mstype.float32)


def _power(base: Tensor, gamma: float) -> Tensor:
    """``base ** gamma``; whole exponents multiply (exact, and free of pow's gradient at 0)."""
    if float(gamma).is_integer() and 0 <= gamma <= 8:
        if gamma == 0:
            return ops.ones_like(base)
        out = base
        for _ in range(int(gamma) - 1):
            out = out * base
        return out
    return ops.pow(base, float(gamma))


class FocalLoss(LossBase):
    r"""Focal loss, :math:`FL(p_t) = -(1 - p_t)^\gamma \log(p_t)`, for imbalanced classification.

    Class probabilities come from a softmax over axis 1 of ``logits``.

    Args:
        weight (Tensor, optional): 1-D per-class weight applied to the log-probabilities. Default: None.
        gamma (float): focusing exponent. Default: 2.0.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - :math:`(N, C)`, :math:`(N, C, H)` or :math:`(N, C, H, W)`, C > 1.
        - **labels** (Tensor) - same rank as ``logits``; channel 1 (class indices in
          :math:`[-C, C)`) or C (one-hot / soft labels). int32, int64, float16 or float32.

    Outputs:
        Tensor: for 'none', :math:`(N,)` with index labels and :math:`(N, C)` with one-hot
        labels; else a scalar.

    Raises:
        TypeError: ``gamma`` not a float; ``weight`` not a Tensor; labels of an unsupported dtype.
        ValueError: ``weight`` not 1-D; inputs of rank outside [2, 4] or of different ranks; a label
            channel other than 1 or C; logits with one channel; invalid ``reduction``.
    """

    def __init__(self, weight: Tensor | None = None, gamma: float = 2.0, reduction: str = 'mean'):
        super().__init__(reduction)
        if isinstance(gamma, bool) or not isinstance(gamma, float):
            raise TypeError(f"For '{self.cls_name}', the 'gamma' must be a float, but got {type(gamma).__name__}.")
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"For '{self.cls_name}', the type of 'weight' must be a Tensor, "
                            f"but got {type(weight).__name__}.")
        if isinstance(weight, Tensor) and weight.ndim != 1:
            raise ValueError(f"For '{self.cls_name}', the dimension of 'weight' must be 1, but got {weight.ndim}.")
        self.gamma = gamma
        self.weight = weight

    def _check_inputs(self, logits, labels) -> None:
        check_float_tensor(logits, 'logits', self.cls_name)
        check_tensor(labels, 'labels', self.cls_name)
        for name, rank in (('logits', logits.ndim), ('labels', labels.ndim)):
            if not 2 <= rank <= 4:
                raise ValueError(f"For '{self.cls_name}', the dimensions of '{name}' must be in [2, 4], "
                                 f"but got {rank}.")
        if logits.ndim != labels.ndim:
            raise ValueError(f"For '{self.cls_name}', the dimensions of 'logits' and 'labels' must be equal, "
                             f"but got {logits.ndim} and {labels.ndim}.")
        channels = logits.shape[1]
        if channels == 1:
            raise ValueError(f"For '{self.cls_name}', 'logits'.shape[1] cannot be one, but got {channels}.")
        if labels.shape[1] not in (1, channels):
            raise ValueError(f"For '{self.cls_name}', 'labels'.shape[1] must be one or equal to "
                             f"'logits'.shape[1]: {channels}, but got {labels.shape[1]}.")
        if labels.dtype not in _LABEL_TYPES:
            raise TypeError(f"For '{self.cls_name}', the dtype of 'labels' must be one of "
                            f"{[str(d) for d in _LABEL_TYPES]}, but got {labels.dtype}.")
        if self.weight is not None and self.weight.shape[0] != channels:
            raise ValueError(f"For '{self.cls_name}', 'weight' must have {channels} elements (one per class), "
                             f"but got {self.weight.shape[0]}.")

    def construct(self, logits, labels):
        self._check_inputs(logits, labels)
        batch, channels = logits.shape[0], logits.shape[1]
        log_p = log_softmax(ops.reshape(logits, (batch, channels, -1)), 1)
        weight = None if self.weight is None else ops.reshape(ops.cast(self.weight, mstype.float32), (1, channels, 1))
        if labels.shape[1] == 1:
            mask = one_hot(ops.reshape(labels, (batch, -1)), channels, axis=1)
            log_p = ops.reduce_sum(mask * log_p, 1)
            if weight is not None:
                weight = ops.reduce_sum(mask * weight, 1)
        probability = ops.exp(log_p)
        if weight is not None:
            log_p = log_p * weight
        modulating = _power(1.0 - probability, self.gamma)
        if labels.shape[1] == 1:
            loss = ops.reduce_mean(ops.neg(modulating * log_p), 1)
        else:
            target = ops.cast(ops.reshape(labels, (batch, channels, -1)), mstype.float32)
            loss = ops.reduce_mean(ops.neg(modulating * target * log_p), -1)
        return ops.cast(self.get_loss(loss), logits.dtype)

    def extend_repr(self) -> str:
        return f"gamma={self.gamma}, reduction={self.reduction}"
