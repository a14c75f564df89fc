"""Loss scaling: update cells and the training step that skips updates on gradient overflow."""
from __future__ import annotations

import numpy as np

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.grad_ops import _differentiate
from ..cell import Cell
from .cell_wrapper import TrainOneStepCell

__all__ = ["FixedLossScaleUpdateCell", "DynamicLossScaleUpdateCell", "TrainOneStepWithLossScaleCell"]


class FixedLossScaleUpdateCell(Cell):
    """A loss scale that never changes.

    Args:
        loss_scale_value: the scale (> 0).
    Raises:
        ValueError: non-positive scale.
    """

    def __init__(self, loss_scale_value: float):
        super().__init__()
        if not loss_scale_value > 0:
            raise ValueError(f"loss_scale_value: must be > 0, got {loss_scale_value}")
        self.loss_scale_value = float(loss_scale_value)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        return overflow


class DynamicLossScaleUpdateCell(Cell):
    """Divides the loss scale by ``scale_factor`` on overflow (not below 1); multiplies it by
    ``scale_factor`` after ``scale_window`` steps without overflow (MindSpore's rule).

    Args:
        loss_scale_value: initial scale.
        scale_factor: the factor (> 1).
        scale_window: steps without overflow before the scale grows (> 0).
    Raises:
        ValueError: arguments out of range.
    """

    def __init__(self, loss_scale_value: float, scale_factor: int, scale_window: int):
        super().__init__()
        if not loss_scale_value > 0:
            raise ValueError(f"loss_scale_value: must be > 0, got {loss_scale_value}")
        if not scale_factor > 1:
            raise ValueError(f"scale_factor: must be > 1, got {scale_factor}")
        if not (isinstance(scale_window, int) and scale_window > 0):
            raise ValueError(f"scale_window: must be a positive int, got {scale_window}")
        self.loss_scale_value = float(loss_scale_value)
        self.scale_factor = float(scale_factor)
        self.scale_window = scale_window
        self.cur_iter = Parameter(Tensor(np.array([1], np.int32)), name="current_iterator_step", requires_grad=False)
        self.last_overflow_iter = Parameter(Tensor(np.array([0], np.int32)), name="last_overflow_iterator_step",
                                            requires_grad=False)

    def get_loss_scale(self) -> float:
        return self.loss_scale_value

    def construct(self, loss_scale, overflow):
        on_overflow = ops.select(overflow, ops.maximum(loss_scale / self.scale_factor, 1.0), loss_scale)
        should_grow = (self.cur_iter - self.last_overflow_iter) >= self.scale_window
        reset = ops.logical_or(overflow, should_grow)
        ops.assign(self.last_overflow_iter, ops.select(reset, self.cur_iter, self.last_overflow_iter))
        grow = ops.logical_and(should_grow, ops.logical_not(overflow))
        ops.assign(loss_scale, ops.select(grow, on_overflow * self.scale_factor, on_overflow))
        ops.assign(self.cur_iter, self.cur_iter + 1)
        return overflow


class TrainOneStepWithLossScaleCell(TrainOneStepCell):
    """A training step with loss scaling: gradients of ``loss * scale`` are divided by the scale;
    if any is inf or nan the optimizer's updates are skipped (in the same compiled graph).

    Args:
        network: a Cell returning the loss.
        optimizer: the optimizer Cell.
        scale_sense: a loss-scale update Cell (Fixed/DynamicLossScaleUpdateCell) or a Tensor.
    Returns:
        ``(loss, overflow, loss_scale)`` from calling the cell.
    """

    def __init__(self, network: Cell, optimizer: Cell, scale_sense):
        super().__init__(network, optimizer, sens=1.0)
        if isinstance(scale_sense, Cell):
            self.loss_scaling_manager = scale_sense
            value = scale_sense.get_loss_scale()
        elif isinstance(scale_sense, Tensor):
            self.loss_scaling_manager = None
            value = float(scale_sense.asnumpy().reshape(-1)[0])
        else:
            raise TypeError(f"scale_sense: expected a Cell or a Tensor, got {type(scale_sense).__name__}")
        self.scale_sense = Parameter(Tensor(np.array([value], np.float32)), name="scale_sense", requires_grad=False)

    def set_sense_scale(self, sens) -> None:
        self.scale_sense.set_data(np.asarray(sens.asnumpy() if isinstance(sens, Tensor) else sens,
                                             np.float32).reshape(1))

    # construct is TrainOneStepCell's: _loss_and_grads, grad_reducer, _apply_update.
    def _loss_and_grads(self, *inputs):
        scale = ops.reshape(self.scale_sense, ())
        outputs, _, grads = _differentiate(self.network, inputs, [], self.weights, scale)
        return tuple(outputs[:1]), tuple(g / scale for g in grads)

    def _apply_update(self, outputs, grads):
        loss = outputs[0]
        overflow = ops.any_non_finite(*grads)
        if self.loss_scaling_manager is not None:
            self.loss_scaling_manager(self.scale_sense, overflow)
        before = ops.updates_recorded()
        self.optimizer(grads)
        ops.guard_updates_since(before, overflow)
        return loss, overflow, self.scale_sense
