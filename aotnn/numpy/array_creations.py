"""``mindspore.numpy`` array creation: values known ahead of time, made as plain data (as ``ops.ones``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from ._convert import as_tensor, default_numpy

__all__ = ['array', 'asarray', 'asfarray', 'copy', 'ones', 'zeros', 'full', 'empty', 'ones_like', 'zeros_like',
           'full_like', 'empty_like', 'arange', 'linspace', 'eye', 'identity', 'tril', 'triu', 'meshgrid']


def _shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or any(isinstance(s, bool) or not isinstance(s, (int, np.integer))
                                                   or s < 0 for s in shape):
        raise TypeError(f"{name}: expected an int or a tuple/list of non-negative ints, got {shape!r}")
    return tuple(int(s) for s in shape)


def _make(array: np.ndarray) -> Tensor:
    return Tensor._from_numpy(np.ascontiguousarray(array))


def array(obj, dtype=None, copy=True, ndmin=0):  # noqa: A002 (MindSpore's argument name)
    """A Tensor from ``obj`` (a Tensor, number, bool, list, tuple or numpy array); Python ints become int32 and
    floats float32 unless ``dtype``; ``ndmin`` leading axes of size 1 are added as needed.

    Raises:
        TypeError: ``obj`` holds something other than numbers or bools.
    """
    out = as_tensor(obj, "array", dtype)
    if ndmin > out.ndim:
        out = ops.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def asarray(a, dtype=None):
    """``a`` as a Tensor (no copy for a Tensor of the right dtype)."""
    return as_tensor(a, "asarray", dtype)


def asfarray(a, dtype=mstype.float32):
    """``a`` as a float Tensor (float32 unless ``dtype`` is another float type)."""
    if not mstype.normalize(dtype).is_float:
        dtype = mstype.float32
    return as_tensor(a, "asfarray", dtype)


def copy(a):  # noqa: A001
    """A new Tensor with ``a``'s values (known ahead of time)."""
    return _make(as_tensor(a, "copy").asnumpy().copy())


def ones(shape, dtype=mstype.float32):
    """Ones of ``shape`` (float32 by default)."""
    return ops.ones(_shape(shape), dtype)


def zeros(shape, dtype=mstype.float32):
    """Zeros of ``shape`` (float32 by default)."""
    return ops.zeros(_shape(shape), dtype)


def empty(shape, dtype=mstype.float32):
    """A tensor of ``shape``; aotnn fills it with zeros, so nothing uninitialised is ever read."""
    return ops.zeros(_shape(shape), dtype)


def full(shape, fill_value, dtype=None):
    """``fill_value`` (a number or an array-like broadcast to ``shape``) everywhere; the dtype follows
    ``fill_value`` (int32 for ints, float32 for floats) unless ``dtype``."""
    value = default_numpy(fill_value.asnumpy() if isinstance(fill_value, Tensor) else fill_value, dtype)
    return _make(np.broadcast_to(value, _shape(shape)).astype(value.dtype))


def _like(a, dtype, shape, fill) -> Tensor:
    a = as_tensor(a, "a")
    return full(_shape(shape) if shape is not None else a.shape, fill, dtype if dtype is not None else a.dtype)


def ones_like(a, dtype=None, shape=None):
    """Ones of ``a``'s shape and dtype (or ``shape`` / ``dtype``)."""
    return _like(a, dtype, shape, 1)


def zeros_like(a, dtype=None, shape=None):
    """Zeros of ``a``'s shape and dtype (or ``shape`` / ``dtype``)."""
    return _like(a, dtype, shape, 0)


def empty_like(prototype, dtype=None, shape=None):
    """``zeros_like`` (aotnn never hands out uninitialised memory)."""
    return _like(prototype, dtype, shape, 0)


def full_like(a, fill_value, dtype=None, shape=None):
    """``fill_value`` in ``a``'s shape and dtype (or ``shape`` / ``dtype``)."""
    return _like(a, dtype, shape, fill_value)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop) by ``step``: int32 when every argument is an int, else float32.

    Raises:
        ValueError: ``step`` is 0.
    """
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("arange: step must not be 0")
    values = np.arange(start, stop, step)
    if dtype is not None:
        return _make(values.astype(mstype.to_numpy(dtype)))
    return _make(values.astype(np.float32 if values.dtype.kind == "f" else np.int32))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced float32 values from ``start`` to ``stop`` (inclusive when ``endpoint``); with
    ``retstep`` also the spacing. Array-like bounds give one sequence per element, placed on ``axis``."""
    if isinstance(num, bool) or not isinstance(num, (int, np.integer)) or num < 0:
        raise ValueError(f"linspace: num must be a non-negative int, got {num!r}")
    start = start.asnumpy() if isinstance(start, Tensor) else start
    stop = stop.asnumpy() if isinstance(stop, Tensor) else stop
    values, step = np.linspace(start, stop, int(num), endpoint=endpoint, retstep=True, axis=axis)
    out = _make(values.astype(mstype.to_numpy(dtype) if dtype is not None else np.float32))
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=mstype.float32):  # noqa: N803 (MindSpore's argument names)
    """An (N, M) tensor with ones on the ``k``-th diagonal."""
    for name, value in (("N", N), ("M", M), ("k", k)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise TypeError(f"eye: {name} must be an int, got {value!r}")
    return _make(np.eye(int(N), None if M is None else int(M), int(k), dtype=mstype.to_numpy(dtype)))


def identity(n, dtype=mstype.float32):
    """The (n, n) identity matrix."""
    return eye(n, dtype=dtype)


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal of the last two axes zeroed."""
    return ops.tril(as_tensor(m, "tril"), k)


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal of the last two axes zeroed."""
    return ops.triu(as_tensor(m, "triu"), k)


def meshgrid(*xi, sparse=False, indexing="xy"):
    """Coordinate grids from 1-D arrays ('xy': Cartesian, 'ij': matrix indexing); ``sparse`` is not supported."""
    if sparse:
        raise ValueError("meshgrid: sparse=True is not supported")
    return ops.meshgrid(*(as_tensor(x, "meshgrid") for x in xi), indexing=indexing)
