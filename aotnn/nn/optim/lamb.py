"""Lamb, layer-wise adaptive moments (MindSpore's ``nn.Lamb``, its Lamb kernel)."""
from __future__ import annotations

from typing import Any

from ... import ops
from .adam import _check_param_value
from .optimizer import Optimizer

__all__ = ["Lamb"]


def _norm(x):
    return ops.sqrt(ops.reduce_sum(x * x))


class Lamb(Optimizer):
    r"""Implements the Lamb (Layer-wise Adaptive Moments optimizer for Batching training) algorithm.

    .. math::
        \begin{array}{ll}
            m_t = \beta_1 m_{t - 1}+ (1 - \beta_1)g_t \\
            v_t = \beta_2 v_{t - 1} + (1 - \beta_2)g_t^2 \\
            \hat{m}_t = m_t / (1 - \beta_1^t), \quad \hat{v}_t = v_t / (1 - \beta_2^t) \\
            r_t = \frac{\hat{m}_t}{\sqrt{\hat{v}_t}+\epsilon} + \lambda w_{t-1} \\
            w_t = w_{t-1} - \eta_t \, trust \, r_t
        \end{array}

    The trust ratio is :math:`\|w_{t-1}\| / \|\hat{m}_t/\sqrt{\hat{v}_t + \epsilon} + \lambda w_{t-1}\|` (1 when
    either norm is 0), clipped to [0, 10]; :math:`t` is ``global_step`` after this call's increment. State:
    ``lamb_m.<name>``, ``lamb_v.<name>``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): the learning rate.
        beta1 (float): in (0.0, 1.0). Default: 0.9.
        beta2 (float): in (0.0, 1.0). Default: 0.999.
        eps (float): greater than 0. Default: 1e-6.
        weight_decay (Union[float, int, Cell]): applied to parameters without 'beta' or 'gamma' in their names
            (or per group). Default: 0.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `beta1`, `beta2` or `eps` not a float; `weight_decay` neither float, int nor Cell.
        ValueError: `eps` <= 0; `beta1` or `beta2` outside (0.0, 1.0); `weight_decay` < 0.
    """
    _support_parallel_optimizer = True
    _steps_every_call = True

    def __init__(self, params: Any, learning_rate: Any, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-6,
                 weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.params = self._parameters
        self.moments1 = self._clone_state("lamb_m", "zeros")
        self.moments2 = self._clone_state("lamb_v", "zeros")

    def construct(self, gradients):
        step = ops.reshape(ops.cast(self.global_step + 1, "float32"), ())
        weight_decay = self.get_weight_decay()
        lr = self.get_lr()
        gradients = self.flatten_gradients(gradients)
        gradients = self.gradients_centralization(gradients)
        bias1 = 1.0 - ops.pow(self.beta1, step)
        bias2 = 1.0 - ops.pow(self.beta2, step)
        for index, (param, m, v, grad) in enumerate(zip(self._parameters, self.moments1, self.moments2, gradients)):
            wd = weight_decay[index] if self.is_group else weight_decay
            if not self.decay_flags[index]:
                wd = 0.0
            new_m = m * self.beta1 + grad * (1.0 - self.beta1)
            new_v = v * self.beta2 + ops.square(grad) * (1.0 - self.beta2)
            m_hat, v_hat = new_m / bias1, new_v / bias2
            decay = param * wd
            update = m_hat / (ops.sqrt(v_hat) + self.eps) + decay
            g_hat = m_hat / ops.sqrt(v_hat + self.eps) + decay
            w_norm, g_norm = _norm(param), _norm(g_hat)
            trust = ops.select(w_norm > 0.0, ops.select(g_norm > 0.0, w_norm / g_norm, 1.0), 1.0)
            trust = ops.clip_by_value(trust, 0.0, 10.0)
            ops.assign(param, param - trust * self._lr_at(lr, index) * update)
            ops.assign(m, new_m)
            ops.assign(v, new_v)
        return True
