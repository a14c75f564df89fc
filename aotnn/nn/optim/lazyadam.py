"""LazyAdam (MindSpore's ``nn.LazyAdam``): Adam that, for sparse gradients, updates only the rows seen.

Gradients here are always dense, so the update is Adam's (the ApplyAdam rule)."""
from __future__ import annotations

from typing import Any

from .adam import _AdamBase

__all__ = ["LazyAdam"]


class LazyAdam(_AdamBase):
    r"""Adam with lazy (row-wise) updates for sparse gradients; with dense gradients it is Adam:

    .. math::
        \begin{array}{ll}
            m_{t+1} = \beta_1 * m_{t} + (1 - \beta_1) * g \\
            v_{t+1} = \beta_2 * v_{t} + (1 - \beta_2) * g * g \\
            l = \alpha * \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t} \\
            w_{t+1} = w_{t} - l * \frac{m_{t+1}}{\sqrt{v_{t+1}} + \epsilon}
        \end{array}

    State: ``moment1.<name>``, ``moment2.<name>``, ``beta1_power``/``beta2_power`` (shape (1,), starting at 1);
    ``global_step`` advances on every call.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 1e-3.
        beta1 (float): in (0.0, 1.0). Default: 0.9.
        beta2 (float): in (0.0, 1.0). Default: 0.999.
        eps (float): greater than 0. Default: 1e-8.
        use_locking (bool): accepted for compatibility. Default: False.
        use_nesterov (bool): Nesterov accelerated gradient. Default: False.
        weight_decay (Union[float, int, Cell]): Default: 0.0.
        loss_scale (float): greater than 0. Default: 1.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `beta1`, `beta2`, `eps` or `loss_scale` not a float; `use_locking` or `use_nesterov` not a bool.
        ValueError: `loss_scale` or `eps` <= 0; `beta1` or `beta2` outside (0.0, 1.0); `weight_decay` < 0.
    """
    _power_shape = (1,)
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False, weight_decay: Any = 0.0,
                 loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self._init_adam(beta1, beta2, eps, use_locking, use_nesterov)

    def construct(self, gradients):
        gradients, lr, beta1_power, beta2_power = self._prepare(gradients)
        return self._apply(gradients, lr, beta1_power, beta2_power)
