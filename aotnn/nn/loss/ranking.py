"""MindSpore 2.x margin losses: MarginRankingLoss and HingeEmbeddingLoss."""
from __future__ import annotations

from ... import ops
from ._utils import check_float_tensor
from .loss_base import LossBase

__all__ = ['MarginRankingLoss', 'HingeEmbeddingLoss']


class MarginRankingLoss(LossBase):
    r"""Ranking loss of two scores: :math:`\ell = \max(0, -y (x_1 - x_2) + \text{margin})`.

    Args:
        margin (float): the margin. Default: 0.0.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **input1** (Tensor) - scores, float16 or float32.
        - **input2** (Tensor) - scores of ``input1``'s shape and dtype.
        - **target** (Tensor) - 1 or -1 of ``input1``'s shape and dtype.

    Raises:
        TypeError: ``margin`` not a float; inputs not float Tensors of one dtype.
        ValueError: a bad ``reduction``; shapes that differ.
    """

    def __init__(self, margin: float = 0.0, reduction: str = 'mean'):
        super().__init__(reduction)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise TypeError(f"For '{self.cls_name}', the 'margin' must be a float, but got {type(margin).__name__}.")
        self.margin = float(margin)

    def construct(self, input1, input2, target):
        for name, value in (("input1", input1), ("input2", input2), ("target", target)):
            check_float_tensor(value, name, self.cls_name)
        if not input1.dtype == input2.dtype == target.dtype:
            raise TypeError(f"For '{self.cls_name}', the inputs must have one dtype, but got {input1.dtype}, "
                            f"{input2.dtype} and {target.dtype}.")
        if not tuple(input1.shape) == tuple(input2.shape) == tuple(target.shape):
            raise ValueError(f"For '{self.cls_name}', the inputs must have one shape, but got {input1.shape}, "
                             f"{input2.shape} and {target.shape}.")
        return self.get_loss(ops.maximum(ops.neg(target) * (input1 - input2) + self.margin, 0.0))


class HingeEmbeddingLoss(LossBase):
    r"""Hinge embedding loss: :math:`\ell = x` where :math:`y = 1`, :math:`\max(0, margin - x)` where
    :math:`y = -1`.

    Args:
        margin (float): the margin. Default: 1.0.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Inputs:
        - **logits** (Tensor) - distances, float.
        - **labels** (Tensor) - 1 or -1, of ``logits``' shape.

    Raises:
        TypeError: ``margin`` not a float; inputs not float Tensors.
        ValueError: a bad ``reduction``; shapes that differ.
    """

    def __init__(self, margin: float = 1.0, reduction: str = 'mean'):
        super().__init__(reduction)
        if isinstance(margin, bool) or not isinstance(margin, (int, float)):
            raise TypeError(f"For '{self.cls_name}', the 'margin' must be a float, but got {type(margin).__name__}.")
        self.margin = float(margin)

    def construct(self, logits, labels):
        check_float_tensor(logits, 'logits', self.cls_name)
        check_float_tensor(labels, 'labels', self.cls_name)
        if tuple(logits.shape) != tuple(labels.shape):
            raise ValueError(f"For '{self.cls_name}', 'labels' shape {labels.shape} differs from 'logits' shape "
                             f"{logits.shape}.")
        zeros = ops.zeros_like(logits)
        positive = ops.select(ops.equal(labels, 1.0), logits, zeros)
        negative = ops.select(ops.equal(labels, -1.0), ops.maximum(ops.neg(logits) + self.margin, 0.0), zeros)
        return self.get_loss(positive + negative)
