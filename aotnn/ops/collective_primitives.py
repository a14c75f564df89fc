"""Collective primitives: ``ops.AllReduce`` and ``ops.Broadcast`` over ``aotnn.communication`` groups."""
from __future__ import annotations

from ..common.tensor import Tensor
from .composite_ops import ReduceOp
from .primitives import Primitive

__all__ = ['AllReduce', 'Broadcast']


def _world_of_one(group: str) -> bool:
    from ..communication.management import GlobalComm, get_group_size
    return not GlobalComm.INITED or get_group_size(group) == 1


class AllReduce(Primitive):
    """``ops.AllReduce(op=ReduceOp.SUM, group=...)(x)``: ``x`` reduced over the ranks of ``group``.

    In a world of one it is ``x`` itself; across processes only eager SUM is supported (the collective runs
    on the host between compiled steps, see ``aotnn.communication``).
    """

    def __init__(self, op: str = ReduceOp.SUM, group: str = "hccl_world_group"):
        super().__init__()
        if op not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD):
            raise ValueError(f"AllReduce: op must be a ReduceOp (sum/max/min/prod), got {op!r}")
        self.op, self.group = op, group

    def __call__(self, x):
        from ..communication._collective import allreduce_sum_

        if not isinstance(x, Tensor):
            raise TypeError(f"AllReduce: x must be a Tensor, got {type(x).__name__}")
        if _world_of_one(self.group):
            return x
        if x.is_symbolic or self.op != ReduceOp.SUM:
            raise NotImplementedError("AllReduce: across processes only an eager 'sum' is supported")
        data = x.asnumpy().copy()
        allreduce_sum_([data], self.group)
        return Tensor._from_numpy(data)


class Broadcast(Primitive):
    """``ops.Broadcast(root_rank, group=...)(input_x)``: every rank gets ``root_rank``'s tensors.

    ``input_x`` is a tuple of Tensors; the result is a tuple of the same shapes. In a world of one it is the
    input itself; across processes only eagerly (on the host between compiled steps).
    """

    def __init__(self, root_rank: int, group: str = "hccl_world_group"):
        super().__init__()
        if isinstance(root_rank, bool) or not isinstance(root_rank, int) or root_rank < 0:
            raise ValueError(f"Broadcast: root_rank must be a non-negative int, got {root_rank!r}")
        self.root_rank, self.group = root_rank, group

    def __call__(self, input_x):
        from ..communication._collective import broadcast_

        tensors = tuple(input_x) if isinstance(input_x, (tuple, list)) else (input_x,)
        if not all(isinstance(t, Tensor) for t in tensors):
            raise TypeError("Broadcast: input_x must be a Tensor or a tuple of Tensors")
        if _world_of_one(self.group):
            return tuple(tensors)
        if any(t.is_symbolic for t in tensors):
            raise NotImplementedError("Broadcast: across processes only eager calls are supported")
        arrays = [t.asnumpy().copy() for t in tensors]
        broadcast_(arrays, self.group, self.root_rank)
        return tuple(Tensor._from_numpy(a) for a in arrays)
