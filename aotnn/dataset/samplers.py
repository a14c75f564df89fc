"""Samplers: which source indices a random-access dataset reads, in what order."""
from __future__ import annotations

import numpy as np

from . import config


def _optional_count(value, arg: str, op: str):
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
        raise ValueError(f"{op}: {arg} must be None or an int >= 0, got {value!r}")
    return value


class Sampler:
    """Base class: ``indices(length)`` gives the source positions to read."""

    def __init__(self, num_samples: int | None = None):
        self.num_samples = _optional_count(num_samples, "num_samples", type(self).__name__)

    def indices(self, length: int) -> np.ndarray:
        raise NotImplementedError

    def _limit(self, order: np.ndarray) -> np.ndarray:
        return order[:self.num_samples] if self.num_samples else order


class SequentialSampler(Sampler):
    """Indices ``start_index, start_index + 1, ...``."""

    def __init__(self, start_index: int | None = None, num_samples: int | None = None):
        super().__init__(num_samples)
        self.start_index = _optional_count(start_index, "start_index", "SequentialSampler") or 0

    def indices(self, length: int) -> np.ndarray:
        return self._limit(np.arange(self.start_index, length))


class RandomSampler(Sampler):
    """A random permutation (or draws with ``replacement``), seeded by ``dataset.config.set_seed``."""

    def __init__(self, replacement: bool = False, num_samples: int | None = None):
        super().__init__(num_samples)
        self.replacement = bool(replacement)

    def indices(self, length: int) -> np.ndarray:
        rng = config.rng()
        if self.replacement:
            return rng.integers(0, length, self.num_samples or length)
        return self._limit(rng.permutation(length))


class DistributedSampler(Sampler):
    """Shard ``shard_id`` of ``num_shards``: every ``num_shards``-th index of the (shuffled) order."""

    def __init__(self, num_shards: int, shard_id: int, shuffle: bool = True, num_samples: int | None = None,
                 offset: int = -1):
        super().__init__(num_samples)
        if not isinstance(num_shards, int) or num_shards < 1:
            raise ValueError(f"DistributedSampler: num_shards must be an int >= 1, got {num_shards!r}")
        if not isinstance(shard_id, int) or not 0 <= shard_id < num_shards:
            raise ValueError(f"DistributedSampler: shard_id must be in [0, {num_shards}), got {shard_id!r}")
        self.num_shards, self.shard_id, self.shuffle = num_shards, shard_id, bool(shuffle)

    def indices(self, length: int) -> np.ndarray:
        order = config.rng().permutation(length) if self.shuffle else np.arange(length)
        per_shard = -(-length // self.num_shards)
        order = np.resize(order, per_shard * self.num_shards)  # pad by wrapping, as MindSpore does
        return self._limit(order[self.shard_id::self.num_shards])
