"""TimeDistributed: applies a layer to every time step of a sequence."""
from __future__ import annotations

__all__ = ['TimeDistributed']

from ... import ops
from ...common.tensor import Tensor
from ...ops.primitives import Primitive
from ..cell import Cell


def _check_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"TimeDistributed: {name} must be an int, got {type(value).__name__}")
    return value


class TimeDistributed(Cell):
    """Applies ``layer`` to every temporal slice of the input.

    With ``reshape_with_axis`` the time axis is merged with that axis, the layer runs once on the
    merged batch, and the result is split again (the time axis then sits next to
    ``reshape_with_axis``); the layer must keep the merged axis' length. Without it, the input is
    split along the time axis, the layer runs on each slice and the results are stacked back at
    ``time_axis`` (needed for layers whose result depends on the batch, like BatchNorm in training).

    Args:
        layer (Union[Cell, Primitive]): the layer to wrap.
        time_axis (int): the axis of the time steps.
        reshape_with_axis (int): the axis merged with the time axis. Default: None.

    Inputs:
        - **x** (Tensor) - (N, T, *), at least 3-D.
    Outputs:
        Tensor (N, T, *) with the layer's trailing dimensions.
    Raises:
        TypeError: layer not a Cell or Primitive; time_axis or reshape_with_axis not an int; x or the
            layer's output not a Tensor.
        ValueError: x below 3-D; the layer changes the merged axis (reshape mode); time_axis out of
            the output's range (split mode).
    """

    def __init__(self, layer, time_axis, reshape_with_axis=None):
        super().__init__()
        if not isinstance(layer, (Cell, Primitive)):
            raise TypeError(f"TimeDistributed: layer must be a Cell or a Primitive, got {type(layer).__name__}")
        self.layer = layer
        self.time_axis = _check_int(time_axis, "time_axis")
        self.reshape_with_axis = None if reshape_with_axis is None else _check_int(reshape_with_axis,
                                                                                   "reshape_with_axis")

    def construct(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"TimeDistributed: x must be a Tensor, got {type(x).__name__}")
        if x.ndim < 3:
            raise ValueError(f"TimeDistributed: x must be at least 3-D, got shape {x.shape}")
        time_axis = self.time_axis % x.ndim
        if self.reshape_with_axis is not None:
            return self._merged(x, time_axis, self.reshape_with_axis % x.ndim)
        return self._split(x, time_axis)

    def _merged(self, x, time_axis: int, other: int):
        rank = x.ndim
        # move the time axis next to ``other`` (after it, unless ``other`` is the last axis)
        if other == rank - 1:
            target = rank - 2
        else:
            target = other + 1 if time_axis > other else other - 1
        first = min(target, other)
        perm = list(range(rank))
        perm.remove(time_axis)
        perm.insert(target, time_axis)
        moved = ops.transpose(x, tuple(perm)) if perm != list(range(rank)) else x
        shape = moved.shape
        merged = ops.reshape(moved, shape[:first] + (-1,) + shape[first + 2:])
        out = self.layer(merged)
        if not isinstance(out, Tensor):
            raise TypeError(f"TimeDistributed: the layer must return a Tensor, got {type(out).__name__}")
        if first >= out.ndim or out.shape[first] != merged.shape[first]:
            raise ValueError(f"TimeDistributed: the layer changed axis {first} (merged with the time axis): "
                             f"{merged.shape} -> {out.shape}; try without reshape_with_axis")
        return ops.reshape(out, out.shape[:first] + shape[first:first + 2] + out.shape[first + 1:])

    def _split(self, x, time_axis: int):
        lead = (slice(None),) * time_axis
        outputs = []
        for step in range(x.shape[time_axis]):
            out = self.layer(x[lead + (step,)])
            if not isinstance(out, Tensor):
                raise TypeError(f"TimeDistributed: the layer must return a Tensor, got {type(out).__name__}")
            if time_axis > out.ndim:
                raise ValueError(f"TimeDistributed: time_axis {time_axis} is out of the range [0, {out.ndim}] "
                                 f"of the layer's {out.ndim}-D output")
            outputs.append(out)
        return ops.stack(outputs, time_axis)

    def extend_repr(self) -> str:
        return f"time_axis={self.time_axis}, reshape_with_axis={self.reshape_with_axis}"
