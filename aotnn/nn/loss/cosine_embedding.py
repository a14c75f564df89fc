"""CosineEmbeddingLoss."""
from __future__ import annotations

from ... import ops
from ._utils import check_same_shape, check_tensor
from .loss_base import LossBase

__all__ = ['CosineEmbeddingLoss']


class CosineEmbeddingLoss(LossBase):
    r"""Similarity of two tensors by the cosine of their rows (axis 1), for labels 1 or -1.

    .. math::
        loss(x_1, x_2, y) = \begin{cases} 1 - \cos(x_1, x_2), & y = 1 \\
        \max(0, \cos(x_1, x_2) - margin), & y = -1 \end{cases}

    Args:
        margin (float): in [-1.0, 1.0]. Default: 0.0.
        reduction (str): 'none', 'mean' or 'sum'. Default: 'mean'.

    Inputs:
        - **logits_x1** (Tensor) - :math:`(N, *)`.
        - **logits_x2** (Tensor) - same shape and dtype as ``logits_x1``.
        - **labels** (Tensor) - 1 or -1, shape of ``logits_x1`` without axis 1.

    Outputs:
        Tensor: ``labels``' shape for 'none', else a scalar.

    Raises:
        TypeError: ``margin`` is not a float; inputs are not Tensors or ``logits_x1``/``logits_x2``
            have different dtypes.
        ValueError: ``margin`` outside [-1, 1]; invalid ``reduction``; mismatched shapes.
    """

    def __init__(self, margin: float = 0.0, reduction: str = 'mean'):
        super().__init__(reduction)
        if isinstance(margin, bool) or not isinstance(margin, float):
            raise TypeError(f"For '{self.cls_name}', the 'margin' must be a float, but got {type(margin).__name__}.")
        if not -1.0 <= margin <= 1.0:
            raise ValueError(f"For '{self.cls_name}', the 'margin' must be in range [-1.0, 1.0], but got {margin}.")
        self.margin = margin

    def construct(self, logits_x1, logits_x2, labels):
        name = self.cls_name
        for arg, value in (('logits_x1', logits_x1), ('logits_x2', logits_x2), ('labels', labels)):
            check_tensor(value, arg, name)
        if logits_x1.dtype != logits_x2.dtype:
            raise TypeError(f"For '{name}', 'logits_x1' and 'logits_x2' must have one dtype, "
                            f"but got {logits_x1.dtype} and {logits_x2.dtype}.")
        check_same_shape(logits_x1, logits_x2, 'logits_x1', 'logits_x2', name)
        if logits_x1.ndim < 2:
            raise ValueError(f"For '{name}', 'logits_x1' must have at least 2 dimensions, but got {logits_x1.ndim}.")
        expected = tuple(logits_x1.shape[:1]) + tuple(logits_x1.shape[2:])
        if tuple(labels.shape) != expected:
            raise ValueError(f"For '{name}', 'labels' must have shape {expected}, but got {tuple(labels.shape)}.")
        product = ops.reduce_sum(logits_x1 * logits_x2, 1)
        norm1 = ops.sqrt(ops.reduce_sum(logits_x1 * logits_x1, 1))
        norm2 = ops.sqrt(ops.reduce_sum(logits_x2 * logits_x2, 1))
        cosine = product / (norm1 * norm2)
        zeros = ops.zeros_like(cosine)
        positive = ops.select(ops.equal(labels, 1), 1.0 - cosine, zeros)
        negative = ops.select(ops.equal(labels, -1), ops.maximum(cosine - self.margin, 0.0), zeros)
        return self.get_loss(positive + negative)

    def extend_repr(self) -> str:
        return f"margin={self.margin}, reduction={self.reduction}"
