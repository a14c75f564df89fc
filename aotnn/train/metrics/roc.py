"""ROC curve and the area under a curve (auc)."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_type, rearrange_inputs

__all__ = ['ROC', 'auc']


def binary_clf_curve(scores: np.ndarray, target: np.ndarray, pos_label) -> tuple[np.ndarray, ...]:
    """False and true positive counts at every distinct score, highest score first.

    Returns:
        (fps, tps, thresholds): counts of samples with a score >= each threshold.
    """
    order = np.argsort(-scores, kind='stable')
    scores = scores[order]
    positive = (target[order] == pos_label).astype(np.int64)
    # the last index of each run of equal scores
    last = np.r_[np.nonzero(np.diff(scores))[0], scores.size - 1]
    tps = np.cumsum(positive)[last]
    fps = last + 1 - tps
    return fps, tps, scores[last]


class ROC(Metric):
    """Receiver operating characteristic curve: false and true positive rates as the threshold falls.

    Binary input: ``y_pred`` scores of ``y``'s shape and ``pos_label`` the positive class
    (default 1). The first threshold is the highest score plus 1 (no sample predicted positive).

    Multi-class input: ``y_pred`` :math:`(N, C)` and ``class_num`` = C. This follows MindSpore 2.10
    exactly, which is a one-vs-rest curve per class only when N == C: MindSpore reshapes the scores to
    :math:`(C, N)` (row-major, without transposing), takes column ``c`` of that (C scores) as class
    ``c``'s scores and scores them against the first C labels. For N != C use the binary form per
    class (``ROC(pos_label=c)`` on ``y_pred[:, c]``) for a true one-vs-rest curve.

    Args:
        class_num (int, optional): number of classes (multi-class input). Default: None.
        pos_label (int, optional): the positive class (binary input). Default: None.

    Raises:
        TypeError: ``class_num`` or ``pos_label`` neither an int nor None.

    Examples:
        >>> x = Tensor(np.array([0.28, 0.55, 0.15, 0.05]))
        >>> y = Tensor(np.array([0, 1, 2, 3]))
        >>> metric = nn.ROC(pos_label=2)
        >>> metric.update(x, y)
        >>> fpr, tpr, thresholds = metric.eval()
        >>> print(fpr, tpr, thresholds)
        [0.         0.33333333 0.66666667 0.66666667 1.        ] [0. 0. 0. 1. 1.] [1.55 0.55 0.28 0.15 0.05]
    """

    def __init__(self, class_num: int | None = None, pos_label: int | None = None):
        super().__init__()
        self.class_num = class_num if class_num is None else check_type(class_num, 'class_num', (int,), 'ROC')
        self.pos_label = pos_label if pos_label is None else check_type(pos_label, 'pos_label', (int,), 'ROC')
        self.clear()

    def clear(self) -> None:
        """Forget the data."""
        self.y_pred = 0
        self.y = 0
        self._is_update = False

    def _prepare(self, y_pred: np.ndarray, y: np.ndarray):
        if y_pred.ndim == y.ndim:
            if self.class_num is not None and self.class_num != 1:
                raise ValueError(f"For 'ROC', when predicted value (input[0]) and true value (input[1]) have the same "
                                 f"shape, the 'class_num' must be 1, but got {self.class_num}.")
            return y_pred.reshape(-1), y.reshape(-1), 1, 1 if self.pos_label is None else self.pos_label
        if y_pred.ndim == y.ndim + 1:
            if self.pos_label is not None:
                raise ValueError(f"For 'ROC', when the dimension of predicted value (input[0]) is the dimension of "
                                 f"true value (input[1]) plus 1, the 'pos_label' must be None, "
                                 f"but got {self.pos_label}.")
            if self.class_num != y_pred.shape[1]:
                raise ValueError(f"For 'ROC', the 'class_num' must equal the number of classes of the predicted value "
                                 f"(input[0]) {y_pred.shape[1]}, but got {self.class_num}.")
            if y_pred.ndim != 2:
                raise ValueError(f"For 'ROC', a multi-class predicted value (input[0]) must be 2-dimensional "
                                 f"(N, C), but got shape {y_pred.shape}.")
            # MindSpore 2.10 reshapes the (N, C) scores to (C, N) without transposing them (see the class
            # docstring); the curves below follow it.
            return y_pred.reshape(self.class_num, -1), y.reshape(-1), self.class_num, None
        raise ValueError(f"For 'ROC', predicted value (input[0]) and true value (input[1]) must have same dimensions, "
                         f"or the dimension of predicted value equal the dimension of true value add 1, "
                         f"but got {y_pred.ndim} and {y.ndim}.")

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Set the data: ``update(y_pred, y)`` (replaces earlier data).

        Raises:
            ValueError: not 2 inputs, or shapes that fit neither the binary nor the multi-class case.
        """
        y_pred, y = self._prediction_and_label(inputs, 'ROC')
        self.y_pred, self.y, self._classes, self._positive = self._prepare(y_pred, y)
        self._is_update = True

    @staticmethod
    def _curve(scores: np.ndarray, target: np.ndarray, pos_label):
        fps, tps, thresholds = binary_clf_curve(scores, target, pos_label)
        fps, tps = np.r_[0, fps], np.r_[0, tps]
        thresholds = np.r_[thresholds[0] + 1, thresholds]
        if fps[-1] <= 0:
            raise ValueError("For 'ROC.eval', there is no negative samples in true value, false positive value is "
                             "meaningless.")
        if tps[-1] <= 0:
            raise ValueError("For 'ROC.eval', there is no positive samples in true value, true positive value is "
                             "meaningless.")
        return fps / fps[-1], tps / tps[-1], thresholds

    def eval(self):
        """The curve: ``(fpr, tpr, thresholds)`` arrays, or lists of them (one per class).

        Raises:
            RuntimeError: ``update`` was never called.
            ValueError: a class has no positive or no negative sample.
        """
        self._check_updated()
        if self._classes == 1:
            return self._curve(self.y_pred, self.y, self._positive)
        if self.y_pred.shape[1] < self._classes:
            raise ValueError(f"For 'ROC.eval', multi-class input needs at least class_num={self._classes} samples, "
                             f"but got {self.y_pred.shape[1]}.")
        curves = [self._curve(self.y_pred[:, c], self.y[:self._classes], c) for c in range(self._classes)]
        return tuple(list(parts) for parts in zip(*curves))


def _as_1d(values: np.ndarray) -> np.ndarray:
    if values.ndim == 1 or (values.ndim == 2 and values.shape[1] == 1):
        return values.reshape(-1)
    raise ValueError(f"For 'auc', the input must be a 1-dimensional array, or a 2-dimensional array with the second "
                     f"dimension of 1, but got shape {values.shape}.")


def auc(x: np.ndarray, y: np.ndarray, reorder: bool = False) -> float:
    """Area under the curve through the points ``(x, y)``, by the trapezoidal rule.

    Args:
        x (numpy.ndarray): x coordinates, monotonic unless ``reorder``.
        y (numpy.ndarray): y coordinates.
        reorder (bool): sort the points by x (then y) first. Default: False.

    Returns:
        float, the area (x decreasing gives the area with a positive sign too).

    Raises:
        TypeError: ``x`` or ``y`` is not a numpy array.
        ValueError: different lengths, fewer than 2 points, arrays of other shapes, or ``x``
            neither increasing nor decreasing without ``reorder``.

    Examples:
        >>> auc(np.array([0., 0.5, 1.]), np.array([0., 1., 1.]))
        0.75
    """
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        raise TypeError(f"For 'auc', the argument 'x' and 'y' must all be np.ndarray, but got {type(x)}, {type(y)}")
    if x.ndim == 0 or y.ndim == 0 or x.shape[0] != y.shape[0]:
        raise ValueError(f"For 'auc', 'x' and 'y' must have the same number of samples, but got shapes "
                         f"{x.shape} and {y.shape}.")
    x, y = _as_1d(x), _as_1d(y)
    if x.shape[0] < 2:
        raise ValueError(f"For 'auc', at least 2 points are needed to compute the area, but got {x.shape[0]}.")
    direction = 1
    if reorder:
        order = np.lexsort((y, x))
        x, y = x[order], y[order]
    else:
        dx = np.diff(x)
        if np.any(dx < 0):
            if not np.all(dx <= 0):
                raise ValueError(f"For 'auc', if 'reorder' is False, 'x' must be increasing or decreasing, "
                                 f"but got {x}.")
            direction = -1
    area = float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))
    return direction * area
