"""Rprop, resilient backpropagation (MindSpore's ``nn.Rprop``)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Implements Resilient backpropagation.

    .. math::
        \begin{array}{ll}
            \text{if } g_{t-1} g_t > 0: & \Delta_t = \min(\Delta_{t-1} \eta_{+}, \Delta_{max}) \\
            \text{else if } g_{t-1} g_t < 0: & \Delta_t = \max(\Delta_{t-1} \eta_{-}, \Delta_{min}) \\
            \text{else}: & \Delta_t = \Delta_{t-1} \\
            w_{t} = w_{t-1} - \Delta_{t} \mathrm{sign}(g_t)
        \end{array}

    After a sign change the gradient counts as 0 (no step, and it is the next step's :math:`g_{t-1}`). The step
    sizes start at the learning rate on the first step. State: ``prev.<name>``, ``step_size.<name>``;
    ``global_step`` advances on every call.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.1.
        etas (tuple[float, float]): (etaminus, etaplus). Default: (0.5, 1.2).
        step_sizes (tuple[float, float]): (minimal, maximal) step size. Default: (1e-6, 50.).
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `etas` or `step_sizes` not a tuple; an element of them not a float.
        ValueError: `etas` or `step_sizes` not of length 2; maximal step size below the minimal one;
            etaminus outside (0, 1) or etaplus not greater than 1; `weight_decay` < 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any = 0.1, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50.), weight_decay: Any = 0.):
        super().__init__(learning_rate, params, weight_decay)
        if not isinstance(etas, tuple):
            raise TypeError(f"For Rprop, etas must be a tuple, but got {type(etas).__name__}.")
        if len(etas) != 2:
            raise ValueError(f"For Rprop, etas must be a tuple with the size of 2, but got {len(etas)}.")
        if not isinstance(step_sizes, tuple):
            raise TypeError(f"For Rprop, step_sizes must be a tuple, but got {type(step_sizes).__name__}.")
        if len(step_sizes) != 2:
            raise ValueError(f"For Rprop, step_sizes must be a tuple with the size of 2, but got {len(step_sizes)}.")
        validator.check_value_type("min_step_sizes", step_sizes[0], [float], self.cls_name)
        validator.check_value_type("max_step_sizes", step_sizes[1], [float], self.cls_name)
        if step_sizes[0] > step_sizes[1]:
            raise ValueError(f"For Rprop, maximal step size should not be less than minimal step size, "
                             f"but got {step_sizes[0]} > {step_sizes[1]}.")
        validator.check_float_range(etas[0], 0.0, 1.0, "etaminus", self.cls_name)
        validator.check_value_type("etaplus", etas[1], [float], self.cls_name)
        if etas[1] <= 1.0:
            raise ValueError(f"For Rprop, etaplus must be greater than 1.0, but got etaplus {etas[1]}.")
        self.etaminus, self.etaplus = etas
        self.step_size_min, self.step_size_max = step_sizes
        self.prev = self._clone_state("prev", "zeros")
        self.step_size = self._clone_state("step_size", "zeros")

    def construct(self, gradients):
        first_step = ops.reshape(self.global_step == 0, ())  # global_step becomes 1 on the first call
        gradients, lrs = self._prepare_step(gradients)
        for index, (grad, param, prev, step_size) in enumerate(zip(gradients, self._parameters, self.prev,
                                                                   self.step_size)):
            lr = self._lr_at(lrs, index)
            step_size = ops.select(first_step, ops.ones_like(step_size) * lr, step_size)
            sign = ops.sign(grad * prev)
            ones = ops.ones_like(grad)
            factor = ops.select(sign > 0, ones * self.etaplus, ops.select(sign < 0, ones * self.etaminus, ones))
            new_step = ops.clip_by_value(step_size * factor, self.step_size_min, self.step_size_max)
            new_grad = ops.select(sign < 0, ops.zeros_like(grad), grad)
            ops.assign(param, param - ops.sign(new_grad) * new_step)
            ops.assign(prev, new_grad)
            ops.assign(self.step_size[index], new_step)
        return True
