"""Gradient accumulation (``mindspore.boost.grad_accumulation``): sum ``grad / steps`` over ``steps`` calls,
then run the optimizer on the sum and clear it."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..common.parameter import Parameter
from ..nn.cell import Cell

__all__ = ["GradientAccumulation", "gradient_accumulation_op", "gradient_clear_op"]

gradient_accumulation_op = ops.MultitypeFuncGraph("gradient_accumulation_op")


@gradient_accumulation_op.register("Int", "Tensor", "Tensor")
def _cumulative_grad_process(accumulation_step, cumulative_grad, grad):
    """cumulative_grad += grad / accumulation_step."""
    ops.assign(cumulative_grad, cumulative_grad + grad / accumulation_step)
    return cumulative_grad


gradient_clear_op = ops.MultitypeFuncGraph("gradient_clear_op")


@gradient_clear_op.register("Tensor")
def _clear_grad(cumulative_grad):
    """cumulative_grad = 0."""
    return ops.assign(cumulative_grad, ops.zeros_like(cumulative_grad))


class GradientAccumulation(Cell):
    """Call with ``(loss, grads)`` every step; every ``max_accumulation_step``-th call runs ``optimizer`` on
    the mean of the gradients since the last update. Runs op by op (the step counter is host state).

    Args:
        max_accumulation_step (int): steps per update (>= 1).
        optimizer (Cell): the optimizer; its ``parameters`` get accumulators.
    Returns:
        the loss, unchanged.
    Raises:
        ValueError: ``max_accumulation_step`` is not an int >= 1.
    """

    _eager_only = True

    def __init__(self, max_accumulation_step: int, optimizer: Cell):
        super().__init__()
        if not isinstance(max_accumulation_step, int) or max_accumulation_step < 1:
            raise ValueError(f"GradientAccumulation: max_accumulation_step must be an int >= 1, got "
                             f"{max_accumulation_step!r}")
        self._max_accumulation_step = max_accumulation_step
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self._grad_accumulation = self.weights.clone(prefix="grad_accumulation", init="zeros")
        self._accumulation_step = Parameter(np.array(0, np.int32), name="accumulation_step", requires_grad=False)

    def __call__(self, loss: Any, grads: tuple) -> Any:
        return self.construct(loss, grads)

    def construct(self, loss, grads):
        for accumulator, grad in zip(self._grad_accumulation, grads):
            gradient_accumulation_op(self._max_accumulation_step, accumulator, grad)
        step = int(self._accumulation_step.asnumpy()) + 1
        if step >= self._max_accumulation_step:
            self.optimizer(tuple(self._grad_accumulation))
            step = 0
            for accumulator in self._grad_accumulation:
                gradient_clear_op(accumulator)
        self._accumulation_step.set_data(np.array(step, np.int32))
        return loss
