"""FTRL, follow-the-regularized-leader (MindSpore's ``nn.FTRL``, the ApplyFtrl rule)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer

__all__ = ["FTRL"]


def _check_param(initial_accum: Any, learning_rate: Any, lr_power: Any, l1: Any, l2: Any, use_locking: Any,
                 cls: str) -> None:
    validator.check_value_type("initial_accum", initial_accum, [float], cls)
    validator.check_number(initial_accum, 0.0, "initial_accum", cls, greater=True)
    validator.check_positive_float(learning_rate, "learning_rate", cls)
    validator.check_value_type("lr_power", lr_power, [float], cls)
    validator.check_number(lr_power, 0.0, "lr_power", cls, greater=False)
    validator.check_value_type("l1", l1, [float], cls)
    validator.check_number(l1, 0.0, "l1", cls, greater=True)
    validator.check_value_type("l2", l2, [float], cls)
    validator.check_number(l2, 0.0, "l2", cls, greater=True)
    validator.check_value_type("use_locking", use_locking, [bool], cls)


class FTRL(Optimizer):
    r"""Implements the FTRL algorithm.

    .. math::
        \begin{array}{ll}
            m_{t+1} = m_{t} + g^2 \\
            u_{t+1} = u_{t} + g - \frac{m_{t+1}^{-p} - m_{t}^{-p}}{\alpha} * \omega_{t} \\
            \omega_{t+1} = \begin{cases}
                \frac{l1 - u_{t+1}}{\frac{m_{t+1}^{-p}}{\alpha} + 2 * l2} & |u_{t+1}| > l1 \\
                0.0 & \text{otherwise}
            \end{cases}
        \end{array}

    The shrinkage term is :math:`l1`, not :math:`sign(u_{t+1}) * l1` as MindSpore's docstring writes: MindSpore
    2.10's ApplyFtrl kernel computes this, so an :math:`l1 > 0` run moves a weight whose :math:`u` is negative
    by :math:`2 * l1 / (\frac{m_{t+1}^{-p}}{\alpha} + 2 * l2)` more than the documented rule; it is matched here
    so that training gives MindSpore's numbers.

    :math:`m` is the state ``moments.<name>`` (starting at `initial_accum`), :math:`u` is ``linear.<name>``
    (zeros), :math:`p` is `lr_power`, :math:`\alpha` the learning rate. When not grouped, the weight decay
    applies to every parameter.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or groups ("lr" per group is not supported).
        initial_accum (float): the starting value of the accumulators, at least 0. Default: 0.1.
        learning_rate (float): a fixed learning rate, greater than 0. Default: 0.001.
        lr_power (float): at most 0; 0 keeps the learning rate fixed. Default: -0.5.
        l1 (float): l1 regularization strength, at least 0. Default: 0.0.
        l2 (float): l2 regularization strength, at least 0. Default: 0.0.
        use_locking (bool): accepted for compatibility. Default: False.
        loss_scale (float): greater than 0. Default: 1.0.
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **grads** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `initial_accum`, `learning_rate`, `lr_power`, `l1`, `l2` or `loss_scale` not a float;
            `use_locking` not a bool.
        ValueError: `lr_power` > 0; `loss_scale` <= 0; `initial_accum`, `l1` or `l2` < 0; a dynamic or grouped
            learning rate.
    """
    _steps_every_call = True
    _target_settable = True

    def __init__(self, params: Any, initial_accum: float = 0.1, learning_rate: Any = 0.001, lr_power: float = -0.5,
                 l1: float = 0.0, l2: float = 0.0, use_locking: bool = False, loss_scale: float = 1.0,
                 weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale=loss_scale)
        if self.dynamic_lr or self.is_group_lr:
            raise ValueError(f"For 'FTRL', dynamic learning rate and group learning rate are currently not supported "
                             f"in FTRL, they should all be false, but got dynamic learning rate {self.dynamic_lr} and "
                             f"group learning rate {self.is_group_lr}.")
        _check_param(initial_accum, learning_rate, lr_power, l1, l2, use_locking, self.cls_name)
        self.moments = self._clone_state("moments", initial_accum)
        self.linear = self._clone_state("linear", "zeros")
        self.l1 = l1
        self.l2 = l2
        self.lr = learning_rate
        self.lr_power = lr_power
        self.use_locking = use_locking
        if not self.is_group:
            self.decay_flags = (True,) * self.param_length

    def construct(self, grads):
        grads, lr = self._prepare_step(grads)
        for param, accum, linear, grad in zip(self._parameters, self.moments, self.linear, grads):
            new_accum = accum + grad * grad
            if self.lr_power == -0.5:
                accum_pow, new_accum_pow = ops.sqrt(accum), ops.sqrt(new_accum)
            else:
                accum_pow, new_accum_pow = ops.pow(accum, -self.lr_power), ops.pow(new_accum, -self.lr_power)
            new_linear = linear + grad - (new_accum_pow - accum_pow) / lr * param
            quadratic = new_accum_pow / lr + 2.0 * self.l2
            shrunk = (self.l1 - new_linear) / quadratic
            new_param = ops.select(ops.abs(new_linear) > self.l1, shrunk, ops.zeros_like(param))
            ops.assign(accum, new_accum)
            ops.assign(linear, new_linear)
            ops.assign(param, new_param)
        return True
