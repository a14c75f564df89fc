"""AdaMax (MindSpore's ``nn.AdaMax``, the ApplyAdaMax rule): Adam with the infinity norm."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer, _state

__all__ = ["AdaMax"]


class AdaMax(Optimizer):
    r"""Implements the AdaMax algorithm, Adam based on the infinity norm.

    .. math::
        \begin{array}{ll}
            m_{t+1} = \beta_1 * m_{t} + (1 - \beta_1) * g \\
            v_{t+1} = \max(\beta_2 * v_{t}, \left| g \right|) \\
            w = w - \frac{l}{1 - \beta_1^{t+1}} * \frac{m_{t+1}}{v_{t+1} + \epsilon}
        \end{array}

    State: ``moment1.<name>`` (m), ``moment2.<name>`` (v), both starting at 0, and ``beta1_power`` (shape (1,),
    starting at 1 and multiplied by :math:`\beta_1` before each step).

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.001.
        beta1 (float): in (0.0, 1.0). Default: 0.9.
        beta2 (float): in (0.0, 1.0). Default: 0.999.
        eps (float): greater than 0. Default: 1e-08.
        weight_decay (Union[float, int, Cell]): Default: 0.0.
        loss_scale (float): greater than 0. Default: 1.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `beta1`, `beta2`, `eps` or `loss_scale` not a float; `weight_decay` neither float nor int.
        ValueError: `beta1` or `beta2` outside (0.0, 1.0); `eps` or `loss_scale` <= 0; `weight_decay` < 0.
    """

    def __init__(self, params: Any, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-08, weight_decay: Any = 0.0, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        for name, value in (("beta1", beta1), ("beta2", beta2), ("eps", eps)):
            validator.check_value_type(name, value, [float], self.cls_name)
        validator.check_float_range(beta1, 0.0, 1.0, "beta1", self.cls_name)
        validator.check_float_range(beta2, 0.0, 1.0, "beta2", self.cls_name)
        validator.check_positive_float(eps, "eps", self.cls_name)
        self.beta1, self.beta2, self.eps = beta1, beta2, eps
        self.beta1_power = _state(np.ones(1, np.float32), "beta1_power")
        self.moment1 = self._clone_state("moment1", "zeros")
        self.moment2 = self._clone_state("moment2", "zeros")

    def construct(self, gradients):
        gradients, lr = self._prepare_step(gradients)
        beta1_power = self.beta1_power * self.beta1
        ops.assign(self.beta1_power, beta1_power)
        for index, (param, m, v, grad) in enumerate(zip(self._parameters, self.moment1, self.moment2, gradients)):
            new_m = m * self.beta1 + grad * (1.0 - self.beta1)
            new_v = ops.maximum(v * self.beta2, ops.abs(grad))
            step = self._lr_at(lr, index) / (1.0 - beta1_power)
            ops.assign(param, param - step * new_m / (new_v + self.eps))
            ops.assign(m, new_m)
            ops.assign(v, new_v)
        return True
