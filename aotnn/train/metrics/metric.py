"""Metric base classes and the helpers metrics share.

Metrics are evaluation utilities: they run on the host with numpy (as MindSpore's do), on
values already computed by the network, so they are not ops and are never compiled.
"""
from __future__ import annotations

import functools
from abc import ABCMeta, abstractmethod
from typing import Any, Callable

import numpy as np

from ...common.tensor import Tensor

__all__ = ['Metric', 'EvaluationBase', 'rearrange_inputs']

EVAL_TYPES = ('classification', 'multilabel')


def rearrange_inputs(func: Callable) -> Callable:
    """Decorator for ``update``: reorders its inputs as the instance's ``indexes`` say.

    With ``indexes = [2, 0]``, ``update(a, b, c)`` runs as ``update(c, a)``; with ``indexes``
    None or empty the inputs pass unchanged.

    Args:
        func (Callable): the method to wrap.

    Returns:
        Callable, the wrapped method.
    """
    @functools.wraps(func)
    def wrapper(self, *inputs):
        indexes = self.indexes
        if indexes:
            inputs = [inputs[i] for i in indexes]
        return func(self, *inputs)
    return wrapper


class Metric(metaclass=ABCMeta):
    """Base class of metrics: ``clear`` resets, ``update`` accumulates, ``eval`` computes.

    Calling a metric (``metric(*inputs)``) clears it, updates it once and returns ``eval()``.
    """

    def __init__(self):
        self._indexes = None

    @staticmethod
    def _convert_data(data: Any) -> np.ndarray:
        """A Tensor, list or numpy array as a numpy array.

        Raises:
            TypeError: any other type.
        """
        if isinstance(data, Tensor):
            return data.asnumpy()
        if isinstance(data, list):
            return np.array(data)
        if isinstance(data, np.ndarray):
            return data
        raise TypeError(f"For 'Metric' and its derived classes, the input data type must be tensor, list or "
                        f"numpy.ndarray, but got {type(data)}.")

    def _prediction_and_label(self, inputs: tuple, owner: str, what: str = "predicted value, true value",
                              one_hot: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``update``'s two inputs as numpy arrays; with ``one_hot``, a one-hot label (of the prediction's rank)
        becomes class indices.

        Raises:
            ValueError: not exactly 2 inputs.
        """
        check_input_count(inputs, 2, owner, what)
        y_pred = self._convert_data(inputs[0])
        y = self._convert_data(inputs[1])
        if one_hot and y_pred.ndim == y.ndim and is_one_hot(y):
            y = y.argmax(axis=1)
        return y_pred, y

    def _check_updated(self) -> None:
        """RuntimeError unless ``update`` ran since the last ``clear`` (metrics that keep ``_is_update``)."""
        if not self._is_update:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")

    @property
    def indexes(self) -> list[int] | None:
        """The order ``update`` reads its inputs in (None: as given). Set it with :meth:`set_indexes`."""
        return getattr(self, '_indexes', None)

    def set_indexes(self, indexes: list[int]) -> Metric:
        """Make ``update`` (decorated with :func:`rearrange_inputs`) read ``inputs[i] for i in indexes``.

        Args:
            indexes (list[int]): positions of the inputs to use, in order.

        Returns:
            Metric, this metric.

        Raises:
            ValueError: ``indexes`` is not a list of ints.
        """
        if not isinstance(indexes, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
            raise ValueError(f"For 'set_indexes', the argument 'indexes' must be a list and all its elements must "
                             f"be int, but got {indexes!r}.")
        self._indexes = indexes
        return self

    def __call__(self, *inputs):
        self.clear()
        self.update(*inputs)
        return self.eval()

    @abstractmethod
    def clear(self) -> None:
        """Reset the accumulated state."""

    @abstractmethod
    def eval(self):
        """Compute the result from the accumulated state."""

    @abstractmethod
    def update(self, *inputs) -> None:
        """Accumulate one batch (usually predictions then labels)."""


class EvaluationBase(Metric):
    """Base class of classification metrics that take an ``eval_type``.

    Args:
        eval_type (str): 'classification' (single label) or 'multilabel'.

    Raises:
        TypeError: ``eval_type`` is neither.
    """

    def __init__(self, eval_type: str):
        super().__init__()
        if eval_type not in EVAL_TYPES:
            raise TypeError(f"The argument 'eval_type' must be in {set(EVAL_TYPES)}, but got {eval_type!r}.")
        self._type = eval_type

    def _check_shape(self, y_pred: np.ndarray, y: np.ndarray) -> None:
        """Classification: ``y`` is ``y_pred``'s shape without axis 1; multilabel: the same shape."""
        if self._type == 'classification':
            if y_pred.ndim != y.ndim + 1:
                raise ValueError(f"In classification case, the dimension of y_pred (predicted value) should equal to "
                                 f"the dimension of y (true value) add 1, but got y_pred dimension: {y_pred.ndim} "
                                 f"and y dimension: {y.ndim}.")
            if y.shape != (y_pred.shape[0],) + y_pred.shape[2:]:
                raise ValueError(f"In classification case, y shape should be y_pred shape without its index 1, "
                                 f"but got y_pred shape {y_pred.shape} and y shape {y.shape}.")
        elif y_pred.shape != y.shape:
            raise ValueError(f"In {self._type} case, the shape of y_pred (predicted value) should equal to the shape "
                             f"of y (true value), but got y_pred shape: {y_pred.shape} and y shape: {y.shape}.")

    def _checked_inputs(self, inputs: tuple, owner: str) -> tuple[np.ndarray, np.ndarray]:
        """``update(y_pred, y)``'s inputs as numpy arrays (one-hot labels as indices for classification),
        their shapes and multilabel values checked."""
        y_pred, y = self._prediction_and_label(inputs, owner, one_hot=self._type == 'classification')
        self._check_shape(y_pred, y)
        self._check_value(y_pred, y)
        return y_pred, y

    def _check_value(self, y_pred: np.ndarray, y: np.ndarray) -> None:
        """Multilabel values must all be 0 or 1."""
        if self._type != 'classification' and not (np.isin(y_pred, (0, 1)).all() and np.isin(y, (0, 1)).all()):
            raise ValueError("In multilabel case, all elements in y_pred (predicted value) and y (true value) should "
                             "be 0 or 1.")

    def clear(self) -> None:
        raise NotImplementedError

    def update(self, *inputs) -> None:
        raise NotImplementedError

    def eval(self):
        raise NotImplementedError


def check_input_count(inputs: tuple, count: int, owner: str, what: str = "predicted value, true value") -> None:
    if len(inputs) != count:
        raise ValueError(f"For '{owner}.update', it needs {count} inputs ({what}), but got {len(inputs)}.")


def check_samples(count: int, owner: str) -> None:
    """RuntimeError when ``eval`` finds no sample counted."""
    if count == 0:
        raise RuntimeError(f"The '{owner}' can not be calculated, because the number of samples is 0; "
                           f"call update before eval.")


def is_one_hot(data: np.ndarray) -> bool:
    """True when ``data`` holds 0/1 values with exactly one 1 along axis 1."""
    if data.ndim < 2 or not np.isin(data, (0, 1)).all():
        return False
    return bool((data.sum(axis=1) == 1).all())


def check_type(value: Any, name: str, types: tuple, owner: str) -> Any:
    """``value`` if it is one of ``types`` (bools are not ints); TypeError naming ``name`` otherwise."""
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        expected = ', '.join(t.__name__ for t in types)
        raise TypeError(f"For '{owner}', the '{name}' must be {expected}, but got {type(value).__name__}.")
    return value


def check_choice(value: Any, name: str, choices: tuple, owner: str) -> str:
    check_type(value, name, (str,), owner)
    if value not in choices:
        raise ValueError(f"For '{owner}', the '{name}' must be one of {list(choices)}, but got {value!r}.")
    return value
