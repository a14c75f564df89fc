"""scikit-learn's handwritten digits as the LeNet5 examples use them: 1x32x32 images, a fixed split, batches.

Shared by tools/bench_quant.py and the digits training tests (scikit-learn ships the data: no download).
"""
from __future__ import annotations

import numpy as np

from aotnn import Tensor

HELD_OUT = 0.25


def digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 8x8 digits as float32 in [0, 1], upsampled to 1x32x32 by 4x4 blocks, with int32 labels."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = np.kron(data.images.astype(np.float32) / 16.0, np.ones((4, 4), np.float32))[:, None]
    return np.ascontiguousarray(images), data.target.astype(np.int32)


def split(count: int) -> tuple[np.ndarray, np.ndarray]:
    """One fixed random split: (training indices, held-out indices), ``HELD_OUT`` of them held out."""
    order = np.random.default_rng(0).permutation(count)
    cut = count - int(count * HELD_OUT)
    return order[:cut], order[cut:]


class ShuffledBatches:
    """A dataset in MindSpore's shape: ``create_tuple_iterator()`` yields (image, label) batches,
    reshuffled on every pass (every epoch), dropping the last incomplete batch."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, batch: int, seed: int):
        self.images, self.labels, self.batch = images, labels, batch
        self.rng = np.random.default_rng(seed)

    def create_tuple_iterator(self):
        order = self.rng.permutation(len(self.labels))
        for start in range(0, len(order) - self.batch + 1, self.batch):
            index = order[start:start + self.batch]
            yield Tensor(self.images[index]), Tensor(self.labels[index])
