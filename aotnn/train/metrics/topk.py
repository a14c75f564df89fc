"""Top-k categorical accuracy: TopKCategoricalAccuracy, Top1CategoricalAccuracy, Top5CategoricalAccuracy."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_samples, rearrange_inputs

__all__ = ['TopKCategoricalAccuracy', 'Top1CategoricalAccuracy', 'Top5CategoricalAccuracy']


class TopKCategoricalAccuracy(Metric):
    """Fraction of samples whose label is among the ``k`` highest scores (ties: the earlier class first).

    Args:
        k (int): how many top scores count, >= 1.

    Raises:
        TypeError: ``k`` is not an int.
        ValueError: ``k`` < 1.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.],
        ...         [0.9, 0.6, 0.2, 0.01, 0.3]]), mindspore.float32)
        >>> y = Tensor(np.array([2, 0, 1]), mindspore.float32)
        >>> topk = nn.TopKCategoricalAccuracy(3)
        >>> topk.update(x, y)
        >>> topk.eval()
        0.6666666666666666
    """

    def __init__(self, k: int):
        super().__init__()
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"For '{type(self).__name__}', the type of the argument 'k' should be int, "
                            f"but got {type(k).__name__}.")
        if k < 1:
            raise ValueError(f"For '{type(self).__name__}', the argument 'k' must be at least 1, but got {k}.")
        self.k = k
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self._correct_num = 0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)`` with scores :math:`(N, C)` and indices or one-hot labels.

        Raises:
            ValueError: not 2 inputs.
        """
        y_pred, y = self._prediction_and_label(inputs, type(self).__name__, one_hot=True)
        top = np.argsort(-y_pred, axis=1, kind='stable')[:, :self.k]
        hit = (top == y.reshape(-1, 1)).any(axis=1)
        self._correct_num += int(hit.sum())
        self._samples_num += hit.shape[0]

    def eval(self) -> float:
        """The top-k accuracy.

        Raises:
            RuntimeError: no sample was seen.
        """
        check_samples(self._samples_num, type(self).__name__)
        return self._correct_num / self._samples_num


class Top1CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-1 categorical accuracy (TopKCategoricalAccuracy with k=1)."""

    def __init__(self):
        super().__init__(1)


class Top5CategoricalAccuracy(TopKCategoricalAccuracy):
    """Top-5 categorical accuracy (TopKCategoricalAccuracy with k=5)."""

    def __init__(self):
        super().__init__(5)
