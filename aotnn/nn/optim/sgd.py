"""SGD: stochastic gradient descent with optional momentum, dampening and Nesterov (MindSpore's ``nn.SGD``)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer, _state

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Implements stochastic gradient descent; momentum is optional.

    .. math::
        v_{t+1} = u \ast v_{t} + gradient \ast (1-dampening)

    If nesterov is True: :math:`p_{t+1} = p_{t} - lr \ast (gradient + u \ast v_{t+1})`, else
    :math:`p_{t+1} = p_{t} - lr \ast v_{t+1}`. On the first step :math:`v_{t+1} = gradient`. Without momentum
    (:math:`u = 0`) the step is :math:`p_{t+1} = p_{t} - lr \ast gradient`. The weight decay is added to the
    gradient of every parameter (no 'beta'/'gamma' filter). State: ``accum.<name>`` (zeros) and
    ``stat.<name>`` (ones until the first momentum step), ``momentum``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.1.
        momentum (float): at least 0.0. Default: 0.0.
        dampening (float): at least 0.0. Default: 0.0.
        weight_decay (Union[float, int]): at least 0.0. Default: 0.0.
        nesterov (bool): Nesterov momentum; needs momentum > 0 and dampening 0. Default: False.
        loss_scale (float): greater than 0. Default: 1.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `momentum` or `dampening` not a float; `nesterov` not a bool; a dynamic weight decay.
        ValueError: `momentum`, `dampening` or `weight_decay` less than 0.0; nesterov with momentum <= 0 or
            dampening != 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any = 0.1, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: Any = 0.0, nesterov: bool = False, loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        if isinstance(momentum, int) and not isinstance(momentum, bool):
            momentum = float(momentum)
        validator.check_value_type("momentum", momentum, [float], self.cls_name)
        if momentum < 0.0:
            raise ValueError(f"For 'SGD', the argument 'momentum' must be at least 0.0, but got {momentum}.")
        if isinstance(dampening, int) and not isinstance(dampening, bool):
            dampening = float(dampening)
        validator.check_value_type("dampening", dampening, [float], self.cls_name)
        if dampening < 0.0:
            raise ValueError(f"For 'SGD', the argument 'dampening' must be at least 0.0, but got 'dampening' "
                             f"{dampening}")
        self.dampening = dampening
        validator.check_value_type("nesterov", nesterov, [bool], self.cls_name)
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError(f"For 'SGD', if 'nesterov' is true, 'momentum' must be > 0.0 and 'dampening' must equal "
                             f"to 0.0, but got 'momentum' {momentum}, 'dampening' {dampening}")
        self.nesterov = nesterov
        if self.dynamic_weight_decay:
            raise TypeError("For 'SGD', dynamic weight decay is currently not supported, the argument 'weight_decay' "
                            "or 'weight_decay' set in grouped 'params' must be float or int type.")
        # MindSpore's SGD kernel takes the raw weight decay ungrouped, the loss-scaled one per group.
        if self.is_group:
            self._decays = tuple(float(wd) for wd in self.group_weight_decay)
        else:
            self._decays = (float(weight_decay),) * self.param_length
        self.momentum = _state(momentum, "momentum")
        self.accum = self._clone_state("accum", "zeros")
        self.stat = self._clone_state("stat", "ones")

    def construct(self, gradients):
        gradients, lr = self._prepare_step(gradients, decay=False)
        has_momentum = self.momentum > 0.0
        for index, (param, accum, stat, grad) in enumerate(zip(self._parameters, self.accum, self.stat, gradients)):
            lr_i = self._lr_at(lr, index)
            if self._decays[index] > 0.0:
                grad = grad + param * self._decays[index]
            first = stat > 0.0
            new_accum = ops.select(first, grad, accum * self.momentum + (1.0 - self.dampening) * grad)
            step = grad + new_accum * self.momentum if self.nesterov else new_accum
            ops.assign(param, param - lr_i * ops.select(has_momentum, step, grad))
            ops.assign(accum, ops.select(has_momentum, new_accum, accum))
            ops.assign(stat, ops.select(has_momentum, ops.zeros_like(stat), stat))
        return True
