"""Tensor: a value on the host (numpy-backed) or, while a graph is captured, a symbolic one."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from aotnn_runtime.buffers import aligned_empty, as_aligned

from . import dtype as mstype

_F = None


def _functional():
    global _F
    if _F is None:
        from ..ops import functional
        _F = functional
    return _F


def _default_numpy(data: Any) -> np.ndarray:
    """numpy array for Python data with MindSpore's defaults: int -> int64, float -> float32."""
    if isinstance(data, np.ndarray):
        return data
    array = np.asarray(data)
    if array.dtype == np.float64 and not isinstance(data, np.generic):
        array = array.astype(np.float32)
    return array


class Tensor:
    """A multi-dimensional array, MindSpore's ``Tensor``.

    Args:
        input_data: numpy array, Python number/bool, list/tuple, or another Tensor.
        dtype: element type (aotnn dtype, numpy dtype or name); inferred when None.
        shape: shape, used with ``init`` to create a lazily-initialised tensor.
        init: an initializer (name or ``Initializer``) used when ``input_data`` is None.
    Raises:
        TypeError: unsupported ``input_data`` or ``dtype``.
        ValueError: neither ``input_data`` nor ``shape``/``init`` given.
    """

    __array_priority__ = 100
    _version = 0  # bumped by every in-place change; compiled graphs re-prepare weights when it moves

    def __init__(self, input_data: Any = None, dtype: Any = None, shape: Any = None, init: Any = None,
                 internal: bool = False, const_arg: bool = False):
        self._expr = None
        if internal:
            return
        if input_data is None:
            if shape is None or init is None:
                raise ValueError("Tensor: give input_data, or both shape and init")
            from .initializer import initializer
            data = initializer(init, shape, dtype or mstype.float32).asnumpy()
        elif isinstance(input_data, Tensor):
            data = input_data.asnumpy()
        elif isinstance(input_data, (np.ndarray, np.generic, numbers.Number, bool, list, tuple)):
            data = _default_numpy(input_data)
        else:
            raise TypeError(f"input_data: expected a numpy array, number, bool, list, tuple or Tensor, "
                            f"got {type(input_data).__name__}")
        if dtype is not None:
            data = data.astype(mstype.to_numpy(dtype), copy=False)
        mstype.from_numpy(data.dtype)  # raises for unsupported numpy dtypes
        self._data = aligned_empty(data.shape, data.dtype)
        self._data[...] = data

    # -- construction helpers used by the framework --------------------------------------
    @classmethod
    def _from_numpy(cls, array: np.ndarray) -> Tensor:
        tensor = cls.__new__(cls)
        Tensor.__init__(tensor, internal=True)
        tensor._data = as_aligned(np.asarray(array))  # asarray keeps 0-d (ascontiguousarray makes it 1-d)
        return tensor

    @classmethod
    def _from_result(cls, array: np.ndarray) -> Tensor:
        """A Tensor on an array the runtime has just returned (fresh, owned by no one else), used as
        it is: no alignment check nor copy. Reading its address on caches the kernels have just
        evicted costs more than the runtime's own staging when the Tensor later feeds a call, and
        a Parameter made from it copies it anyway."""
        tensor = cls.__new__(cls)
        tensor._expr = None
        tensor._data = array
        return tensor

    @classmethod
    def _from_expr(cls, expr: Any) -> Tensor:
        tensor = cls.__new__(cls)
        Tensor.__init__(tensor, internal=True)
        tensor._data = None
        tensor._expr = expr
        import relay_frontend
        tensor._owner = relay_frontend.current()  # the graph this value belongs to
        return tensor

    @property
    def is_symbolic(self) -> bool:
        """True while the tensor stands for a value inside a graph being captured."""
        return self._expr is not None

    def _require_value(self, what: str) -> np.ndarray:
        if self._expr is not None:
            from relay_frontend import CaptureError
            raise CaptureError(
                f"{what} needs the tensor's value, which is unknown while construct is compiled; "
                "control flow or Python conversions on tensor values are not supported in "
                "construct (use ops.select/ops.where, or compute the value outside the network)")
        return self._data

    # -- basic properties -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        if self._expr is not None:
            from relay_frontend import static_shape
            return static_shape(self._expr)
        return tuple(self._data.shape)

    @property
    def dtype(self) -> mstype.DType:
        if self._expr is not None:
            from relay_frontend import dtype_of
            return mstype.from_numpy(dtype_of(self._expr))
        return mstype.from_numpy(self._data.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return mstype.to_numpy(self.dtype).itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def T(self) -> Tensor:  # noqa: N802 (MindSpore's name)
        return self.transpose()

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.size

    def asnumpy(self) -> np.ndarray:
        """The tensor's value as a numpy array (a copy)."""
        return self._require_value("asnumpy()").copy()

    def numpy(self) -> np.ndarray:
        return self.asnumpy()

    def __array__(self, dtype=None, copy=None):
        value = self._require_value("numpy conversion")
        return value.astype(dtype) if dtype is not None else value.copy()

    def item(self):
        value = self._require_value("item()")
        if value.size != 1:
            raise ValueError(f"item(): expected a tensor with one element, got shape {value.shape}")
        return value.reshape(-1)[0].item()

    def tolist(self):
        return self._require_value("tolist()").tolist()

    def __bool__(self) -> bool:
        value = self._require_value("bool()")
        if value.size != 1:
            raise ValueError(f"bool(): the truth value of a tensor with shape {value.shape} is ambiguous")
        return bool(value.reshape(-1)[0])

    def __int__(self) -> int:
        return int(self._require_value("int()").reshape(-1)[0])

    def __float__(self) -> float:
        return float(self._require_value("float()").reshape(-1)[0])

    def __index__(self) -> int:
        value = self._require_value("index()")
        if value.dtype.kind not in "iu" or value.size != 1:
            raise TypeError("only integer tensors of one element can be used as an index")
        return int(value.reshape(-1)[0])

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        if self._expr is not None:
            return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, symbolic)"
        return f"Tensor(shape={list(self.shape)}, dtype={self.dtype}, value=\n{np.array2string(self._data)})"

    def __str__(self) -> str:
        if self._expr is not None:
            return repr(self)
        return np.array2string(self._data)

    def __hash__(self) -> int:
        return id(self)

    def __deepcopy__(self, memo):
        import copy
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for key, value in self.__dict__.items():
            setattr(clone, key, as_aligned(value.copy()) if isinstance(value, np.ndarray) else copy.deepcopy(value, memo))
        return clone

    # -- operators ------------------------------------------------------------------------------
    def __add__(self, other): return _functional().add(self, other)
    def __radd__(self, other): return _functional().add(other, self)
    def __sub__(self, other): return _functional().sub(self, other)
    def __rsub__(self, other): return _functional().sub(other, self)
    def __mul__(self, other): return _functional().mul(self, other)
    def __rmul__(self, other): return _functional().mul(other, self)
    def __truediv__(self, other): return _functional().div(self, other)
    def __rtruediv__(self, other): return _functional().div(other, self)
    def __floordiv__(self, other): return _functional().floor_div(self, other)
    def __rfloordiv__(self, other): return _functional().floor_div(other, self)
    def __mod__(self, other): return _functional().fmod_floor(self, other)
    def __pow__(self, other): return _functional().pow(self, other)
    def __rpow__(self, other): return _functional().pow(other, self)
    def __matmul__(self, other): return _functional().matmul(self, other)
    def __neg__(self): return _functional().neg(self)
    def __pos__(self): return self
    def __abs__(self): return _functional().abs(self)
    def __invert__(self): return _functional().logical_not(self)
    def __and__(self, other): return _functional().logical_and(self, other)
    def __or__(self, other): return _functional().logical_or(self, other)
    def __eq__(self, other): return _functional().equal(self, other)  # type: ignore[override]
    def __ne__(self, other): return _functional().not_equal(self, other)  # type: ignore[override]
    def __lt__(self, other): return _functional().less(self, other)
    def __le__(self, other): return _functional().less_equal(self, other)
    def __gt__(self, other): return _functional().greater(self, other)
    def __ge__(self, other): return _functional().greater_equal(self, other)

    def __getitem__(self, index): return _functional().getitem(self, index)

    def __setitem__(self, index, value) -> None:
        data = self._require_value("item assignment")
        data[index] = value.asnumpy() if isinstance(value, Tensor) else value
        self._version += 1

    # -- methods the MindSpore docs use -----------------------------------------------------------
    def astype(self, dtype, copy: bool = True) -> Tensor: return _functional().cast(self, dtype)
    def to(self, dtype) -> Tensor: return _functional().cast(self, dtype)
    def float(self) -> Tensor: return _functional().cast(self, mstype.float32)
    def half(self) -> Tensor: return _functional().cast(self, mstype.float16)
    def int(self) -> Tensor: return _functional().cast(self, mstype.int32)
    def long(self) -> Tensor: return _functional().cast(self, mstype.int64)
    def bool(self) -> Tensor: return _functional().cast(self, mstype.bool_)

    def reshape(self, *shape) -> Tensor:
        return _functional().reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)

    view = reshape

    def transpose(self, *axes) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _functional().transpose(self, axes or None)

    def permute(self, *axes) -> Tensor: return self.transpose(*axes)
    def flatten(self, order="C", *, start_dim=0, end_dim=-1) -> Tensor:
        return _functional().flatten(self, start_dim=start_dim, end_dim=end_dim)
    def expand_dims(self, axis: int) -> Tensor: return _functional().expand_dims(self, axis)
    def unsqueeze(self, dim: int) -> Tensor: return _functional().expand_dims(self, dim)
    def squeeze(self, axis=None) -> Tensor: return _functional().squeeze(self, axis)
    def broadcast_to(self, shape) -> Tensor: return _functional().broadcast_to(self, shape)
    def expand_as(self, other) -> Tensor: return _functional().broadcast_to(self, other.shape)
    def sum(self, axis=None, keepdims=False, dtype=None) -> Tensor:
        out = _functional().reduce_sum(self, axis, keepdims)
        return out if dtype is None else out.astype(dtype)
    def mean(self, axis=None, keep_dims=False) -> Tensor: return _functional().mean(self, axis, keep_dims)
    def max(self, axis=None, keepdims=False) -> Tensor: return _functional().amax(self, axis, keepdims)
    def min(self, axis=None, keepdims=False) -> Tensor: return _functional().amin(self, axis, keepdims)
    def prod(self, axis=None, keep_dims=False) -> Tensor: return _functional().prod(self, axis, keep_dims)
    def argmax(self, axis=None, keepdims=False) -> Tensor: return _functional().argmax(self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False) -> Tensor: return _functional().argmin(self, axis, keepdims)
    def abs(self) -> Tensor: return _functional().abs(self)
    def exp(self) -> Tensor: return _functional().exp(self)
    def log(self) -> Tensor: return _functional().log(self)
    def sqrt(self) -> Tensor: return _functional().sqrt(self)
    def square(self) -> Tensor: return _functional().square(self)
    def sigmoid(self) -> Tensor: return _functional().sigmoid(self)
    def tanh(self) -> Tensor: return _functional().tanh(self)
    def relu(self) -> Tensor: return _functional().relu(self)
    def clip(self, xmin=None, xmax=None) -> Tensor: return _functional().clip_by_value(self, xmin, xmax)
    def matmul(self, other) -> Tensor: return _functional().matmul(self, other)
    def add(self, other) -> Tensor: return _functional().add(self, other)
    def sub(self, other) -> Tensor: return _functional().sub(self, other)
    def mul(self, other) -> Tensor: return _functional().mul(self, other)
    def div(self, other) -> Tensor: return _functional().div(self, other)
    def pow(self, other) -> Tensor: return _functional().pow(self, other)

    def cumsum(self, axis=None, dtype=None) -> Tensor:
        """Running sum along ``axis`` (of the flattened tensor when None), in ``dtype`` when given."""
        if axis is None:
            return _functional().cumsum(self.reshape(-1), 0, dtype)
        return _functional().cumsum(self, axis, dtype)

    def split(self, split_size_or_sections, axis=0) -> tuple: return _functional().split(self, split_size_or_sections, axis)
    def chunk(self, chunks, axis=0) -> tuple: return _functional().chunk(self, chunks, axis)
    def tile(self, reps) -> Tensor: return _functional().Tile()(self, tuple(reps))
    def swapaxes(self, axis0, axis1) -> Tensor: return _functional().swapaxes(self, axis0, axis1)
    def masked_fill(self, mask, value) -> Tensor: return _functional().masked_fill(self, mask, value)
    def softmax(self, axis=-1) -> Tensor: return _functional().softmax(self, axis)
    def copy(self) -> Tensor: return Tensor._from_numpy(self.asnumpy())
    def clone(self) -> Tensor: return self.copy()
    def fill(self, value) -> Tensor:
        return Tensor._from_numpy(np.full(self.shape, value, mstype.to_numpy(self.dtype)))
    def init_data(self) -> Tensor:
        return self


def tensor(input_data=None, dtype=None) -> Tensor:
    """``mindspore.tensor``: build a Tensor."""
    return Tensor(input_data, dtype)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)
