"""RMSProp, plain and centered (MindSpore's ``nn.RMSProp``, the ApplyRMSProp/ApplyCenteredRMSProp rules)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer

__all__ = ["RMSProp"]


class RMSProp(Optimizer):
    r"""Implements the Root Mean Squared Propagation (RMSProp) algorithm.

    .. math::
        \begin{array}{ll}
            s_{t+1} = \rho s_{t} + (1 - \rho)(\nabla Q_{i}(w))^2 \\
            m_{t+1} = \beta m_{t} + \frac{\eta} {\sqrt{s_{t+1} + \epsilon}} \nabla Q_{i}(w) \\
            w = w - m_{t+1}
        \end{array}

    Centered: :math:`g_{t+1} = \rho g_{t} + (1 - \rho)\nabla Q_{i}(w)` and the denominator is
    :math:`\sqrt{s_{t+1} - g_{t+1}^2 + \epsilon}`. State: ``mean_square.<name>`` (starting at ones),
    ``moment.<name>`` and, centered, ``mean_grad.<name>`` (zeros); ``global_step`` advances on every call.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.1.
        decay (float): decay rate :math:`\rho`, at least 0. Default: 0.9.
        momentum (float): momentum :math:`\beta`, at least 0. Default: 0.0.
        epsilon (float): greater than 0. Default: 1e-10.
        use_locking (bool): accepted for compatibility. Default: False.
        centered (bool): normalize by the estimated variance of the gradient. Default: False.
        loss_scale (float): greater than 0. Default: 1.0.
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `decay`, `momentum`, `epsilon` or `loss_scale` not a float; `use_locking` or `centered` not a
            bool.
        ValueError: `epsilon` <= 0; `decay` or `momentum` less than 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any = 0.1, decay: float = 0.9, momentum: float = 0.0,
                 epsilon: float = 1e-10, use_locking: bool = False, centered: bool = False, loss_scale: float = 1.0,
                 weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        validator.check_non_negative_float(decay, "decay", self.cls_name)
        validator.check_non_negative_float(momentum, "momentum", self.cls_name)
        validator.check_positive_float(epsilon, "epsilon", self.cls_name)
        validator.check_value_type("use_locking", use_locking, [bool], self.cls_name)
        validator.check_value_type("centered", centered, [bool], self.cls_name)
        self.centered = centered
        if centered:
            self.mg = self._clone_state("mean_grad", "zeros")
        self.momentum = momentum
        self.ms = self._clone_state("mean_square", "ones")
        self.moment = self._clone_state("moment", "zeros")
        self.epsilon = epsilon
        self.decay = decay

    def construct(self, gradients):
        gradients, lr = self._prepare_step(gradients)
        for index, (param, ms, mom, grad) in enumerate(zip(self._parameters, self.ms, self.moment, gradients)):
            new_ms = ms * self.decay + grad * grad * (1.0 - self.decay)
            if self.centered:
                mg = self.mg[index]
                new_mg = mg * self.decay + grad * (1.0 - self.decay)
                ops.assign(mg, new_mg)
                denom = ops.sqrt(new_ms - new_mg * new_mg + self.epsilon)
            else:
                denom = ops.sqrt(new_ms + self.epsilon)
            new_mom = mom * self.momentum + self._lr_at(lr, index) * grad / denom
            ops.assign(ms, new_ms)
            ops.assign(mom, new_mom)
            ops.assign(param, param - new_mom)
        return True
