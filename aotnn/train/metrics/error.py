"""Regression errors: MAE and MSE."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_samples, rearrange_inputs

__all__ = ['MAE', 'MSE']


class _Error(Metric):
    """Summed element errors divided by the number of samples (rows), as MindSpore does."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self) -> None:
        """Reset the sums."""
        self._error_sum = 0.0
        self._samples_num = 0

    @staticmethod
    def _error(diff: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)``; ``y`` is reshaped to ``y_pred``'s shape.

        Raises:
            ValueError: not 2 inputs, or ``y`` cannot take ``y_pred``'s shape.
        """
        name = type(self).__name__
        y_pred, y = self._prediction_and_label(inputs, name)
        if y.size != y_pred.size:
            raise ValueError(f"For '{name}.update', the true value (inputs[1]) must have as many elements as the "
                             f"predicted value (inputs[0]), but got shapes {y.shape} and {y_pred.shape}.")
        self._error_sum += float(self._error(y.reshape(y_pred.shape) - y_pred).sum())
        self._samples_num += y.shape[0] if y.ndim else 1

    def eval(self) -> float:
        """The summed error over the number of samples.

        Raises:
            RuntimeError: no sample was seen.
        """
        check_samples(self._samples_num, type(self).__name__)
        return self._error_sum / self._samples_num


class MAE(_Error):
    r"""Mean absolute error: :math:`\frac{\sum_i |y_i - x_i|}{n}`, ``n`` the number of samples (rows).

    Examples:
        >>> x = Tensor(np.array([0.1, 0.2, 0.6, 0.9]), mindspore.float32)
        >>> y = Tensor(np.array([0.1, 0.25, 0.7, 0.9]), mindspore.float32)
        >>> error = nn.MAE()
        >>> error.update(x, y)
        >>> error.eval()
        0.037499990314245224
    """

    @staticmethod
    def _error(diff):
        return np.abs(diff)


class MSE(_Error):
    r"""Mean squared error: :math:`\frac{\sum_i (y_i - x_i)^2}{n}`, ``n`` the number of samples (rows).

    Examples:
        >>> x = Tensor(np.array([0.1, 0.2, 0.6, 0.9]), mindspore.float32)
        >>> y = Tensor(np.array([0.1, 0.25, 0.5, 0.9]), mindspore.float32)
        >>> error = nn.MSE()
        >>> error.update(x, y)
        >>> error.eval()
        0.0031250009778887033
    """

    @staticmethod
    def _error(diff):
        return np.square(diff)
