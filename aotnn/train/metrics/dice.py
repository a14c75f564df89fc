"""Dice coefficient metric."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_samples, rearrange_inputs

__all__ = ['Dice']


class Dice(Metric):
    r"""Dice coefficient of each batch, summed and divided by the number of samples seen.

    .. math::
        dice = \frac{2 |X \cap Y|}{|X| + |Y| + smooth}

    Each ``update`` adds the coefficient of its whole batch and counts the batch's samples, so
    ``eval`` is the summed coefficients over the number of samples, as MindSpore computes it.

    Args:
        smooth (float): added to the denominator, > 0. Default: 1e-5.

    Raises:
        TypeError: ``smooth`` is not a float.
        ValueError: ``smooth`` <= 0.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]))
        >>> y = Tensor(np.array([[0, 1], [1, 0], [0, 1]]))
        >>> metric = nn.Dice(smooth=1e-5)
        >>> metric.update(x, y)
        >>> metric.eval()
        0.20467791371802546
    """

    def __init__(self, smooth: float = 1e-5):
        super().__init__()
        if isinstance(smooth, bool) or not isinstance(smooth, float):
            raise TypeError(f"For 'Dice', the 'smooth' must be float, but got {type(smooth).__name__}.")
        if not smooth > 0:
            raise ValueError(f"For 'Dice', the 'smooth' must be greater than 0, but got {smooth}.")
        self.smooth = smooth
        self.clear()

    def clear(self) -> None:
        """Reset the sums."""
        self._dice_coeff_sum = 0.0
        self._samples_num = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)`` of one shape.

        Raises:
            ValueError: not 2 inputs, or different shapes.
        """
        y_pred, y = self._prediction_and_label(inputs, 'Dice')
        if y_pred.shape != y.shape:
            raise ValueError(f"For 'Dice.update', predicted value (input[0]) and true value (input[1]) should have "
                             f"same shape, but got {y_pred.shape} and {y.shape}.")
        self._samples_num += y.shape[0]
        p, t = y_pred.reshape(-1).astype(np.float64), y.reshape(-1).astype(np.float64)
        self._dice_coeff_sum += 2 * float(p @ t) / float(p @ p + t @ t + self.smooth)

    def eval(self) -> float:
        """The summed coefficients over the number of samples.

        Raises:
            RuntimeError: no sample was seen.
        """
        check_samples(self._samples_num, 'Dice coefficient')
        return self._dice_coeff_sum / float(self._samples_num)
