"""DistributedGradReducer: all-reduce of the gradients over the data-parallel group (MPI on the host)."""
from __future__ import annotations

from typing import Any

import numpy as np

import relay_frontend

from ...common.tensor import Tensor
from ...communication import _collective
from ...communication.management import GlobalComm, get_group_size
from ..cell import Cell

__all__ = ["DistributedGradReducer"]


class DistributedGradReducer(Cell):
    """Sums the gradients over the processes of `group` and, when `mean`, divides them by `degree`.

    The reduction runs on the host over MPI, all gradients of one dtype fused into one contiguous buffer
    (one ``Allreduce`` per dtype). A compiled graph cannot pause for it, so ``TrainOneStepCell`` splits
    its step when the group has more than one process: (1) forward, loss and gradients as one graph;
    (2) this reduction; (3) the optimizer's update as a second graph. Another cell holding the reducer
    (a custom training cell) then runs its ``construct`` op by op. In a group of one process the
    reduction is the identity and stays inside the compiled graph.

    Args:
        parameters (list): the parameters whose gradients are reduced (MindSpore uses it for fusion
            groups; the order of the gradients follows it).
        mean (bool): divide the sum by `degree`. Default: True.
        degree (int): the divisor; None means the group's size. Default: None.
        fusion_type (int): MindSpore's fusion group; every gradient of a dtype is fused here. Default: 1.
        group (str): the communication group. Default: the world group.

    Inputs:
        - **grads** (tuple[Tensor]) - the gradients, in the order of `parameters`.

    Outputs:
        tuple[Tensor], the reduced gradients.

    Raises:
        TypeError: `mean` is not a bool.
        ValueError: `degree` is not a positive int.
        RuntimeError: ``communication.init()`` was not called (needed when `degree` is None).
    """

    def __init__(self, parameters: Any, mean: bool = True, degree: int | None = None, fusion_type: int = 1,
                 group: str = GlobalComm.WORLD_COMM_GROUP):
        super().__init__(auto_prefix=False)
        if not isinstance(mean, bool):
            raise TypeError(f"mean: expected a bool, got {type(mean).__name__}")
        if degree is None:
            degree = get_group_size(group)
        if not isinstance(degree, int) or isinstance(degree, bool) or degree <= 0:
            raise ValueError(f"degree: expected a positive int, got {degree!r}")
        if not isinstance(fusion_type, int):
            raise TypeError(f"fusion_type: expected an int, got {type(fusion_type).__name__}")
        self.map_ = None
        self.mean = mean
        self.degree = degree
        self.fusion_type = fusion_type
        self.group = group
        self._num_parameters = len(list(parameters))

    @property
    def group_size(self) -> int:
        """The number of processes the gradients are summed over (1 before ``communication.init``)."""
        return get_group_size(self.group) if GlobalComm.INITED else 1

    @property
    def _eager_only(self) -> bool:
        # Several processes: a cell containing this reducer runs op by op, the reduction on the host.
        return self.group_size > 1

    def __call__(self, grads):
        if relay_frontend.current() is not None:
            return self.construct(grads)
        return self._reduce_on_host(tuple(grads))

    def construct(self, grads):
        if self.group_size > 1:
            raise relay_frontend.CaptureError(
                "DistributedGradReducer: gradients of several processes cannot be reduced inside a compiled "
                "graph; use TrainOneStepCell (it runs the reduction between its compiled parts) or call the "
                "reducer on concrete gradients")
        if not self.mean or self.degree == 1:
            return tuple(grads)
        return tuple(g * (1.0 / self.degree) for g in grads)

    def _reduce_on_host(self, grads: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        arrays = [np.ascontiguousarray(g.asnumpy()).copy() for g in grads]
        _collective.allreduce_sum_(arrays, self.group)
        if self.mean:
            arrays = [(a * np.asarray(1.0 / self.degree, a.dtype)).astype(a.dtype, copy=False) for a in arrays]
        return tuple(Tensor._from_numpy(a) for a in arrays)

    def extend_repr(self) -> str:
        return f"mean={self.mean}, degree={self.degree}, group={self.group}"
