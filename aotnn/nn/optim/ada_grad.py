"""Adagrad (MindSpore's ``nn.Adagrad``, the ApplyAdagrad rule)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Implements the Adagrad algorithm.

    .. math::
        \begin{array}{ll}
            h_{t+1} = h_{t} + g * g \\
            w_{t+1} = w_{t} - lr * \frac{1}{\sqrt{h_{t+1}}} * g
        \end{array}

    :math:`h` is the state ``accum.<name>``, starting at `accum`; with ``update_slots=False`` it is not updated.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        accum (float): the starting value of the accumulators, at least 0. Default: 0.1.
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 0.001.
        update_slots (bool): whether the accumulators are updated. Default: True.
        loss_scale (float): greater than 0. Default: 1.0.
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **grads** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `accum` or `loss_scale` not a float; `update_slots` not a bool; `weight_decay` neither float
            nor int.
        ValueError: `loss_scale` <= 0; `accum` or `weight_decay` less than 0.
    """
    _steps_every_call = True

    def __init__(self, params: Any, accum: float = 0.1, learning_rate: Any = 0.001, update_slots: bool = True,
                 loss_scale: float = 1.0, weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        validator.check_value_type("accum", accum, [float], self.cls_name)
        validator.check_value_type("update_slots", update_slots, [bool], self.cls_name)
        validator.check_non_negative_float(accum, "accum", self.cls_name)
        self.update_slots = update_slots
        self.accum = self._clone_state("accum", accum)

    def construct(self, grads):
        grads, lr = self._prepare_step(grads)
        for index, (param, accum, grad) in enumerate(zip(self._parameters, self.accum, grads)):
            new_accum = accum + grad * grad if self.update_slots else accum
            ops.assign(param, param - self._lr_at(lr, index) * grad / ops.sqrt(new_accum))
            if self.update_slots:
                ops.assign(accum, new_accum)
        return True
