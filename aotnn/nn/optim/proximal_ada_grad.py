"""ProximalAdagrad (MindSpore's ``nn.ProximalAdagrad``, the ApplyProximalAdagrad rule)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer

__all__ = ["ProximalAdagrad"]


class ProximalAdagrad(Optimizer):
    r"""Implements the ProximalAdagrad algorithm.

    .. math::
        \begin{array}{ll}
            accum_{t+1} = accum_{t} + grad * grad \\
            \eta = \frac{lr}{\sqrt{accum_{t+1}}} \\
            \text{prox_v} = var_{t} - \eta * grad \\
            var_{t+1} = \frac{sign(\text{prox_v})}{1 + \eta * l2} * \max(\left| \text{prox_v} \right| - \eta * l1, 0)
        \end{array}

    The regularization uses the per-element step :math:`\eta`, as MindSpore 2.10's kernel does (its docstring
    writes :math:`lr` there). State: ``accum.<name>``, starting at `accum`.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        accum (float): the starting value of the accumulators, at least 0. Default: 0.1.
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.001.
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
        TypeError: `accum`, `l1`, `l2` or `loss_scale` not a float; `use_locking` not a bool.
        ValueError: `loss_scale` <= 0; `accum`, `l1`, `l2` or `weight_decay` less than 0.
    """
    _steps_every_call = True
    _target_settable = True

    def __init__(self, params: Any, accum: float = 0.1, learning_rate: Any = 0.001, l1: float = 0.0,
                 l2: float = 0.0, use_locking: bool = False, loss_scale: float = 1.0, weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        for name, value in (("accum", accum), ("l1", l1), ("l2", l2)):
            validator.check_value_type(name, value, [float], self.cls_name)
        validator.check_value_type("use_locking", use_locking, [bool], self.cls_name)
        for name, value in (("accum", accum), ("l1", l1), ("l2", l2)):
            validator.check_non_negative_float(value, name, self.cls_name)
        self.accum = self._clone_state("accum", accum)
        self.l1 = l1
        self.l2 = l2
        self.use_locking = use_locking

    def construct(self, grads):
        grads, lr = self._prepare_step(grads)
        for index, (param, accum, grad) in enumerate(zip(self._parameters, self.accum, grads)):
            lr_i = self._lr_at(lr, index)
            new_accum = accum + grad * grad
            step = lr_i / ops.sqrt(new_accum)
            prox = param - step * grad
            shrunk = ops.maximum(ops.abs(prox) - step * self.l1, 0.0)
            ops.assign(param, ops.sign(prox) / (1.0 + step * self.l2) * shrunk)
            ops.assign(accum, new_accum)
        return True
