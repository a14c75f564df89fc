"""MindSpore's data types (``mindspore.float32`` ...) and their numpy counterparts."""
from __future__ import annotations

from typing import Any

import numpy as np


class DType:
    """A tensor element type. ``str()`` gives MindSpore's spelling ('Float32')."""

    __slots__ = ("name", "_title")

    def __init__(self, name: str, title: str):
        self.name = name
        self._title = title

    def __repr__(self) -> str:
        return self._title

    __str__ = __repr__

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, DType):
            return self.name == other.name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def is_float(self) -> bool:
        return np.dtype(self.name).kind == "f"


float16 = DType("float16", "Float16")
float32 = DType("float32", "Float32")
float64 = DType("float64", "Float64")
int8 = DType("int8", "Int8")
int16 = DType("int16", "Int16")
int32 = DType("int32", "Int32")
int64 = DType("int64", "Int64")
uint8 = DType("uint8", "UInt8")
uint16 = DType("uint16", "UInt16")
uint32 = DType("uint32", "UInt32")
uint64 = DType("uint64", "UInt64")
bool_ = DType("bool", "Bool")
half, single, double = float16, float32, float64
float_, int_, uint = float32, int32, uint32

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool_)
_BY_NAME = {d.name: d for d in ALL}
number_type = tuple(d for d in ALL if d is not bool_)
float_type = (float16, float32, float64)
int_type = (int8, int16, int32, int64)
uint_type = (uint8, uint16, uint32, uint64)


def from_numpy(np_dtype: Any) -> DType:
    """The aotnn dtype of a numpy dtype.

    Raises:
        TypeError: numpy dtype without an aotnn counterpart.
    """
    name = np.dtype(np_dtype).name
    if name not in _BY_NAME:
        raise TypeError(f"dtype: expected one of {', '.join(_BY_NAME)}, got numpy {name}")
    return _BY_NAME[name]


def to_numpy(dtype: Any) -> np.dtype:
    """The numpy dtype of an aotnn dtype (numpy dtypes and names pass through)."""
    if isinstance(dtype, DType):
        return np.dtype(dtype.name)
    if isinstance(dtype, str) and dtype.lower() in _BY_NAME:
        return np.dtype(dtype.lower())
    try:
        return np.dtype(from_numpy(dtype).name)
    except TypeError as err:
        raise TypeError(f"dtype: expected an aotnn dtype such as aotnn.float32, got {dtype!r}") from err


def normalize(dtype: Any) -> DType:
    """Any dtype spelling (aotnn, numpy, string) as an aotnn DType."""
    return from_numpy(to_numpy(dtype))


def dtype_to_nptype(dtype: DType):
    """MindSpore's ``dtype_to_nptype``: the numpy scalar type of ``dtype``."""
    return to_numpy(dtype).type


def pytype_to_dtype(obj: Any) -> DType:
    """MindSpore's ``pytype_to_dtype`` for bool, int, float and numpy types."""
    if obj is bool:
        return bool_
    if obj is int:
        return int64
    if obj is float:
        return float32
    return normalize(obj)
