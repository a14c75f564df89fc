"""Softmax cross-entropy losses: SoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyExpand."""
from __future__ import annotations

from ... import ops
from ...common import dtype as mstype
from ..cell import Cell
from ._utils import check_float_tensor, check_tensor, log_softmax, one_hot
from .loss_base import LossBase

__all__ = ['SoftmaxCrossEntropyWithLogits', 'SoftmaxCrossEntropyExpand']

_SPARSE_LABEL_TYPES = (mstype.int32, mstype.int64)


def _check_sparse(sparse, cls_name: str) -> bool:
    if not isinstance(sparse, bool):
        raise TypeError(f"For '{cls_name}', the 'sparse' must be a bool, but got {type(sparse).__name__}.")
    return sparse


def _dense_labels(logits, labels, sparse: bool, cls_name: str):
    """Labels as float32 probabilities of ``logits``' shape: one-hot encoded when ``sparse``."""
    check_float_tensor(logits, 'logits', cls_name)
    check_tensor(labels, 'labels', cls_name)
    if len(logits.shape) < 1:
        raise ValueError(f"For '{cls_name}', 'logits' must have at least one dimension, but got a scalar.")
    if sparse:
        if labels.dtype not in _SPARSE_LABEL_TYPES:
            raise TypeError(f"For '{cls_name}', when 'sparse' is True the dtype of 'labels' must be int32 or "
                            f"int64, but got {labels.dtype}.")
        if tuple(labels.shape) != tuple(logits.shape[:-1]):
            raise ValueError(f"For '{cls_name}', 'labels' must have shape {tuple(logits.shape[:-1])} "
                             f"('logits' shape without its class axis), but got {tuple(labels.shape)}.")
        return one_hot(labels, logits.shape[-1])
    check_float_tensor(labels, 'labels', cls_name)
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(f"For '{cls_name}', 'labels' must have the shape of 'logits' {tuple(logits.shape)}, "
                         f"but got {tuple(labels.shape)}.")
    return ops.cast(labels, mstype.float32)


def _cross_entropy(logits, labels):
    """``-sum(labels * log_softmax(logits))`` over the last axis, in float32."""
    return ops.neg(ops.reduce_sum(labels * log_softmax(logits, -1), -1))


class SoftmaxCrossEntropyWithLogits(LossBase):
    r"""Softmax cross entropy between logits and labels.

    .. math::
        \ell(x_i, c) = -\log\left(\frac{\exp(x_i[c])}{\sum_j \exp(x_i[j])}\right)
        = -x_i[c] + \log\left(\sum_j \exp(x_i[j])\right)

    Args:
        sparse (bool): whether ``labels`` are class indices instead of one-hot rows. Default: False.
        reduction (str): 'mean', 'sum' or 'none' (None, as early MindSpore wrote it, is 'none').
            Default: 'none'.
        is_grad (bool): accepted for scripts written for MindSpore 0.x/1.0; it has no effect.

    Inputs:
        - **logits** (Tensor) - :math:`(N, C)`, float16 or float32.
        - **labels** (Tensor) - :math:`(N,)` int32/int64 when ``sparse``, else :math:`(N, C)` floats.

    Outputs:
        Tensor: :math:`(N,)` for 'none', else a scalar; ``logits``' dtype.

    Raises:
        TypeError: ``sparse`` is not a bool; labels of the wrong dtype.
        ValueError: invalid ``reduction``; labels of the wrong shape.
    """

    def __init__(self, sparse: bool = False, reduction: str | None = 'none', *, is_grad: bool | None = None):
        super().__init__('none' if reduction is None else reduction)
        self.sparse = _check_sparse(sparse, self.cls_name)

    def construct(self, logits, labels):
        labels = _dense_labels(logits, labels, self.sparse, self.cls_name)
        return ops.cast(self.get_loss(_cross_entropy(logits, labels)), logits.dtype)

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class SoftmaxCrossEntropyExpand(Cell):
    r"""Softmax cross entropy written with elementary ops, averaged over the batch.

    .. math::
        \ell(x_i, t_i) = -\log\left(\frac{\exp(x_{t_i})}{\sum_j \exp(x_j)}\right)

    Args:
        sparse (bool): whether ``label`` holds class indices in :math:`[0, C)` instead of one-hot
            rows. Default: False.

    Inputs:
        - **logit** (Tensor) - :math:`(N, C)`, float16 or float32.
        - **label** (Tensor) - :math:`(N,)` int32/int64 when ``sparse``, else :math:`(N, C)` floats.

    Outputs:
        Tensor, a scalar: the mean loss.

    Raises:
        TypeError: ``sparse`` is not a bool; labels of the wrong dtype.
        ValueError: labels of the wrong shape.
    """

    def __init__(self, sparse: bool = False):
        super().__init__()
        self.sparse = _check_sparse(sparse, type(self).__name__)

    def construct(self, logit, label):
        label = _dense_labels(logit, label, self.sparse, type(self).__name__)
        loss = _cross_entropy(logit, label)
        if len(loss.shape) > 0:
            loss = ops.reduce_mean(loss, -1)
        return ops.cast(loss, logit.dtype)

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}"
