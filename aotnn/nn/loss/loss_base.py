"""LossBase: the reduction rules every loss shares."""
from __future__ import annotations

from typing import Any

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell

__all__ = ['LossBase']

_REDUCTIONS = ('mean', 'sum', 'none')


def check_reduction(reduction: Any, cls_name: str) -> str:
    """``reduction`` if it is 'mean', 'sum' or 'none'; ValueError naming the class otherwise."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For '{cls_name}', the 'reduction' must be in ['mean', 'sum', 'none'], "
                         f"but got {reduction!r}.")
    return reduction


class LossBase(Cell):
    """Base class for losses.

    Subclasses compute an unreduced loss in ``construct`` and finish with :meth:`get_loss`,
    which applies the weights and the reduction.

    Args:
        reduction (str): 'mean', 'sum' or 'none'. Default: 'mean'.

    Raises:
        ValueError: ``reduction`` is not one of 'none', 'mean', 'sum'.
    """

    def __init__(self, reduction: str = 'mean'):
        super().__init__()
        self.reduction = check_reduction(reduction, type(self).__name__)
        self.average = reduction != 'sum'
        self.reduce = reduction != 'none'

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    def get_axis(self, x: Tensor) -> tuple[int, ...]:
        """Every axis of ``x``: ``(0, 1, ..., x.ndim - 1)``."""
        return tuple(range(len(x.shape)))

    def get_loss(self, x: Tensor, weights: float | Tensor = 1.0) -> Tensor:
        """The weighted loss, reduced as ``reduction`` says.

        The product and the reduction run in float32 and the result is cast back to ``x``'s dtype,
        as MindSpore does.

        Args:
            x (Tensor): the unreduced loss, shape :math:`(N, *)`.
            weights (Union[float, Tensor]): rank 0 or ``x``'s rank, broadcastable to ``x``. Default: 1.0.

        Returns:
            Tensor, a scalar for 'mean' and 'sum', ``x``'s (broadcast) shape for 'none'.
        """
        input_dtype = x.dtype
        x = ops.cast(x, mstype.float32)
        if isinstance(weights, Tensor):
            x = ops.mul(ops.cast(weights, mstype.float32), x)
        elif float(weights) != 1.0:
            x = ops.mul(x, float(weights))
        if self.reduce and len(x.shape) > 0:
            axis = self.get_axis(x)
            x = ops.reduce_mean(x, axis) if self.average else ops.reduce_sum(x, axis)
        return ops.cast(x, input_dtype)

    def construct(self, logits, labels):
        raise NotImplementedError(f"{self.cls_name} must define construct()")

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"
