"""Precision and Recall."""
from __future__ import annotations

import sys

import numpy as np

from .accuracy import class_count, one_hot_rows
from .metric import EvaluationBase, check_samples, check_type, rearrange_inputs

__all__ = ['Precision', 'Recall']

_EPS = sys.float_info.min


class _PrecisionRecall(EvaluationBase):
    """Shared counting: true positives over a denominator (predicted or actual positives).

    Classification counts per class (the result has one value per class); multilabel counts
    per sample (one value per sample, over every sample seen).
    """

    _name = ''

    def __init__(self, eval_type: str = 'classification'):
        super().__init__(eval_type)
        self.eps = _EPS
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self._class_num = 0
        if self._type == 'multilabel':
            self._true_positives = np.empty(0)
            self._denominator = np.empty(0)
        else:
            self._true_positives = 0
            self._denominator = 0

    def _counted(self, y_pred: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The denominator's counts for this batch (predicted or actual positives)."""
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)``.

        Raises:
            ValueError: not 2 inputs; mismatched shapes; labels beyond the class count; non-0/1
                multilabel values.
        """
        y_pred, y = self._checked_inputs(inputs, self._name)
        classes = class_count(self, y_pred, self._name)
        if self._type == 'classification':
            if y.size and y.max() + 1 > classes:
                raise ValueError(f"For '{self._name}.update', predicted value (input[0]) should have the same classes "
                                 f"number as true value (input[1]), but got {classes} and {int(y.max()) + 1}.")
            y_pred, y = one_hot_rows(y_pred, y, classes)
        else:
            # one column per sample: counts per sample are sums over axis 0
            y_pred = np.swapaxes(y_pred, 1, 0).reshape(classes, -1)
            y = np.swapaxes(y, 1, 0).reshape(classes, -1)
        true_positives = (y * y_pred).sum(axis=0)
        counted = self._counted(y_pred, y)
        if self._type == 'multilabel':
            self._true_positives = np.concatenate((self._true_positives, true_positives))
            self._denominator = np.concatenate((self._denominator, counted))
        else:
            self._true_positives = self._true_positives + true_positives
            self._denominator = self._denominator + counted

    def eval(self, average: bool = False):
        """Per class (classification) or per sample (multilabel) values, or their mean.

        Args:
            average (bool): return the mean. Default: False.

        Returns:
            numpy.ndarray, or a float when ``average``.

        Raises:
            RuntimeError: no sample was seen.
            TypeError: ``average`` is not a bool.
        """
        check_samples(self._class_num, self._name)
        check_type(average, 'average', (bool,), self._name)
        result = self._true_positives / (self._denominator + self.eps)
        return result.mean() if average else result


class Precision(_PrecisionRecall):
    r"""Precision: :math:`\frac{TP}{TP + FP}`.

    Classification gives one value per class; multilabel one value per sample (0/1 inputs).

    Args:
        eval_type (str): 'classification' or 'multilabel'. Default: 'classification'.

    Raises:
        TypeError: ``eval_type`` is neither.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([1, 0, 1]))
        >>> metric = nn.Precision('classification')
        >>> metric.update(x, y)
        >>> metric.eval()
        [0.5 1. ]
    """

    _name = 'Precision'

    def _counted(self, y_pred, y):
        return y_pred.sum(axis=0)


class Recall(_PrecisionRecall):
    r"""Recall: :math:`\frac{TP}{TP + FN}`.

    Classification gives one value per class; multilabel one value per sample (0/1 inputs).

    Args:
        eval_type (str): 'classification' or 'multilabel'. Default: 'classification'.

    Raises:
        TypeError: ``eval_type`` is neither.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([1, 0, 1]))
        >>> metric = nn.Recall('classification')
        >>> metric.update(x, y)
        >>> metric.eval()
        [1.  0.5]
    """

    _name = 'Recall'

    def _counted(self, y_pred, y):
        return y.sum(axis=0)
