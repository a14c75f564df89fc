"""AdaFactor, adaptive learning rates with sublinear memory cost (MindSpore's ``nn.AdaFactor``)."""
from __future__ import annotations

from typing import Any

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import ParameterTuple
from . import _validator as validator
from .optimizer import Optimizer, _state

__all__ = ["AdaFactor"]


def _rms(x):
    return ops.sqrt(ops.mean(ops.square(x)))


class AdaFactor(Optimizer):
    r"""Updates parameters by the Adafactor algorithm (Adaptive Learning Rates with Sublinear Memory Cost).

    For a parameter of rank >= 2 the second moment is factored into running averages of its row and column
    means (:math:`R`, :math:`C`); for a vector it is kept whole (:math:`V`):

    .. math::
        \begin{array}{ll}
            u = g^2 + \epsilon_1, \quad \hat{\beta}_{2t} = 1 - t^{-decay\_rate} \\
            R_t = \hat{\beta}_{2t} R_{t-1} + (1-\hat{\beta}_{2t}) \mathrm{mean}_{-1}(u), \quad
            C_t = \hat{\beta}_{2t} C_{t-1} + (1-\hat{\beta}_{2t}) \mathrm{mean}_{-2}(u) \\
            U_t = g \,/\, \sqrt{(R_t / \mathrm{mean}(R_t)) \, C_t} \quad (\text{or } g / \sqrt{V_t}) \\
            \hat{U}_t = \alpha_t \, U_t / \max(1, \mathrm{RMS}(U_t) / d) \\
            m_t = \beta_1 m_{t-1} + (1-\beta_1) \hat{U}_t \quad (\text{if } \beta_1 > 0) \\
            X_t = X_{t-1} - \lambda \alpha_t X_{t-1} - m_t
        \end{array}

    :math:`\alpha_t` is the learning rate; with `relative_step` it is :math:`\min(10^{-2}, 1/\sqrt{t})` (or
    :math:`\min(10^{-6} t, 1/\sqrt{t})` with `warmup_init`); with `scale_parameter` it is multiplied by
    :math:`\max(\epsilon_2, \mathrm{RMS}(X_{t-1}))`. :math:`t` counts the calls (state ``afactor_step``). State:
    ``exp_avg.<name>`` (with beta1), ``exp_avg_sq_row_<name>``, ``exp_avg_sq_col_<name>``,
    ``exp_avg_sq_<name>``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups.
        learning_rate (Union[float, Tensor]): an external learning rate; needs ``relative_step=False``.
            Default: None.
        eps (tuple): (eps1, eps2), regularization constants for the squared gradient and the parameter scale.
            Default: (1e-30, 1e-3).
        clip_threshold (float): threshold :math:`d` of the update's RMS. Default: 1.0.
        decay_rate (float): in (0, 1), for :math:`\hat{\beta}_{2t}`. Default: 0.8.
        beta1 (float): coefficient of the first moment; None or 0 disables it. Default: None.
        weight_decay (float): in [0, 1). Default: 0.0.
        scale_parameter (bool): scale the learning rate by the parameter's RMS. Default: True.
        relative_step (bool): compute a time-dependent learning rate. Default: True.
        warmup_init (bool): warm-up form of the relative step; needs `relative_step`. Default: False.
        compression (bool): keep a vector's second moment in float16. Default: False.
        loss_scale (float): greater than 0. Default: 1.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `eps` not a list or tuple; an eps, `clip_threshold`, `decay_rate` or `weight_decay` not a
            float; a flag not a bool; `beta1` not a number.
        ValueError: `learning_rate` with `relative_step`; `warmup_init` without `relative_step`; no
            `learning_rate` without `relative_step`; `eps` not of length 2; a value out of its range.
    """
    _support_parallel_optimizer = True
    _steps_every_call = True
    _target_settable = True

    def __init__(self, params: Any, learning_rate: Any = None, eps: tuple = (1e-30, 1e-3), clip_threshold: float = 1.0,
                 decay_rate: float = 0.8, beta1: Any = None, weight_decay: float = 0.0, scale_parameter: bool = True,
                 relative_step: bool = True, warmup_init: bool = False, compression: bool = False,
                 loss_scale: float = 1.0):
        if learning_rate is not None and relative_step:
            raise ValueError(f"Cannot combine manual lr and relative_step options, got learning_rate={learning_rate}")
        if warmup_init and not relative_step:
            raise ValueError("warmup_init requires relative_step=True")
        if learning_rate is None and not relative_step:
            raise ValueError("Cannot learning_rate is None and relative_step=False")
        if learning_rate is None:
            learning_rate = 0.0
        if beta1 is None:
            beta1 = 0.0
        self_scale_lr = isinstance(learning_rate, (float, int))
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.scale_lr = self_scale_lr
        validator.check_value_type("eps", eps, [list, tuple], self.cls_name)
        if len(eps) != 2:
            raise ValueError(f"For '{self.cls_name}', eps must have 2 value: (eps1, eps2), but got {len(eps)}.")
        for i, ele in enumerate(eps):
            validator.check_non_negative_float(ele, f"eps{i}", self.cls_name)
        validator.check_non_negative_float(clip_threshold, "clip_threshold", self.cls_name)
        validator.check_float_range(decay_rate, 0.0, 1.0, "decay_rate", self.cls_name)
        validator.check_float_range(float(weight_decay) if isinstance(weight_decay, int) else weight_decay, 0.0, 1.0,
                                    "weight_decay", self.cls_name, include_low=True)
        for name, flag in (("scale_parameter", scale_parameter), ("relative_step", relative_step),
                           ("warmup_init", warmup_init), ("compression", compression)):
            validator.check_value_type(name, flag, [bool], self.cls_name)
        validator.check_value_type("beta1", beta1, [int, float], self.cls_name)
        validator.check_non_negative_float(float(beta1), "beta1", self.cls_name)
        self.eps = tuple(eps)
        self.clip_threshold = clip_threshold
        self.decay_rate = decay_rate
        self.beta1 = float(beta1)
        self.weight_decay = float(weight_decay)
        self.weight_decay_flag = bool(weight_decay)
        self.scale_parameter = scale_parameter and self.scale_lr
        self.relative_step = relative_step
        self.warmup_init = warmup_init
        self.compression = compression
        self.init_ada_factor_state(beta1)
        self.step = _state([0.0], "afactor_step")

    def init_ada_factor_state(self, beta1: float) -> None:
        """Create the state: the first moment (when ``beta1 > 0``) and the (factored) second moments."""
        self.use_first_moment = beta1 > 0
        if self.use_first_moment:
            self.exp_avg = self._clone_state("exp_avg", "zeros")
        rows, cols, full = [], [], []
        for param in self._parameters:
            shape, dtype, name = param.shape, param.dtype, param.name
            if len(shape) > 1:
                rows.append(_state(ops.zeros(shape[:-1]).asnumpy(), f"exp_avg_sq_row_{name}", dtype))
                cols.append(_state(ops.zeros(shape[:-2] + shape[-1:]).asnumpy(), f"exp_avg_sq_col_{name}", dtype))
                full.append(_state([0.0], f"exp_avg_sq_{name}", dtype))
            else:
                rows.append(_state([0.0], f"exp_avg_sq_row_{name}", dtype))
                cols.append(_state([0.0], f"exp_avg_sq_col_{name}", dtype))
                full.append(_state(ops.zeros(shape).asnumpy(), f"exp_avg_sq_{name}",
                                   mstype.float16 if self.compression else dtype))
        self.exp_avg_sq_row: ParameterTuple = self._state_tuple(rows)
        self.exp_avg_sq_col: ParameterTuple = self._state_tuple(cols)
        self.exp_avg_sq: ParameterTuple = self._state_tuple(full)

    @property
    def supports_memory_efficient_fp16(self) -> bool:
        return True

    @property
    def supports_flat_params(self) -> bool:
        return False

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        lr = self.get_lr()
        step = self.step + 1.0
        ops.assign(self.step, step)
        step = ops.reshape(step, ())
        if self.scale_lr and self.relative_step:
            min_step = step * 1e-6 if self.warmup_init else 1e-2
            lr = ops.minimum(min_step, 1.0 / ops.sqrt(step))
        beta2t = 1.0 - ops.pow(step, -self.decay_rate)
        for index, (grad, param) in enumerate(zip(gradients, self._parameters)):
            lr_i = self._lr_at(lr, index)
            if self.scale_parameter:
                lr_i = lr_i * ops.maximum(_rms(param), self.eps[1])
            update = ops.square(grad) + self.eps[0]
            if len(grad.shape) >= 2:
                row, col = self.exp_avg_sq_row[index], self.exp_avg_sq_col[index]
                new_row = row * beta2t + ops.mean(update, -1) * (1.0 - beta2t)
                new_col = col * beta2t + ops.mean(update, -2) * (1.0 - beta2t)
                ops.assign(row, new_row)
                ops.assign(col, new_col)
                r_factor = ops.expand_dims(ops.rsqrt(new_row / ops.mean(new_row, -1, True)), -1)
                c_factor = ops.expand_dims(ops.rsqrt(new_col), -2)
                update = r_factor * c_factor * grad
            else:
                full = self.exp_avg_sq[index]
                new_full = full * beta2t + update * (1.0 - beta2t)
                ops.assign(full, new_full)
                update = ops.rsqrt(new_full) * grad
            update = update / ops.maximum(_rms(update) / self.clip_threshold, 1.0) * lr_i
            if self.use_first_moment:
                exp_avg = self.exp_avg[index]
                update = exp_avg * self.beta1 + update * (1.0 - self.beta1)
                ops.assign(exp_avg, update)
            new_param = param
            if self.weight_decay_flag:
                new_param = new_param + new_param * (-self.weight_decay * lr_i)
            ops.assign(param, new_param - update)
        return True
