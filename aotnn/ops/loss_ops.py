"""Functional ops used by losses: ``ops.uniform_candidate_sampler``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._dispatch import apply
from .functional import amax, cast, equal, expand_dims, floor, minimum, reshape, uniform_random

__all__ = ['uniform_candidate_sampler']


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"uniform_candidate_sampler: '{name}' must be a positive int, got {value!r}")
    return int(value)


def uniform_candidate_sampler(true_classes, num_true: int, num_sampled: int, unique: bool, range_max: int,
                              seed: int = 0, remove_accidental_hits: bool = False):
    r"""Sample classes uniformly from :math:`[0, range\_max)`.

    Samples are fresh on every call (inside a compiled graph too), drawn from the generator
    seeded by ``aotnn.set_seed``; ``seed`` is accepted for MindSpore compatibility.

    Args:
        true_classes (Tensor): int32 or int64 target classes, shape :math:`(batch, num\_true)`.
        num_true (int): targets per example.
        num_sampled (int): classes to sample.
        unique (bool): sample without replacement (distinct classes).
        range_max (int): number of possible classes.
        seed (int): accepted, unused. Default: 0.
        remove_accidental_hits (bool): with ``unique``, never sample one of ``true_classes``
            while other classes remain. Default: False.

    Returns:
        Tuple of 3 Tensors: ``sampled_candidates`` :math:`(num\_sampled,)` with ``true_classes``'
        dtype; ``true_expected_count`` :math:`(batch, num\_true)` and ``sampled_expected_count``
        :math:`(num\_sampled,)`, float32, both ``num_sampled / range_max`` (the probability that a
        class is in the sample).

    Raises:
        TypeError: ``true_classes`` is not an int32/int64 Tensor; ``unique`` or
            ``remove_accidental_hits`` is not a bool.
        ValueError: non-positive counts; ``num_sampled`` > ``range_max`` with ``unique``; a
            ``true_classes`` shape other than :math:`(batch, num\_true)`.
    """
    if not isinstance(true_classes, Tensor) or true_classes.dtype not in (mstype.int32, mstype.int64):
        got = true_classes.dtype if isinstance(true_classes, Tensor) else type(true_classes).__name__
        raise TypeError(f"uniform_candidate_sampler: 'true_classes' must be an int32 or int64 Tensor, got {got}")
    num_true = _positive_int(num_true, 'num_true')
    num_sampled = _positive_int(num_sampled, 'num_sampled')
    range_max = _positive_int(range_max, 'range_max')
    for name, flag in (('unique', unique), ('remove_accidental_hits', remove_accidental_hits)):
        if not isinstance(flag, bool):
            raise TypeError(f"uniform_candidate_sampler: '{name}' must be a bool, got {type(flag).__name__}")
    if unique and num_sampled > range_max:
        raise ValueError(f"uniform_candidate_sampler: with unique=True 'num_sampled' ({num_sampled}) must not "
                         f"exceed 'range_max' ({range_max})")
    if len(true_classes.shape) != 2 or true_classes.shape[1] != num_true:
        raise ValueError(f"uniform_candidate_sampler: 'true_classes' must have shape (batch, {num_true}), "
                         f"got {tuple(true_classes.shape)}")
    if unique:
        noise = uniform_random((range_max,))
        if remove_accidental_hits:
            classes = Tensor(np.arange(range_max, dtype=np.int32).reshape(1, range_max))
            flat = expand_dims(reshape(cast(true_classes, mstype.int32), (-1,)), 1)
            hit = amax(cast(equal(flat, classes), mstype.float32), 0)
            noise = noise - hit * 2.0
        sampled = apply("uniform_candidates", noise, num_sampled)
    else:
        noise = uniform_random((num_sampled,))
        sampled = cast(minimum(floor(noise * float(range_max)), float(range_max - 1)), mstype.int32)
    sampled = cast(sampled, true_classes.dtype)
    probability = num_sampled / range_max
    true_expected = Tensor(np.full(tuple(true_classes.shape), probability, np.float32))
    sampled_expected = Tensor(np.full((num_sampled,), probability, np.float32))
    return sampled, true_expected, sampled_expected
