"""Lowering rules that move data without arithmetic: reshape, transpose, slicing, joining."""
from __future__ import annotations

from tvm import relax

from ..capture import static_shape
from ..errors import CaptureError
from .common import normalize_axis
from .registry import rule

_op = relax.op


@rule("reshape")
def reshape(x, shape):
    shape = [int(s) for s in shape]
    size = 1
    for s in static_shape(x):
        size *= s
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if shape.count(-1) > 1 or (shape.count(-1) == 0 and known != size) or (known and size % known):
        raise CaptureError(f"reshape: cannot reshape {static_shape(x)} to {tuple(shape)}")
    return _op.reshape(x, shape)


@rule("flatten")
def flatten(x, start_dim=1, end_dim=-1):
    shape = static_shape(x)
    if not shape:
        return _op.reshape(x, [1])
    start, end = normalize_axis(start_dim, len(shape)), normalize_axis(end_dim, len(shape))
    merged = 1
    for s in shape[start:end + 1]:
        merged *= s
    return _op.reshape(x, list(shape[:start]) + [merged] + list(shape[end + 1:]))


@rule("transpose")
def transpose(x, axes=None):
    rank = len(static_shape(x))
    axes = list(range(rank))[::-1] if axes is None else [normalize_axis(a, rank) for a in axes]
    return _op.permute_dims(x, axes)


@rule("expand_dims")
def expand_dims(x, axis):
    return _op.expand_dims(x, normalize_axis(axis, len(static_shape(x)) + 1))


@rule("squeeze")
def squeeze(x, axis=None):
    shape = static_shape(x)
    if axis is None:
        axes = [i for i, s in enumerate(shape) if s == 1]
    else:
        axes = [normalize_axis(a, len(shape)) for a in ((axis,) if isinstance(axis, int) else axis)]
        for a in axes:
            if shape[a] != 1:
                raise CaptureError(f"squeeze: axis {a} has size {shape[a]}, expected 1")
    return _op.squeeze(x, axes)


@rule("concat")
def concat(*tensors, axis=0):
    return _op.concat(list(tensors), axis=normalize_axis(axis, len(static_shape(tensors[0]))))


@rule("stack")
def stack(*tensors, axis=0):
    axis = normalize_axis(axis, len(static_shape(tensors[0])) + 1)
    return _op.concat([_op.expand_dims(t, axis) for t in tensors], axis=axis)


@rule("broadcast_to")
def broadcast_to(x, shape):
    shape = [int(s) for s in shape]
    src = static_shape(x)
    full = [src[i - (len(shape) - len(src))] if s == -1 else s for i, s in enumerate(shape)]
    return _op.broadcast_to(x, full)


@rule("tile")
def tile(x, multiples):
    return _op.tile(x, [int(m) for m in multiples])


@rule("gather")
def gather(x, indices, axis=0):
    return _op.take(x, indices, axis=normalize_axis(axis, len(static_shape(x))))


@rule("strided_slice")
def strided_slice(x, begin, end, strides):
    """Basic slicing: ``begin``/``end``/``strides`` per axis, already clamped by the caller.

    Built from ``split`` (step 1) and ``take`` (other steps), which are differentiable.
    """
    import numpy as np

    from .common import emit

    shape = static_shape(x)
    out = x
    for axis, (start, stop, step) in enumerate(zip(begin, end, strides)):
        start, stop, step = int(start), int(stop), int(step)
        if (start, stop, step) == (0, shape[axis], 1):
            continue
        if step == 1:
            points = [p for p in (start, stop) if 0 < p < shape[axis]]
            if not points:
                continue
            parts = emit(_op.split(out, points, axis=axis))
            out = emit(relax.TupleGetItem(parts, 1 if start > 0 else 0))
        else:
            indices = relax.const(np.arange(start, stop, step, dtype="int64"))
            out = emit(_op.take(out, indices, axis=axis))
    return out


def _flat_positions(shape, index, axis: int, what: str):
    """The position in ``reshape(x, [-1])`` of every element ``index`` addresses along ``axis``:
    ``index * stride(axis)`` plus a constant offset from the element's other coordinates."""
    import numpy as np

    from .common import emit

    index_shape = static_shape(index)
    if len(index_shape) != len(shape):
        raise CaptureError(f"{what}: index must have the input's rank {len(shape)}, got shape {index_shape}")
    if any(i > s for d, (i, s) in enumerate(zip(index_shape, shape)) if d != axis):
        raise CaptureError(f"{what}: index shape {index_shape} exceeds the input shape {shape} outside axis {axis}")
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1].astype("int64")
    grids = np.meshgrid(*[np.arange(n, dtype="int64") for n in index_shape], indexing="ij")
    offset = sum(grid * strides[d] for d, grid in enumerate(grids) if d != axis)
    offset = np.broadcast_to(np.asarray(offset, "int64"), index_shape)
    return emit(_op.add(_op.multiply(_op.astype(index, "int64"), relax.const(int(strides[axis]), "int64")),
                        relax.const(np.ascontiguousarray(offset), "int64")))


@rule("gather_elements")
def gather_elements(x, index, axis=0):
    """``out[i][j][k] = x[i][index[i][j][k]][k]`` (for axis 1): one ``take`` from the flattened input, so the
    op stays differentiable."""
    from .common import emit

    shape = static_shape(x)
    flat = _flat_positions(shape, index, normalize_axis(axis, len(shape)), "gather_elements")
    # 1-D positions: Relax's take gradient handles only 1-D indices
    picked = emit(_op.take(_op.reshape(x, [-1]), _op.reshape(flat, [-1]), axis=0, mode="clip"))
    return _op.reshape(picked, list(static_shape(index)))


@rule("scatter_elements")
def scatter_elements(x, index, updates, axis=0, reduction="none"):
    """``x`` with ``x[i][index[i][j]] = updates[i][j]`` (axis 1; 'add' accumulates instead): one
    ``scatter_nd`` into the flattened input. Indices are clipped into range."""
    from .common import emit

    shape = static_shape(x)
    if static_shape(updates) != static_shape(index):
        raise CaptureError(f"scatter_elements: updates shape {static_shape(updates)} differs from index shape "
                           f"{static_shape(index)}")
    mode = {"none": "update", "add": "add"}.get(str(reduction))
    if mode is None:
        raise CaptureError(f"scatter_elements: reduction must be 'none' or 'add', got {reduction!r}")
    size = 1
    for n in shape:
        size *= n
    flat = _flat_positions(shape, index, normalize_axis(axis, len(shape)), "scatter_elements")
    flat = emit(_op.clip(flat, 0, size - 1))
    out = emit(_op.scatter_nd(_op.reshape(x, [-1]), _op.reshape(flat, [-1, 1]), _op.reshape(updates, [-1]), mode))
    return _op.reshape(out, list(shape))


@rule("cumsum")
def cumsum(x, axis, dtype=None):
    """Inclusive running sum along ``axis`` (in ``dtype`` when given).

    out[..., j] = sum_i x[..., i] * (i <= j): a masked sum over a lower-triangular constant, since
    Relax's own cumsum is not legalised to a kernel here. Quadratic in the axis length.
    """
    import numpy as np

    from .common import emit

    shape = static_shape(x)
    axis = normalize_axis(axis, len(shape))
    if dtype is not None:
        x = emit(_op.astype(x, dtype))
    from ..capture import dtype_of

    n = shape[axis]
    perm = [d for d in range(len(shape)) if d != axis] + [axis]
    moved = emit(_op.permute_dims(x, perm)) if axis != len(shape) - 1 else x
    mask = relax.const(np.triu(np.ones((n, n))).astype(dtype_of(x)), dtype_of(x))
    summed = emit(_op.sum(_op.multiply(_op.expand_dims(moved, -1), mask), axis=[-2]))
    if axis == len(shape) - 1:
        return summed
    inverse = [perm.index(d) for d in range(len(shape))]
    return _op.permute_dims(summed, inverse)
