"""ASGD, averaged stochastic gradient descent (MindSpore's ``nn.ASGD``)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer, _scalar, _state

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Implements Average Stochastic Gradient Descent.

    .. math::
        \begin{array}{ll}
            w_{t} = w_{t-1} * (1 - \lambda * \eta_{t-1}) - \eta_{t-1} * g_{t} \\
            ax_{t} = ax_{t-1} + (w_t - ax_{t-1}) * \mu_{t-1} \\
            \eta_{t} = \frac{lr}{(1 + \lambda * lr * t)^\alpha} \\
            \mu_{t} = \frac{1}{\max(1, t - t0)}
        \end{array}

    :math:`t` is ``global_step`` after this call's increment; on the first step :math:`\eta` is the learning
    rate. State per parameter: ``mu_<name>`` (starting at 1), ``eta_<name>`` (starting at 0) and the average
    ``ax_.<name>``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.1.
        lambd (float): the decay term. Default: 1e-4.
        alpha (float): the power of the :math:`\eta` update. Default: 0.75.
        t0 (float): the step averaging starts at. Default: 1e6.
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `lambd`, `alpha` or `t0` not a float; `weight_decay` neither float, int nor Cell.
        ValueError: `weight_decay` less than 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any = 0.1, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        validator.check_value_type("lambd", lambd, [float], self.cls_name)
        validator.check_value_type("alpha", alpha, [float], self.cls_name)
        validator.check_value_type("t0", t0, [float], self.cls_name)
        self.lambd = lambd
        self.alpha = alpha
        self.t0 = t0
        self.mu = self._state_tuple([_state(1.0, f"mu_{p.name}") for p in self._parameters])
        self.eta = self._state_tuple([_state(0.0, f"eta_{p.name}") for p in self._parameters])
        self.ax = self._clone_state("ax_", "zeros")

    def construct(self, gradients):
        step = ops.reshape(ops.cast(self.global_step + 1, "float32"), ())
        gradients, lrs = self._prepare_step(gradients)
        for index, (grad, param, mu, eta, ax) in enumerate(zip(gradients, self._parameters, self.mu, self.eta,
                                                               self.ax)):
            lr = _scalar(self._lr_at(lrs, index))
            eta = ops.select(step == 1.0, lr, eta)
            new_param = param * (1.0 - self.lambd * eta) - eta * grad
            ops.assign(param, new_param)
            ops.assign(ax, ops.select(mu != 1.0, ax + (new_param - ax) * mu, new_param))
            ops.assign(self.eta[index], lr / ops.pow(1.0 + self.lambd * lr * step, self.alpha))
            ops.assign(mu, 1.0 / ops.maximum(step - self.t0, 1.0))
        return True
