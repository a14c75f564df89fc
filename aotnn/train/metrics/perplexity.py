"""Perplexity."""
from __future__ import annotations

import math

import numpy as np

from .metric import Metric, check_samples, rearrange_inputs

__all__ = ['Perplexity']


class Perplexity(Metric):
    r"""Perplexity of predicted class probabilities: :math:`\exp(-\frac{1}{N}\sum_i \log p_i(y_i))`.

    Probabilities are clamped at 1e-10 before the logarithm.

    Args:
        ignore_label (int, optional): a label whose positions are left out. Default: None.

    Raises:
        TypeError: ``ignore_label`` is neither an int nor None.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([1, 0, 1]))
        >>> metric = nn.Perplexity(ignore_label=None)
        >>> metric.update(x, y)
        >>> metric.eval()
        2.231443166940565
    """

    def __init__(self, ignore_label: int | None = None):
        super().__init__()
        if ignore_label is not None and (isinstance(ignore_label, bool) or not isinstance(ignore_label, int)):
            raise TypeError(f"For 'Perplexity', the 'ignore_label' must be an int or None, "
                            f"but got {type(ignore_label).__name__}.")
        self.ignore_label = ignore_label
        self.clear()

    def clear(self) -> None:
        """Reset the sums."""
        self._sum_metric = 0.0
        self._num_inst = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(preds, labels)``, probabilities :math:`(..., C)` and one label per row.

        Raises:
            ValueError: not 2 inputs.
            RuntimeError: the label count differs from the number of probability rows.
        """
        pred, label = self._prediction_and_label(inputs, 'Perplexity', 'predicted value, label')
        if pred.ndim < 1 or label.size * pred.shape[-1] != pred.size:
            raise RuntimeError(f"For 'Perplexity.update', predicted value (input[0]) and label (input[1]) should "
                               f"have the same shape, but got predicted value shape {pred.shape}, label shape "
                               f"{label.shape}.")
        label = label.reshape(-1)
        probs = pred.reshape(-1, pred.shape[-1])[np.arange(label.size), label.astype(np.int64)]
        count = label.size
        if self.ignore_label is not None:
            ignored = label == self.ignore_label
            probs = np.where(ignored, 1.0, probs)
            count -= int(ignored.sum())
        self._sum_metric -= float(np.sum(np.log(np.maximum(1e-10, probs))))
        self._num_inst += count

    def eval(self) -> float:
        """The perplexity.

        Raises:
            RuntimeError: no (non-ignored) sample was seen.
        """
        check_samples(self._num_inst, 'Perplexity')
        return math.exp(self._sum_metric / self._num_inst)
