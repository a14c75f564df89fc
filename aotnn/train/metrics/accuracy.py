"""Accuracy."""
from __future__ import annotations

import numpy as np

from .metric import EvaluationBase, check_samples, rearrange_inputs

__all__ = ['Accuracy']


def class_count(metric, y_pred: np.ndarray, owner: str) -> int:
    """The class count of ``y_pred`` (axis 1), which must stay the same across updates."""
    if y_pred.ndim < 2:
        raise ValueError(f"For '{owner}.update', the predicted value (inputs[0]) must have at least 2 dimensions "
                         f"(N, C, ...), but got shape {y_pred.shape}.")
    if metric._class_num == 0:
        metric._class_num = y_pred.shape[1]
    elif y_pred.shape[1] != metric._class_num:
        raise ValueError(f"For '{owner}.update', class number not match, last input predicted data contain "
                         f"{metric._class_num} classes, but current predicted data contain {y_pred.shape[1]} classes.")
    return metric._class_num


def one_hot_rows(y_pred: np.ndarray, y: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The argmax of the scores ``y_pred`` and the labels ``y`` as one-hot rows of ``classes`` columns."""
    eye = np.eye(classes)
    return eye[y_pred.argmax(axis=1).reshape(-1)], eye[y.reshape(-1).astype(np.int64)]


class Accuracy(EvaluationBase):
    r"""Accuracy: the fraction of samples predicted right.

    .. math::
        \text{accuracy} = \frac{TP + TN}{TP + TN + FP + FN}

    Args:
        eval_type (str): 'classification' (``y_pred`` scores :math:`(N, C, ...)`, the prediction is
            their argmax over axis 1; ``y`` class indices :math:`(N, ...)` or one-hot) or
            'multilabel' (``y_pred`` and ``y`` both 0/1 of one shape; a sample counts when all
            its labels match). Default: 'classification'.

    Raises:
        TypeError: ``eval_type`` is neither.

    Examples:
        >>> x = Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]]), mindspore.float32)
        >>> y = Tensor(np.array([1, 0, 1]), mindspore.float32)
        >>> metric = nn.Accuracy('classification')
        >>> metric.update(x, y)
        >>> metric.eval()
        0.6666666666666666
    """

    def __init__(self, eval_type: str = 'classification'):
        super().__init__(eval_type)
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self._correct_num = 0
        self._total_num = 0
        self._class_num = 0

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)``.

        Raises:
            ValueError: not 2 inputs; mismatched shapes; non-0/1 multilabel values; a class count
                different from earlier batches.
        """
        y_pred, y = self._checked_inputs(inputs, 'Accuracy')
        classes = class_count(self, y_pred, 'Accuracy')
        if self._type == 'classification':
            correct = (y_pred.argmax(axis=1) == y).reshape(-1)
        else:
            rows = np.moveaxis(y_pred, 1, -1).reshape(-1, classes)
            correct = (rows == np.moveaxis(y, 1, -1).reshape(-1, classes)).all(axis=1)
        self._correct_num += int(correct.sum())
        self._total_num += correct.shape[0]

    def eval(self) -> float:
        """The accuracy.

        Raises:
            RuntimeError: no sample was seen.
        """
        check_samples(self._total_num, 'Accuracy')
        return self._correct_num / self._total_num
