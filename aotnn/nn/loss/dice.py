"""Set-similarity losses: DiceLoss and MultiClassDiceLoss."""
from __future__ import annotations

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell
from ._utils import check_logits_labels, check_positive_float, wide
from .loss_base import LossBase

__all__ = ['DiceLoss', 'MultiClassDiceLoss']

_ACTIVATIONS = ['softmax', 'logsoftmax', 'relu', 'relu6', 'tanh', 'sigmoid']


def _check_not_uint8(value: Tensor, name: str, cls_name: str) -> None:
    if value.dtype == mstype.uint8:
        raise TypeError(f"For '{cls_name}', the dtype of '{name}' can not be uint8.")


class DiceLoss(LossBase):
    r"""Dice loss: one minus the Dice coefficient of the whole batch.

    .. math::
        dice = 1 - \frac{2 \sum pred \cdot true}{\sum pred^2 + \sum true^2 + smooth}

    Args:
        smooth (float): added to the denominator for stability; > 0. Default: 1e-5.

    Inputs:
        - **logits** (Tensor) - :math:`(N, *)`, float16 or float32.
        - **labels** (Tensor) - same shape as ``logits``.

    Outputs:
        Tensor, a scalar.

    Raises:
        TypeError: ``smooth`` is not a float; inputs are not Tensors or are uint8.
        ValueError: ``smooth`` <= 0; different shapes.
    """

    def __init__(self, smooth: float = 1e-5):
        super().__init__()
        self.smooth = check_positive_float(smooth, 'smooth', self.cls_name)

    def construct(self, logits, labels):
        check_logits_labels(logits, labels, self.cls_name)
        _check_not_uint8(logits, 'logits', self.cls_name)
        _check_not_uint8(labels, 'labels', self.cls_name)
        x, y = ops.cast(logits, mstype.float32), ops.cast(labels, mstype.float32)
        intersection = ops.reduce_sum(x * y)
        union = ops.reduce_sum(x * x) + ops.reduce_sum(y * y)
        loss = 1.0 - intersection * 2.0 / (union + self.smooth)
        return ops.cast(loss, logits.dtype) if logits.dtype.is_float else loss

    def extend_repr(self) -> str:
        return f"smooth={self.smooth}"


class MultiClassDiceLoss(LossBase):
    r"""Dice loss averaged over classes: each channel of axis 1 is a binary Dice problem.

    Args:
        weights (Tensor, optional): :math:`(C, dim)` per-class weights; the result has shape
            :math:`(dim,)` (MindSpore's usual :math:`(C, 1)` gives :math:`(1,)`). Default: None.
        ignore_indiex (int, optional): a class left out of the sum (MindSpore's spelling). Default: None.
        activation (Union[str, Cell]): applied to ``logits`` first: 'softmax', 'logsoftmax', 'relu',
            'relu6', 'tanh', 'sigmoid', a Cell, or None. Default: 'softmax'.

    Inputs:
        - **logits** (Tensor) - :math:`(N, C, *)`, float16 or float32.
        - **labels** (Tensor) - same shape as ``logits`` (one-hot).

    Outputs:
        Tensor: a scalar, or :math:`(dim,)` with ``weights``.

    Raises:
        TypeError: ``weights`` not a Tensor; ``ignore_indiex`` not an int; ``activation`` neither a
            str nor a Cell.
        ValueError: ``weights`` not 2-D or its first dimension not C; an unknown activation name;
            inputs of different shapes or of rank < 2.
    """

    def __init__(self, weights: Tensor | None = None, ignore_indiex: int | None = None, activation='softmax'):
        super().__init__()
        name = self.cls_name
        if weights is not None and not isinstance(weights, Tensor):
            raise TypeError(f"For '{name}', the 'weights' must be a Tensor or None, but got {type(weights).__name__}.")
        if isinstance(weights, Tensor) and weights.ndim != 2:
            raise ValueError(f"For '{name}', the dimension of 'weights' must be 2, but got {weights.ndim}.")
        if ignore_indiex is not None and (isinstance(ignore_indiex, bool) or not isinstance(ignore_indiex, int)):
            raise TypeError(f"For '{name}', the 'ignore_indiex' must be an int or None, "
                            f"but got {type(ignore_indiex).__name__}.")
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise ValueError(f"For '{name}', the 'activation' must be in {_ACTIVATIONS}, but got {activation!r}.")
            from ..layer.activation import get_activation
            activation = get_activation(activation)
        elif activation is not None and not isinstance(activation, Cell):
            raise TypeError(f"For '{name}', the 'activation' must be str or Cell, but got {type(activation).__name__}.")
        self.weights = weights
        self.ignore_indiex = ignore_indiex
        self.activation = activation
        self.smooth = 1e-5

    def construct(self, logits, labels):
        name = self.cls_name
        check_logits_labels(logits, labels, name)
        if logits.ndim < 2:
            raise ValueError(f"For '{name}', the 'logits' dimension must be greater than 1, but got {logits.ndim}.")
        classes = labels.shape[1]
        if self.weights is not None and self.weights.shape[0] != classes:
            raise ValueError(f"For '{name}', the weight_shape[0] must be equal to label_shape[1], "
                             f"but got {self.weights.shape[0]} and {classes}.")
        if self.activation is not None:
            logits = self.activation(logits)
        x, y = wide(logits), ops.cast(labels, mstype.float32)
        axes = tuple(a for a in range(logits.ndim) if a != 1)
        intersection = ops.reduce_sum(x * y, axes)
        union = ops.reduce_sum(x * x, axes) + ops.reduce_sum(y * y, axes)
        per_class = 1.0 - intersection * 2.0 / (union + self.smooth)
        if self.ignore_indiex is not None and 0 <= self.ignore_indiex < classes:
            keep = np.ones(classes, np.float32)
            keep[self.ignore_indiex] = 0.0
            per_class = per_class * Tensor(keep)
        if self.weights is None:
            total = ops.reduce_sum(per_class)
        else:
            weights = ops.cast(self.weights, mstype.float32)
            total = ops.reduce_sum(ops.reshape(per_class, (classes, 1)) * weights, 0)
        return ops.cast(total / float(classes), logits.dtype)

    def extend_repr(self) -> str:
        return f"ignore_indiex={self.ignore_indiex}"
