"""Small wrapper cells: ParameterUpdate and GetNextSingleOp."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ["ParameterUpdate", "GetNextSingleOp"]


class ParameterUpdate(Cell):
    """Sets ``param`` to its input when called (MindSpore's ParameterUpdate).

    Args:
        param: the Parameter to update.
    Raises:
        TypeError: ``param`` is not a Parameter.
    """

    def __init__(self, param: Parameter):
        super().__init__(auto_prefix=False)
        if not isinstance(param, Parameter):
            raise TypeError(f"param: expected a Parameter, got {type(param).__name__}")
        self._param = param

    def construct(self, x):
        ops.assign(self._param, x)
        return x


class GetNextSingleOp(Cell):
    """Returns the next item of a named host data queue.

    MindSpore reads a device data queue; here the queue is a Python iterable registered with
    :meth:`feed` under ``queue_name`` (data arrives from the host in both cases). The call runs
    on the host, so it cannot appear inside a compiled ``construct``.

    Args:
        dataset_types: the dtypes of one item's tensors.
        dataset_shapes: their shapes.
        queue_name: the queue's name.
    """

    _queues: dict[str, Any] = {}

    def __init__(self, dataset_types, dataset_shapes, queue_name: str):
        super().__init__()
        if len(dataset_types) != len(dataset_shapes):
            raise ValueError(f"dataset_types and dataset_shapes: lengths differ "
                             f"({len(dataset_types)} vs {len(dataset_shapes)})")
        self.dataset_types, self.dataset_shapes = list(dataset_types), [tuple(s) for s in dataset_shapes]
        self.queue_name = queue_name

    @classmethod
    def feed(cls, queue_name: str, items: Iterable) -> None:
        """Register ``items`` (an iterable of tuples of arrays) as the queue ``queue_name``."""
        cls._queues[queue_name] = iter(items)

    def __call__(self, *args):
        import relay_frontend
        if relay_frontend.current() is not None:
            raise relay_frontend.CaptureError("GetNextSingleOp reads host data and cannot be compiled into a graph; "
                                              "call it outside construct and pass its outputs in")
        if self.queue_name not in self._queues:
            raise RuntimeError(f"queue_name: no data queue {self.queue_name!r}; register one with GetNextSingleOp.feed")
        try:
            item = next(self._queues[self.queue_name])
        except StopIteration:
            raise RuntimeError(f"queue {self.queue_name!r} is exhausted") from None
        tensors = tuple(Tensor(x).astype(t) for x, t in zip(item, self.dataset_types))
        for tensor, shape in zip(tensors, self.dataset_shapes):
            if tensor.shape != shape:
                raise ValueError(f"queue {self.queue_name!r}: expected shape {shape}, got {tensor.shape}")
        return tensors
