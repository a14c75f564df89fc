"""SampledSoftmaxLoss."""
from __future__ import annotations

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ._utils import check_tensor
from .loss_base import LossBase

__all__ = ['SampledSoftmaxLoss']

# Added to a sampled logit that equals one of the row's true classes: its softmax weight becomes 0.
_HIT_LOGIT = -1e30
# MindSpore's cross entropy here is -sum(t * log(softmax + 1e-20)): a vanished probability costs 46.05.
_LOG_EPS = 1e-20


def _int_arg(value, name: str, cls_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls_name}', the '{name}' must be an int, but got {type(value).__name__}.")
    return value


class SampledSoftmaxLoss(LossBase):
    r"""Sampled softmax cross entropy: the softmax over the true classes and ``num_sampled``
    classes drawn uniformly, a cheaper stand-in for a softmax over many classes.

    Logits are corrected by the log of each class's expected count in the sample. Samples are
    drawn afresh on every call (``aotnn.set_seed`` seeds them) unless ``sampled_values`` fixes them.

    Args:
        num_sampled (int): classes sampled per batch.
        num_classes (int): number of classes.
        num_true (int): true classes per example. Default: 1.
        sampled_values (Union[list, tuple]): ``(sampled_candidates, true_expected_count,
            sampled_expected_count)`` as returned by ``ops.uniform_candidate_sampler``; None samples
            uniformly without replacement. Default: None.
        remove_accidental_hits (bool): drop sampled classes that equal one of the example's true
            classes from its softmax. Default: True.
        seed (int): accepted for compatibility; sampling follows ``aotnn.set_seed``. Default: 0.
        reduction (str): 'mean', 'sum' or 'none'. Default: 'none'.

    Inputs:
        - **weights** (Tensor) - :math:`(C, dim)` class embeddings.
        - **biases** (Tensor) - :math:`(C,)` class biases.
        - **labels** (Tensor) - :math:`(N, num\_true)` int32 or int64.
        - **logits** (Tensor) - :math:`(N, dim)` activations of the network.

    Outputs:
        Tensor: :math:`(N,)` for 'none', else a scalar.

    Raises:
        TypeError: ``sampled_values`` not a list or tuple; labels not int32/int64.
        ValueError: ``num_true`` < 1; ``seed`` < 0; ``num_sampled`` or ``num_true`` > ``num_classes``;
            ``sampled_values`` not of length 3; invalid ``reduction``.
    """

    def __init__(self, num_sampled: int, num_classes: int, num_true: int = 1, sampled_values=None,
                 remove_accidental_hits: bool = True, seed: int = 0, reduction: str = 'none'):
        super().__init__(reduction)
        name = self.cls_name
        for arg, value in (('num_sampled', num_sampled), ('num_classes', num_classes), ('num_true', num_true),
                           ('seed', seed)):
            _int_arg(value, arg, name)
        if num_true < 1:
            raise ValueError(f"For '{name}', the 'num_true' must be greater than or equal to 1, but got {num_true}.")
        if seed < 0:
            raise ValueError(f"For '{name}', the 'seed' must be greater than or equal to 0, but got {seed}.")
        if num_sampled < 1:
            raise ValueError(f"For '{name}', the 'num_sampled' must be at least 1, but got {num_sampled}.")
        if num_sampled > num_classes:
            raise ValueError(f"For '{name}', the 'num_sampled' must be smaller than or equal to 'num_classes', "
                             f"but got 'num_sampled': {num_sampled} and 'num_classes': {num_classes}.")
        if num_true > num_classes:
            raise ValueError(f"For '{name}', the 'num_true' must be smaller than or equal to 'num_classes', "
                             f"but got 'num_true': {num_true} and 'num_classes': {num_classes}.")
        if sampled_values is not None:
            if not isinstance(sampled_values, (list, tuple)):
                raise TypeError(f"For '{name}', the type of 'sampled_values' must be a list or tuple, "
                                f"but got {type(sampled_values).__name__}.")
            if len(sampled_values) != 3:
                raise ValueError(f"For '{name}', the length of 'sampled_values' must be equal to 3, "
                                 f"but got {len(sampled_values)}.")
            sampled_values = tuple(v if isinstance(v, Tensor) else Tensor(np.asarray(v)) for v in sampled_values)
        if not isinstance(remove_accidental_hits, bool):
            raise TypeError(f"For '{name}', the 'remove_accidental_hits' must be a bool, "
                            f"but got {type(remove_accidental_hits).__name__}.")
        self.num_sampled = num_sampled
        self.num_classes = num_classes
        self.num_true = num_true
        self.sampled_values = sampled_values
        self.remove_accidental_hits = remove_accidental_hits
        self.seed = seed

    def construct(self, weights, biases, labels, logits):
        name = self.cls_name
        for arg, value in (('weights', weights), ('biases', biases), ('labels', labels), ('logits', logits)):
            check_tensor(value, arg, name)
        if labels.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{name}', the dtype of 'labels' must be int32 or int64, but got {labels.dtype}.")
        out_logits, out_labels = self._sampled_logits(weights, biases, labels, logits)
        probability = ops.softmax(out_logits, 1)
        loss = 0.0 - ops.reduce_sum(out_labels * ops.log(probability + _LOG_EPS), 1)
        return self.get_loss(loss)

    def _sampled_logits(self, weights, biases, labels, logits):
        """Logits of the true classes then the sampled ones, :math:`(N, num\\_true + num\\_sampled)`,
        and their target probabilities (``1/num_true`` on the true classes)."""
        num_true, dim = self.num_true, weights.shape[1]
        labels = ops.reshape(ops.cast(labels, mstype.int32), (-1, num_true))
        batch = labels.shape[0]
        if self.sampled_values is None:
            sampled, true_expected, sampled_expected = ops.uniform_candidate_sampler(
                labels, num_true, self.num_sampled, True, self.num_classes, self.seed, self.remove_accidental_hits)
        else:
            sampled, true_expected, sampled_expected = self.sampled_values
        sampled = ops.cast(sampled, mstype.int32)
        labels_flat = ops.reshape(labels, (-1,))

        true_w = ops.reshape(ops.gather(weights, labels_flat, 0), (batch, num_true, dim))
        true_logits = ops.reduce_sum(ops.expand_dims(logits, 1) * true_w, 2)
        true_logits = true_logits + ops.reshape(ops.gather(biases, labels_flat, 0), (batch, num_true))
        sampled_w = ops.gather(weights, sampled, 0)
        sampled_logits = ops.batch_matmul(logits, sampled_w, False, True) + ops.gather(biases, sampled, 0)

        true_logits = true_logits - ops.log(ops.cast(true_expected, true_logits.dtype))
        sampled_logits = sampled_logits - ops.log(ops.cast(sampled_expected, sampled_logits.dtype))
        if self.remove_accidental_hits:
            hits = ops.equal(ops.expand_dims(labels, 2), ops.reshape(sampled, (1, 1, -1)))
            hit = ops.greater(ops.reduce_sum(ops.cast(hits, mstype.float32), 1), 0.5)
            sampled_logits = ops.select(hit, _HIT_LOGIT, sampled_logits)

        out_logits = ops.concat((true_logits, sampled_logits), 1)
        targets = np.concatenate([np.full((batch, num_true), 1.0 / num_true), np.zeros((batch, sampled.shape[0]))], 1)
        return out_logits, Tensor(targets.astype(mstype.to_numpy(out_logits.dtype)))

    def extend_repr(self) -> str:
        return (f"num_sampled={self.num_sampled}, num_classes={self.num_classes}, num_true={self.num_true}, "
                f"remove_accidental_hits={self.remove_accidental_hits}, reduction={self.reduction}")
