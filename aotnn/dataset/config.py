"""``mindspore.dataset.config``: the seed the dataset pipeline shuffles with."""
from __future__ import annotations

import numpy as np

_SEED: list = [None]


def set_seed(seed: int) -> None:
    """Seed every later shuffle of the dataset pipeline.

    Raises:
        TypeError / ValueError: ``seed`` is not an int in [0, 2**32 - 1].
    """
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TypeError(f"set_seed: seed must be an int, got {type(seed).__name__}")
    if not 0 <= seed <= 2 ** 32 - 1:
        raise ValueError(f"set_seed: seed must be in [0, 2**32 - 1], got {seed}")
    _SEED[0] = seed


def get_seed() -> int | None:
    """The seed set by :func:`set_seed` (None: shuffles are not reproducible)."""
    return _SEED[0]


def rng() -> np.random.Generator:
    """A generator for one shuffle: seeded from :func:`set_seed` when set."""
    return np.random.default_rng(_SEED[0])
