"""Fbeta and F1."""
from __future__ import annotations

import sys

from .accuracy import class_count, one_hot_rows
from .metric import Metric, check_samples, check_type, rearrange_inputs

__all__ = ['Fbeta', 'F1']


class Fbeta(Metric):
    r"""The F-beta score per class, a weighted harmonic mean of precision and recall.

    .. math::
        F_\beta = \frac{(1 + \beta^2) \cdot TP}{(1 + \beta^2) \cdot TP + \beta^2 \cdot FN + FP}

    Args:
        beta (Union[float, int]): weight of recall against precision, > 0.

    Raises:
        ValueError: ``beta`` <= 0.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([1, 0, 1]))
        >>> metric = nn.Fbeta(1)
        >>> metric.update(x, y)
        >>> metric.eval()
        [0.66666667 0.66666667]
    """

    def __init__(self, beta):
        super().__init__()
        check_type(beta, 'beta', (int, float), type(self).__name__)
        if not beta > 0:
            raise ValueError(f"For 'Fbeta', the argument 'beta' must be greater than 0, but got {beta}.")
        self.beta = beta
        self.eps = sys.float_info.min
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self._true_positives = 0
        self._actual_positives = 0
        self._positives = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)`` with scores :math:`(N, C)` and indices or one-hot labels.

        Raises:
            ValueError: not 2 inputs; labels beyond the class count; a class count different
                from earlier batches.
        """
        y_pred, y = self._prediction_and_label(inputs, 'Fbeta', one_hot=True)
        classes = class_count(self, y_pred, 'Fbeta')
        if y.size and y.max() + 1 > classes:
            raise ValueError(f"For 'Fbeta.update', predicted value (inputs[0]) and true value (inputs[1]) should "
                             f"contain same classes, but got {classes} and {int(y.max()) + 1}.")
        y_pred, y = one_hot_rows(y_pred, y, classes)
        self._true_positives = self._true_positives + (y * y_pred).sum(axis=0)
        self._positives = self._positives + y_pred.sum(axis=0)
        self._actual_positives = self._actual_positives + y.sum(axis=0)

    def eval(self, average: bool = False):
        """The score per class, or their mean.

        Args:
            average (bool): return the mean over classes. Default: False.

        Raises:
            TypeError: ``average`` is not a bool.
            RuntimeError: no sample was seen.
        """
        check_type(average, 'average', (bool,), type(self).__name__)
        check_samples(self._class_num, type(self).__name__)
        beta2 = self.beta ** 2
        fbeta = (1.0 + beta2) * self._true_positives / (beta2 * self._actual_positives + self._positives + self.eps)
        return fbeta.mean() if average else fbeta


class F1(Fbeta):
    r"""The F1 score per class: :math:`F_1 = \frac{2 TP}{2 TP + FN + FP}` (Fbeta with beta 1).

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([1, 0, 1]))
        >>> metric = nn.F1()
        >>> metric.update(x, y)
        >>> metric.eval()
        [0.66666667 0.66666667]
    """

    def __init__(self):
        super().__init__(1.0)
