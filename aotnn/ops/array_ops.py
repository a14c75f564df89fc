"""MindSpore 2.x array ops: splitting, element gathers, repeats, running sums, and creation helpers."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.tensor import Tensor
from . import functional as F
from ._dispatch import apply

__all__ = ['split', 'chunk', 'unstack', 'unbind', 'gather_elements', 'tensor_scatter_elements', 'repeat_elements', 'repeat_interleave',
           'cumsum', 'swapaxes', 'movedim', 'moveaxis', 'permute', 'flip', 'linspace', 'eye', 'meshgrid',
           'identity', 'tuple_to_array', 'scalar_to_tensor', 'narrow', 'is_tensor', 'masked_fill',
           'full_like', 'reciprocal', 'mixed_precision_cast']


def _tensor(value: Any, op: str, name: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _axis(axis: Any, rank: int, op: str, name: str = "axis") -> int:
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {type(axis).__name__}")
    if not -builtins.max(rank, 1) <= axis < builtins.max(rank, 1):
        raise ValueError(f"{op}: {name} must be in [{-rank}, {rank}), got {axis}")
    return int(axis) % builtins.max(rank, 1)


def _slice_axis(x: Tensor, axis: int, start: int, stop: int) -> Tensor:
    begin, end = [0] * x.ndim, list(x.shape)
    begin[axis], end[axis] = start, stop
    return apply("strided_slice", x, tuple(begin), tuple(end), (1,) * x.ndim)


def split(tensor, split_size_or_sections, axis=0):
    """Split ``tensor`` along ``axis`` into pieces of ``split_size_or_sections`` elements (an int: equal
    pieces, the last one smaller if needed) or of the listed sizes (which must sum to the axis length).

    Returns:
        tuple[Tensor], the pieces.

    Raises:
        TypeError: ``tensor`` not a Tensor, ``split_size_or_sections`` not an int/tuple/list, ``axis`` not an int.
        ValueError: a non-positive size, or sections that do not sum to the axis length.
    """
    _tensor(tensor, "split", "tensor")
    axis = _axis(axis, tensor.ndim, "split")
    length = tensor.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)) and not isinstance(split_size_or_sections, bool):
        size = int(split_size_or_sections)
        if size <= 0:
            raise ValueError(f"split: split_size_or_sections must be positive, got {size}")
        sizes = [size] * (length // size) + ([length % size] if length % size else [])
    elif isinstance(split_size_or_sections, (tuple, list)):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or builtins.sum(sizes) != length:
            raise ValueError(f"split: sections must be non-negative and sum to {length} (axis {axis}), "
                             f"got {tuple(sizes)}")
    else:
        raise TypeError(f"split: split_size_or_sections must be an int, tuple or list, got "
                        f"{type(split_size_or_sections).__name__}")
    pieces, start = [], 0
    for size in sizes:
        if size == 0:
            raise ValueError("split: zero-size pieces are not supported")
        pieces.append(_slice_axis(tensor, axis, start, start + size) if size != length else tensor)
        start += size
    return tuple(pieces)


def chunk(input, chunks, axis=0):  # noqa: A002 (MindSpore's argument name)
    """Split ``input`` along ``axis`` into ``chunks`` pieces of ceil(length / chunks) elements (fewer
    pieces when the length runs out first).

    Raises:
        TypeError: ``chunks`` not an int.
        ValueError: ``chunks`` not positive.
    """
    _tensor(input, "chunk", "input")
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)):
        raise TypeError(f"chunk: chunks must be an int, got {type(chunks).__name__}")
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    axis = _axis(axis, input.ndim, "chunk")
    return split(input, -(-input.shape[axis] // int(chunks)), axis)


def unstack(input_x, axis=0):
    """Unpack ``input_x`` along ``axis`` into a tuple of tensors of one rank less."""
    _tensor(input_x, "unstack", "input_x")
    axis = _axis(axis, input_x.ndim, "unstack")
    return tuple(apply("squeeze", piece, (axis,)) for piece in split(input_x, 1, axis))


def unbind(input, dim=0):  # noqa: A002
    """``unstack(input, dim)``."""
    return unstack(input, dim)


def gather_elements(input, dim, index):  # noqa: A002
    """``out[i][j] = input[index[i][j]][j]`` for dim 0, ``input[i][index[i][j]]`` for dim 1, and so on.

    Args:
        input (Tensor): the source.
        dim (int): the axis to gather along.
        index (Tensor): int32/int64 indices of the input's rank; its extent may not exceed the input's on the
            other axes. The output has its shape.

    Raises:
        TypeError: not Tensors, ``index`` not of an int type, ``dim`` not an int.
        ValueError: ranks differ.
    """
    _tensor(input, "gather_elements", "input"), _tensor(index, "gather_elements", "index")
    if index.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"gather_elements: index must be int32 or int64, got {index.dtype}")
    if index.ndim != input.ndim:
        raise ValueError(f"gather_elements: index must have the input's rank {input.ndim}, got shape {index.shape}")
    return apply("gather_elements", input, index, _axis(dim, input.ndim, "gather_elements", "dim"))


def tensor_scatter_elements(input_x, indices, updates, axis=0, reduction="none"):
    """``input_x`` with ``updates`` written at ``indices`` along ``axis`` (the inverse of
    ``gather_elements``): for axis 1, ``out[i][indices[i][j]] = updates[i][j]``; with reduction 'add' the
    updates are added. Out-of-range indices are clipped into range.

    Raises:
        TypeError: not Tensors, indices not int32/int64, dtypes of input_x and updates differ.
        ValueError: ranks or shapes that do not match, or a reduction other than 'none' / 'add'.
    """
    for name, value in (("input_x", input_x), ("indices", indices), ("updates", updates)):
        _tensor(value, "tensor_scatter_elements", name)
    if indices.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"tensor_scatter_elements: indices must be int32 or int64, got {indices.dtype}")
    if updates.dtype != input_x.dtype:
        raise TypeError(f"tensor_scatter_elements: updates dtype {updates.dtype} differs from input_x's "
                        f"{input_x.dtype}")
    if indices.ndim != input_x.ndim or tuple(updates.shape) != tuple(indices.shape):
        raise ValueError(f"tensor_scatter_elements: indices (shape {indices.shape}) must have input_x's rank "
                         f"{input_x.ndim} and updates' shape {updates.shape}")
    if reduction not in ("none", "add"):
        raise ValueError(f"tensor_scatter_elements: reduction must be 'none' or 'add', got {reduction!r}")
    return apply("scatter_elements", input_x, indices, updates,
                 _axis(axis, input_x.ndim, "tensor_scatter_elements"), reduction)


def repeat_elements(x, rep, axis=0):
    """Repeat every element of ``x`` ``rep`` times along ``axis`` (numpy's ``repeat``)."""
    _tensor(x, "repeat_elements", "x")
    if isinstance(rep, bool) or not isinstance(rep, (int, np.integer)) or rep <= 0:
        raise ValueError(f"repeat_elements: rep must be a positive int, got {rep!r}")
    axis = _axis(axis, x.ndim, "repeat_elements")
    source = np.repeat(np.arange(x.shape[axis], dtype=np.int64), int(rep))
    return apply("gather", x, Tensor._from_numpy(source), axis=axis)


def repeat_interleave(input, repeats, axis=None):  # noqa: A002
    """``repeat_elements`` with an int ``repeats``; with ``axis`` None the input is flattened first."""
    _tensor(input, "repeat_interleave", "input")
    if axis is None:
        return repeat_elements(F.reshape(input, (-1,)), repeats, 0)
    return repeat_elements(input, repeats, axis)


def cumsum(x, axis, dtype=None):
    """Inclusive running sum of ``x`` along ``axis``, in ``dtype`` when given."""
    _tensor(x, "cumsum", "x")
    axis = _axis(axis, x.ndim, "cumsum")
    return apply("cumsum", x, axis, None if dtype is None else mstype.normalize(dtype).name)


def swapaxes(input, axis0, axis1):  # noqa: A002
    """``input`` with axes ``axis0`` and ``axis1`` exchanged."""
    _tensor(input, "swapaxes", "input")
    perm = list(range(input.ndim))
    a, b = _axis(axis0, input.ndim, "swapaxes", "axis0"), _axis(axis1, input.ndim, "swapaxes", "axis1")
    perm[a], perm[b] = perm[b], perm[a]
    return F.transpose(input, tuple(perm))


def movedim(x, source, destination):
    """``x`` with the axes ``source`` (int or sequence) moved to positions ``destination``."""
    _tensor(x, "movedim", "x")
    sources = [source] if isinstance(source, int) else list(source)
    destinations = [destination] if isinstance(destination, int) else list(destination)
    if len(sources) != len(destinations):
        raise ValueError(f"movedim: source and destination must have one length, got {source} and {destination}")
    sources = [_axis(a, x.ndim, "movedim", "source") for a in sources]
    destinations = [_axis(a, x.ndim, "movedim", "destination") for a in destinations]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise ValueError(f"movedim: repeated axes in {source} or {destination}")
    rest = iter(a for a in range(x.ndim) if a not in sources)
    placed = dict(zip(destinations, sources))
    perm = tuple(placed[i] if i in placed else next(rest) for i in range(x.ndim))
    return F.transpose(x, perm)


moveaxis = movedim


def permute(input, axis):  # noqa: A002
    """``transpose(input, axis)``."""
    return F.transpose(input, tuple(axis))


def flip(input, dims):  # noqa: A002
    """``input`` reversed along each axis in ``dims``."""
    _tensor(input, "flip", "input")
    out = input
    for axis in ([dims] if isinstance(dims, int) else dims):
        axis = _axis(axis, input.ndim, "flip", "dims")
        out = apply("gather", out, Tensor._from_numpy(np.arange(input.shape[axis] - 1, -1, -1, dtype=np.int64)),
                    axis=axis)
    return out


def narrow(input, axis, start, length):  # noqa: A002
    """The ``length`` elements of ``input`` from ``start`` along ``axis``."""
    _tensor(input, "narrow", "input")
    axis = _axis(axis, input.ndim, "narrow")
    if not 0 <= start and length > 0 and start + length <= input.shape[axis]:
        raise ValueError(f"narrow: [start, start + length) = [{start}, {start + length}) must lie in "
                         f"[0, {input.shape[axis]}] with a positive length")
    return _slice_axis(input, axis, int(start), int(start + length))


def _number(value: Any, op: str, name: str) -> float:
    if isinstance(value, Tensor):
        value = value.asnumpy()
    array = np.asarray(value)
    if array.ndim != 0 or array.dtype.kind not in "biuf":
        raise TypeError(f"{op}: {name} must be a number or a 0-d Tensor, got {value!r}")
    return array.item()


def linspace(start, end, steps):
    """``steps`` evenly spaced float32 values from ``start`` to ``end`` inclusive (known ahead of time)."""
    start, end = _number(start, "linspace", "start"), _number(end, "linspace", "end")
    steps = int(_number(steps, "linspace", "steps"))
    if steps <= 0:
        raise ValueError(f"linspace: steps must be positive, got {steps}")
    return Tensor._from_numpy(np.linspace(start, end, steps, dtype=np.float64).astype(np.float32))


def eye(n, m=None, dtype=None):
    """An (n, m) tensor with ones on the main diagonal (float32 unless ``dtype``)."""
    for name, value in (("n", n), ("m", m)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0):
            raise ValueError(f"eye: {name} must be a positive int, got {value!r}")
    np_dtype = mstype.to_numpy(dtype if dtype is not None else mstype.float32)
    return Tensor._from_numpy(np.eye(int(n), None if m is None else int(m), dtype=np_dtype))


def meshgrid(*inputs, indexing="xy"):
    """Coordinate grids from 1-D tensors: 'xy' (Cartesian: first two outputs' axes swapped) or 'ij'."""
    if len(inputs) == 1 and isinstance(inputs[0], (tuple, list)):
        inputs = tuple(inputs[0])
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for i, t in enumerate(inputs):
        if _tensor(t, "meshgrid", f"inputs[{i}]").ndim != 1:
            raise ValueError(f"meshgrid: inputs must be 1-D, got shape {t.shape} at {i}")
    sizes = [t.shape[0] for t in inputs]
    if indexing == "xy" and len(inputs) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, t in enumerate(inputs):
        position = (1 - i if i < 2 else i) if indexing == "xy" and len(inputs) >= 2 else i
        view = [1] * len(inputs)
        view[position] = t.shape[0]
        grids.append(F.broadcast_to(F.reshape(t, tuple(view)), tuple(sizes)))
    return tuple(grids)


def identity(x):
    """``x`` itself."""
    return _tensor(x, "identity", "x")


def tuple_to_array(input_x):
    """A tuple of numbers as a 1-D Tensor (int64 for ints, float32 for floats)."""
    if not isinstance(input_x, (tuple, list)) or not input_x:
        raise TypeError(f"tuple_to_array: input_x must be a non-empty tuple of numbers, got {input_x!r}")
    array = np.asarray(input_x)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"tuple_to_array: input_x must hold numbers, got {input_x!r}")
    return Tensor._from_numpy(array.astype(np.float32 if array.dtype.kind == "f" else np.int64))


def scalar_to_tensor(input_x, dtype=mstype.float32):
    """A number as a 0-d Tensor of ``dtype`` (float32 by default)."""
    return Tensor._from_numpy(np.asarray(_number(input_x, "scalar_to_tensor", "input_x"),
                                         mstype.to_numpy(dtype)))


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a Tensor."""
    return isinstance(obj, Tensor)


def masked_fill(input_x, mask, value):
    """``value`` where the bool ``mask`` (broadcast) is True, else ``input_x``."""
    _tensor(input_x, "masked_fill", "input_x"), _tensor(mask, "masked_fill", "mask")
    if mask.dtype != mstype.bool_:
        raise TypeError(f"masked_fill: mask must be a bool Tensor, got {mask.dtype}")
    fill = value if isinstance(value, Tensor) else Tensor._from_numpy(
        np.asarray(_number(value, "masked_fill", "value"), mstype.to_numpy(input_x.dtype)))
    return F.select(mask, F.cast(fill, input_x.dtype), input_x)


def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    """A tensor of ``input``'s shape (and dtype unless ``dtype``) filled with ``fill_value``."""
    _tensor(input, "full_like", "input")
    return F.full(input.shape, fill_value, dtype if dtype is not None else input.dtype)


def reciprocal(input):  # noqa: A002
    """1 / ``input`` element-wise (int inputs give float32)."""
    _tensor(input, "reciprocal", "input")
    if not input.dtype.is_float:
        input = F.cast(input, mstype.float32)
    return F.div(1.0, input)


def mixed_precision_cast(dst_dtype, x):
    """``x`` (or each Tensor of a tuple/list/dict) cast to ``dst_dtype`` when it is a float Tensor."""
    if isinstance(x, Tensor):
        return F.cast(x, dst_dtype) if x.dtype.is_float else x
    if isinstance(x, (tuple, list)):
        return type(x)(mixed_precision_cast(dst_dtype, item) for item in x)
    if isinstance(x, dict):
        return {key: mixed_precision_cast(dst_dtype, item) for key, item in x.items()}
    return x
