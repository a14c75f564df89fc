"""Primitive classes for losses: ``ops.UniformCandidateSampler`` and ``ops.KLDivLoss``."""
from __future__ import annotations

from .classification_loss_ops import kl_div
from .loss_ops import uniform_candidate_sampler
from .primitives import Primitive

__all__ = ['UniformCandidateSampler', 'KLDivLoss']


class UniformCandidateSampler(Primitive):
    """``ops.UniformCandidateSampler(num_true, num_sampled, unique, range_max, seed=0,
    remove_accidental_hits=False)(true_classes)``; see :func:`aotnn.ops.uniform_candidate_sampler`."""

    def __init__(self, num_true: int, num_sampled: int, unique: bool, range_max: int, seed: int = 0,
                 remove_accidental_hits: bool = False):
        super().__init__()
        self.num_true, self.num_sampled, self.unique = num_true, num_sampled, unique
        self.range_max, self.seed, self.remove_accidental_hits = range_max, seed, remove_accidental_hits

    def __call__(self, true_classes):
        return uniform_candidate_sampler(true_classes, self.num_true, self.num_sampled, self.unique,
                                         self.range_max, self.seed, self.remove_accidental_hits)


class KLDivLoss(Primitive):
    """``ops.KLDivLoss(reduction='mean')(logits, labels)``; see :func:`aotnn.ops.kl_div`."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def __call__(self, logits, labels):
        return kl_div(logits, labels, self.reduction)
