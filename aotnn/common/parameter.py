"""Parameter: a named, trainable Tensor owned by a Cell."""
from __future__ import annotations

from typing import Any

import numpy as np

from aotnn_runtime.buffers import aligned_empty

from . import dtype as mstype
from .tensor import Tensor


# Bumped whenever any Parameter's value array is replaced or its version moves (``_data`` or
# ``_version`` set): a compiled call whose parameters were resolved at the same count skips
# looking at each of them again (a hundred reads cost ResNet-18 tens of microseconds per call).
PARAMETER_STATE = [0]
_STATE_FIELDS = frozenset(("_data", "_version"))


class Parameter(Tensor):
    """A Tensor that a Cell owns and an optimizer updates, MindSpore's ``Parameter``.

    Args:
        default_input: initial value (Tensor, numpy array, number, or a Tensor made by ``initializer``).
        name: name; inside a Cell it becomes the attribute path (``conv1.weight``).
        requires_grad: whether optimizers update it.
        layerwise_parallel: accepted for compatibility; no effect on one device.
        parallel_optimizer: accepted for compatibility; no effect on one device.
    Raises:
        TypeError: ``default_input`` of an unsupported type.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in _STATE_FIELDS:
            PARAMETER_STATE[0] += 1

    def __init__(self, default_input: Any, name: str | None = None, requires_grad: bool = True,
                 layerwise_parallel: bool = False, parallel_optimizer: bool = True):
        if isinstance(default_input, Tensor):
            super().__init__(default_input.asnumpy())
        else:
            super().__init__(default_input)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name: expected a str or None, got {type(name).__name__}")
        self._name = name if name is not None else "Parameter"
        self._user_named = name is not None
        self.requires_grad = bool(requires_grad)
        self.layerwise_parallel = layerwise_parallel
        self.parallel_optimizer = parallel_optimizer
        self.is_init = True

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ValueError(f"name: expected a non-empty str, got {value!r}")
        self._name = value

    @property
    def data(self) -> Parameter:
        return self

    def set_data(self, data: Any, slice_shape: bool = False) -> Parameter:
        """Replace the value. The new value keeps this parameter's dtype; the shape may change.

        Args:
            data: a Tensor, numpy array or number.
        Returns:
            this Parameter.
        Raises:
            TypeError: ``data`` of an unsupported type.
        """
        if isinstance(data, Tensor):
            array = data.asnumpy()
        elif isinstance(data, (np.ndarray, np.generic, int, float, bool, list, tuple)):
            array = np.asarray(data)
        else:
            raise TypeError(f"data: expected a Tensor, numpy array or number, got {type(data).__name__}")
        if array.ndim == 0 and self.ndim > 0:
            array = np.full(self.shape, array)
        array = array.astype(self._data.dtype, copy=False)
        self._version += 1
        if array.shape == self._data.shape:
            self._data[...] = array  # in place: compiled graphs keep seeing the same buffer
        else:
            self._data = aligned_empty(array.shape, array.dtype)
            self._data[...] = array
        return self

    def assign_value(self, value: Any) -> Parameter:
        return self.set_data(value)

    def set_dtype(self, dtype: Any) -> Parameter:
        """Convert the stored value to ``dtype``."""
        array = self._data.astype(mstype.to_numpy(dtype))
        self._version += 1
        self._data = aligned_empty(array.shape, array.dtype)
        self._data[...] = array
        return self

    def clone(self, init: str = "same") -> Parameter:
        """A new Parameter with a copy of the value (or ``init``'s), name and flags."""
        value = self.asnumpy() if init == "same" else None
        if value is None:
            from .initializer import initializer
            value = initializer(init, self.shape, self.dtype).asnumpy()
        twin = Parameter(value, name=self.name, requires_grad=self.requires_grad,
                         layerwise_parallel=self.layerwise_parallel, parallel_optimizer=self.parallel_optimizer)
        return twin

    def __repr__(self) -> str:
        return (f"Parameter (name={self.name}, shape={self.shape}, dtype={self.dtype}, "
                f"requires_grad={self.requires_grad})")

    __str__ = __repr__


class ParameterTuple(tuple):
    """A tuple of Parameters (MindSpore's ``ParameterTuple``)."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for item in items:
            if not isinstance(item, Parameter):
                raise TypeError(f"ParameterTuple: expected Parameters, got {type(item).__name__}")
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: str = "same") -> ParameterTuple:
        clones = []
        for param in self:
            twin = param.clone(init)
            twin.name = f"{prefix}.{param.name}"
            clones.append(twin)
        return ParameterTuple(clones)
