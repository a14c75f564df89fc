"""Distance losses between predictions and targets: L1Loss, MSELoss, RMSELoss, SmoothL1Loss, HuberLoss, MAELoss."""
from __future__ import annotations

from ... import ops
from ...common import dtype as mstype
from ._utils import check_float_tensor, check_logits_labels, check_same_shape, check_tensor
from .loss_base import LossBase

__all__ = ['L1Loss', 'MSELoss', 'RMSELoss', 'SmoothL1Loss', 'HuberLoss', 'MAELoss']

_UNSIGNED = (mstype.uint8, mstype.uint16, mstype.uint32, mstype.uint64)


class L1Loss(LossBase):
    r"""Mean absolute error: :math:`l_n = |x_n - y_n|`, then reduced.

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - predictions, any shape.
        - **labels** (Tensor) - targets, broadcastable to ``logits``.

    Outputs:
        Tensor: a scalar, or the broadcast shape for 'none'.

    Raises:
        ValueError: invalid ``reduction``, or shapes that do not broadcast.
    """

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, same_shape=False)
        return self.get_loss(ops.abs(logits - labels))


class MSELoss(LossBase):
    r"""Mean squared error: :math:`l_n = (x_n - y_n)^2`, then reduced.

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - predictions, any shape.
        - **labels** (Tensor) - targets, broadcastable to ``logits``.

    Outputs:
        Tensor: a scalar, or the broadcast shape for 'none'.

    Raises:
        ValueError: invalid ``reduction``, or shapes that do not broadcast.
    """

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, same_shape=False)
        diff = logits - labels
        return self.get_loss(diff * diff)


class RMSELoss(LossBase):
    r"""Root mean square error: :math:`\sqrt{\frac{1}{N}\sum_i (x_i - y_i)^2}`.

    Inputs:
        - **logits** (Tensor) - predictions, shape :math:`(N, *)`.
        - **labels** (Tensor) - targets, broadcastable to ``logits``.

    Outputs:
        Tensor, a scalar.

    Raises:
        TypeError: unsigned integer inputs.
    """

    def __init__(self):
        super().__init__()
        self.MSELoss = MSELoss()

    def construct(self, logits, labels):
        for name, value in (('logits', logits), ('labels', labels)):
            check_tensor(value, name, self.cls_name)
            if value.dtype in _UNSIGNED:
                raise TypeError(f"For '{self.cls_name}', the dtype of '{name}' must not be unsigned, "
                                f"but got {value.dtype}.")
        return ops.sqrt(self.MSELoss(logits, labels))

    def extend_repr(self) -> str:
        return ""


class SmoothL1Loss(LossBase):
    r"""Smooth L1 loss: quadratic below ``beta``, linear above.

    .. math::
        L_i = \begin{cases} 0.5 (x_i - y_i)^2 / \beta, & |x_i - y_i| < \beta \\
        |x_i - y_i| - 0.5 \beta, & \text{otherwise} \end{cases}

    Args:
        beta (float): the threshold between the two parts. Default: 1.0.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'none'.
        sigma (float, optional): the name early MindSpore gave ``beta``; when given it sets ``beta``.

    Inputs:
        - **logits** (Tensor) - predictions, float16 or float32.
        - **labels** (Tensor) - targets, same shape and dtype as ``logits``.

    Outputs:
        Tensor: ``logits``' shape for 'none', else a scalar.

    Raises:
        TypeError: ``beta`` is not a number; inputs are not float16/float32 Tensors of one dtype.
        ValueError: ``beta`` <= 0; invalid ``reduction``; different shapes.
    """

    def __init__(self, beta: float = 1.0, reduction: str = 'none', *, sigma: float | None = None):
        super().__init__(reduction)
        if sigma is not None:
            beta = sigma
        if isinstance(beta, bool) or not isinstance(beta, (int, float)):
            raise TypeError(f"For '{self.cls_name}', the 'beta' must be a float, but got {type(beta).__name__}.")
        if not beta > 0:
            raise ValueError(f"For '{self.cls_name}', the 'beta' must be greater than 0, but got {beta}.")
        self.beta = float(beta)

    def construct(self, logits, labels):
        check_float_tensor(logits, 'logits', self.cls_name)
        check_float_tensor(labels, 'labels', self.cls_name)
        if logits.dtype != labels.dtype:
            raise TypeError(f"For '{self.cls_name}', 'logits' and 'labels' must have one dtype, "
                            f"but got {logits.dtype} and {labels.dtype}.")
        check_same_shape(logits, labels, 'logits', 'labels', self.cls_name)
        diff = ops.abs(logits - labels)
        quadratic = diff * diff * (0.5 / self.beta)
        linear = diff - 0.5 * self.beta
        return self.get_loss(ops.select(ops.less(diff, self.beta), quadratic, linear))

    def extend_repr(self) -> str:
        return f"beta={self.beta}, reduction={self.reduction}"


class HuberLoss(LossBase):
    r"""Huber loss: quadratic below ``delta``, linear above.

    .. math::
        L_i = \begin{cases} 0.5 (x_i - y_i)^2, & |x_i - y_i| < \delta \\
        \delta (|x_i - y_i| - 0.5 \delta), & \text{otherwise} \end{cases}

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
        delta (Union[int, float]): the threshold, positive. Default: 1.0.

    Inputs:
        - **logits** (Tensor) - predictions, float16 or float32.
        - **labels** (Tensor) - targets of ``logits``' dtype, broadcastable to its shape.

    Raises:
        TypeError: ``delta`` not a number; inputs not float16/float32 Tensors of one dtype.
        ValueError: ``delta`` <= 0; a bad ``reduction``; shapes that do not broadcast.
    """

    def __init__(self, reduction: str = 'mean', delta: float = 1.0):
        super().__init__(reduction)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise TypeError(f"For '{self.cls_name}', the 'delta' must be a float, but got {type(delta).__name__}.")
        if not delta > 0:
            raise ValueError(f"For '{self.cls_name}', the 'delta' must be greater than 0, but got {delta}.")
        self.delta = float(delta)

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name, floats=True, same_shape=False)
        if logits.dtype != labels.dtype:
            raise TypeError(f"For '{self.cls_name}', 'logits' and 'labels' must have one dtype, "
                            f"but got {logits.dtype} and {labels.dtype}.")
        diff = ops.abs(logits - labels)
        quadratic = diff * diff * 0.5
        linear = (diff - 0.5 * self.delta) * self.delta
        return self.get_loss(ops.select(ops.less(diff, self.delta), quadratic, linear))

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}, delta={self.delta}"


class MAELoss(L1Loss):
    r"""Mean absolute error, MindSpore 2.x's name for :class:`L1Loss`: :math:`\ell = |x - y|`
    (``labels`` broadcast to ``logits``).

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.
    """
