"""Conversions shared by ``aotnn.numpy``: array-likes to Tensors with MindSpore numpy's default dtypes."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor

# mindspore.numpy narrows Python's (and numpy's) 64-bit defaults: ints to int32, floats to float32
_NARROW = {np.dtype("int64"): np.int32, np.dtype("float64"): np.float32}


def default_numpy(value: Any, dtype: Any = None) -> np.ndarray:
    """``value`` (number, bool, list, tuple, numpy array) as a numpy array: ``dtype`` when given, else numpy's
    inference narrowed to int32 / float32 for Python scalars and sequences."""
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"expected numbers or bools, got {value!r} of numpy dtype {array.dtype}")
    if dtype is not None:
        return array.astype(mstype.to_numpy(dtype))
    if not isinstance(value, np.ndarray) and array.dtype in _NARROW:
        return array.astype(_NARROW[array.dtype])
    if array.dtype == np.float64:
        return array.astype(np.float32)
    return array


def as_tensor(value: Any, name: str, dtype: Any = None) -> Tensor:
    """``value`` as a Tensor (a Tensor passes through, cast when ``dtype`` differs)."""
    if isinstance(value, Tensor):
        return value if dtype is None or value.dtype == mstype.normalize(dtype) else value.astype(dtype)
    try:
        return Tensor._from_numpy(np.ascontiguousarray(default_numpy(value, dtype)))
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from None


def operand(value: Any, name: str) -> Any:
    """A binary op's operand: Tensors and Python numbers pass through (numbers broadcast as scalars);
    lists, tuples and numpy arrays become Tensors."""
    if isinstance(value, Tensor) or (isinstance(value, (int, float, bool)) and not isinstance(value, np.generic)):
        return value
    return as_tensor(value, name)


def with_dtype(result: Tensor, dtype: Any) -> Tensor:
    """``result`` cast to ``dtype`` when given."""
    from .. import ops
    return result if dtype is None else ops.cast(result, dtype)


def float_input(x: Tensor) -> Tensor:
    """``x`` cast to float32 when it is not a float tensor (for exp, log, sqrt, divide...)."""
    from .. import ops
    return x if x.dtype.is_float else ops.cast(x, mstype.float32)


def promote(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` cast to numpy's common type of their dtypes (float64 narrowed to float32 unless an
    operand is float64) when their dtypes differ."""
    from .. import ops
    if a.dtype == b.dtype:
        return a, b
    common = np.result_type(mstype.to_numpy(a.dtype), mstype.to_numpy(b.dtype))
    if common == np.float64 and mstype.float64 not in (a.dtype, b.dtype):
        common = np.dtype(np.float32)
    target = mstype.from_numpy(common)
    return (a if a.dtype == target else ops.cast(a, target)), (b if b.dtype == target else ops.cast(b, target))
