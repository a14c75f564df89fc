"""Momentum: SGD with a momentum accumulator (MindSpore's ``nn.Momentum``, the ApplyMomentum rule)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer, _state

__all__ = ["Momentum"]


class Momentum(Optimizer):
    r"""Implements the Momentum algorithm.

    .. math::
        v_{t+1} = v_{t} \ast u + grad

    If use_nesterov is True: :math:`p_{t+1} = p_{t} - (grad \ast lr + v_{t+1} \ast u \ast lr)`,
    else :math:`p_{t+1} = p_{t} - lr \ast v_{t+1}`; :math:`u` is `momentum`, :math:`v` the state ``moments``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): the learning rate.
        momentum (float): the momentum, at least 0.0.
        weight_decay (Union[float, int, Cell]): weight decay. Default: 0.0.
        loss_scale (float): loss scale, greater than 0. Default: 1.0.
        use_nesterov (bool): use Nesterov momentum. Default: False.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`, in their order and shapes.

    Outputs:
        True; the parameters and ``moments.<name>`` are updated in place.

    Raises:
        TypeError: `momentum` or `loss_scale` not a float; `use_nesterov` not a bool; see :class:`Optimizer`.
        ValueError: `momentum` or `weight_decay` less than 0; `loss_scale` <= 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any, momentum: float, weight_decay: Any = 0.0,
                 loss_scale: float = 1.0, use_nesterov: bool = False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        validator.check_value_type("momentum", momentum, [float], self.cls_name)
        if momentum < 0.0:
            raise ValueError(f"For 'Momentum', the argument 'momentum' must be at least 0.0, but got {momentum}")
        self.momentum = _state(momentum, "momentum")
        self.params = self._parameters
        self.use_nesterov = validator.check_bool(use_nesterov, "use_nesterov", self.cls_name)
        self.moments = self._clone_state("moments", "zeros")

    def construct(self, gradients):
        gradients, lr = self._prepare_step(gradients)
        for index, (param, moment, grad) in enumerate(zip(self._parameters, self.moments, gradients)):
            apply_momentum(param, moment, grad, self._lr_at(lr, index), self.momentum, self.use_nesterov)
        return True


def apply_momentum(param, moment, grad, lr, momentum, use_nesterov: bool) -> None:
    """MindSpore's ApplyMomentum: ``moment = momentum * moment + grad``, then ``param -= lr * moment``
    (Nesterov: ``param -= lr * (grad + momentum * moment)``); both written back with ``ops.assign``."""
    new_moment = moment * momentum + grad
    if use_nesterov:
        new_param = param - (grad * lr + new_moment * momentum * lr)
    else:
        new_param = param - lr * new_moment
    ops.assign(moment, new_moment)
    ops.assign(param, new_param)
