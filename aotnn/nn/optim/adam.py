"""Adam, AdamWeightDecay and AdamOffload (MindSpore's ``nn.Adam`` family)."""
from __future__ import annotations

from typing import Any

from ... import ops
from . import _validator as validator
from .optimizer import Optimizer, _state

__all__ = ["Adam", "AdamWeightDecay", "AdamOffload"]


def _check_param_value(beta1: Any, beta2: Any, eps: Any, cls: str) -> None:
    validator.check_float_range(beta1, 0.0, 1.0, "beta1", cls)
    validator.check_float_range(beta2, 0.0, 1.0, "beta2", cls)
    validator.check_positive_float(eps, "eps", cls)


def _adam_update(param, m, v, grad, lr_t, beta1: float, beta2: float, eps: float, use_nesterov: bool,
                 vhat=None) -> None:
    """One Adam step (the ApplyAdam rule, ``eps`` outside the square root) with ``lr_t`` already corrected:
    ``lr * sqrt(1 - beta2^t) / (1 - beta1^t)``. With ``vhat`` (AMSGrad) the running maximum of ``v`` is used."""
    new_m = m + (grad - m) * (1.0 - beta1)
    new_v = v + (grad * grad - v) * (1.0 - beta2)
    if vhat is not None:
        new_vhat = ops.maximum(vhat, new_v)
        ops.assign(vhat, new_vhat)
        denom = ops.sqrt(new_vhat) + eps
    else:
        denom = ops.sqrt(new_v) + eps
    numer = new_m * beta1 + (1.0 - beta1) * grad if use_nesterov else new_m
    ops.assign(param, param - lr_t * numer / denom)
    ops.assign(m, new_m)
    ops.assign(v, new_v)


def _corrected_lr(lr, beta1_power, beta2_power):
    lr_t = lr * ops.sqrt(1.0 - beta2_power) / (1.0 - beta1_power)
    return ops.reshape(lr_t, ()) if lr_t.shape != () else lr_t


class _AdamBase(Optimizer):
    """Shared by Adam, AdamOffload and LazyAdam: moments, powers of the betas and the bias-corrected step."""
    _steps_every_call = True
    _power_shape: tuple = ()
    _target_settable = True

    def _init_adam(self, beta1: Any, beta2: Any, eps: Any, use_locking: Any, use_nesterov: Any) -> None:
        _check_param_value(beta1, beta2, eps, self.cls_name)
        validator.check_value_type("use_locking", use_locking, [bool], self.cls_name)
        validator.check_value_type("use_nesterov", use_nesterov, [bool], self.cls_name)
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.use_locking = use_locking
        self.use_nesterov = use_nesterov
        self.beta1_power = _state(ops.ones(self._power_shape).asnumpy(), "beta1_power")
        self.beta2_power = _state(ops.ones(self._power_shape).asnumpy(), "beta2_power")
        self.moment1 = self._clone_state("moment1", "zeros")
        self.moment2 = self._clone_state("moment2", "zeros")

    def _prepare(self, gradients, centralize: bool = True):
        gradients, lr = self._prepare_step(gradients, centralize=centralize)
        beta1_power = self.beta1_power * self.beta1
        beta2_power = self.beta2_power * self.beta2
        ops.assign(self.beta1_power, beta1_power)
        ops.assign(self.beta2_power, beta2_power)
        return gradients, lr, beta1_power, beta2_power

    def _apply(self, gradients, lr, beta1_power, beta2_power, vhat=None) -> bool:
        for index, (param, m, v, grad) in enumerate(zip(self._parameters, self.moment1, self.moment2, gradients)):
            lr_t = _corrected_lr(self._lr_at(lr, index), beta1_power, beta2_power)
            _adam_update(param, m, v, grad, lr_t, self.beta1, self.beta2, self.eps, self.use_nesterov,
                         None if vhat is None else vhat[index])
        return True


class Adam(_AdamBase):
    r"""Implements the Adaptive Moment Estimation (Adam) algorithm.

    .. math::
        \begin{array}{ll}
            m_{t+1} = \beta_1 * m_{t} + (1 - \beta_1) * g \\
            v_{t+1} = \beta_2 * v_{t} + (1 - \beta_2) * g * g \\
            l = \alpha * \frac{\sqrt{1-\beta_2^t}}{1-\beta_1^t} \\
            w_{t+1} = w_{t} - l * \frac{m_{t+1}}{\sqrt{v_{t+1}} + \epsilon}
        \end{array}

    With `use_nesterov` the numerator is :math:`\beta_1 m_{t+1} + (1-\beta_1) g`; with `use_amsgrad` the
    denominator uses :math:`\hat{v}_{t+1} = \max(\hat{v}_t, v_{t+1})`. State: ``moment1.<name>``,
    ``moment2.<name>`` (and ``vhat.<name>``), ``beta1_power``, ``beta2_power`` (scalars starting at 1).

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
        use_amsgrad (bool): the AMSGrad variant. Default: False.
        kwargs: ``use_lazy`` (bool) and ``use_offload`` (bool); with dense gradients both give Adam's update.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `beta1`, `beta2`, `eps` or `loss_scale` not a float; a flag not a bool.
        ValueError: `loss_scale` or `eps` <= 0; `beta1` or `beta2` outside (0.0, 1.0); `weight_decay` < 0;
            `use_lazy` and `use_offload` both true; `use_amsgrad` with `use_lazy` or `use_offload`.
    """

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False, weight_decay: Any = 0.0,
                 loss_scale: float = 1.0, use_amsgrad: bool = False, **kwargs: Any):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        use_lazy = kwargs.get("use_lazy", False)
        use_offload = kwargs.get("use_offload", False)
        self._init_adam(beta1, beta2, eps, use_locking, use_nesterov)
        for name, flag in (("use_amsgrad", use_amsgrad), ("use_lazy", use_lazy), ("use_offload", use_offload)):
            validator.check_value_type(name, flag, [bool], self.cls_name)
        if use_lazy and use_offload:
            raise ValueError(f"For 'Adam', 'use_lazy' and 'use_offload' can not both be True. But got "
                             f"use_lazy={use_lazy}, use_offload={use_offload}.")
        if use_amsgrad and (use_lazy or use_offload):
            raise ValueError(f"For lazy Adam and Adam with offload, there is no parameter named 'use_amsgrad'. "
                             f"but got 'use_amsgrad'={use_amsgrad}.")
        self.use_amsgrad = use_amsgrad
        self.use_lazy = use_lazy
        self.use_offload = use_offload
        if use_amsgrad:
            self.vhat = self._clone_state("vhat", "zeros")

    def construct(self, gradients):
        gradients, lr, beta1_power, beta2_power = self._prepare(gradients, centralize=not self.use_offload)
        return self._apply(gradients, lr, beta1_power, beta2_power, self.vhat if self.use_amsgrad else None)


class AdamOffload(_AdamBase):
    r"""Adam whose update MindSpore runs on the host CPU; the update itself is Adam's (see :class:`Adam`).
    ``beta1_power``/``beta2_power`` have shape (1,). Gradient centralization is not applied.

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

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-8, use_locking: bool = False, use_nesterov: bool = False, weight_decay: Any = 0.0,
                 loss_scale: float = 1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self._init_adam(beta1, beta2, eps, use_locking, use_nesterov)
        self.params = self.parameters

    def construct(self, gradients):
        gradients, lr, beta1_power, beta2_power = self._prepare(gradients, centralize=False)
        return self._apply(gradients, lr, beta1_power, beta2_power)


class AdamWeightDecay(Optimizer):
    r"""Implements the Adam algorithm with decoupled weight decay.

    .. math::
        \begin{array}{ll}
            m_{t+1} = \beta_1 * m_{t} + (1 - \beta_1) * g \\
            v_{t+1} = \beta_2 * v_{t} + (1 - \beta_2) * g * g \\
            update = \frac{m_{t+1}}{\sqrt{v_{t+1}} + eps} + weight\_decay * w_{t} \\
            w_{t+1} = w_{t} - lr * update
        \end{array}

    No bias correction. The weight decay applies to the parameters without 'beta' or 'gamma' in their names
    (or per group). State: ``adam_m.<name>`` and ``adam_v.<name>``.

    Args:
        params (Union[list[Parameter], list[dict]]): the parameters or parameter groups (see :class:`Optimizer`).
        learning_rate (Union[float, int, Tensor, Iterable, LearningRateSchedule]): Default: 1e-3.
        beta1 (float): in (0.0, 1.0). Default: 0.9.
        beta2 (float): in (0.0, 1.0). Default: 0.999.
        eps (float): greater than 0. Default: 1e-6.
        weight_decay (Union[float, int, Cell]): Default: 0.0.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of `params`.

    Outputs:
        True; parameters and state are updated in place.

    Raises:
        TypeError: `beta1`, `beta2` or `eps` not a float; `weight_decay` neither float, int nor Cell.
        ValueError: `eps` <= 0; `beta1` or `beta2` outside (0.0, 1.0); `weight_decay` < 0.
    """
    _steps_every_call = True
    _support_parallel_optimizer = True
    _target_settable = True

    def __init__(self, params: Any, learning_rate: Any = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 eps: float = 1e-6, weight_decay: Any = 0.0):
        super().__init__(learning_rate, params, weight_decay)
        _check_param_value(beta1, beta2, eps, self.cls_name)
        self.beta1 = beta1
        self.beta2 = beta2
        self.eps = eps
        self.moments1 = self._clone_state("adam_m", "zeros")
        self.moments2 = self._clone_state("adam_v", "zeros")

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        weight_decay = self.get_weight_decay()
        lr = self.get_lr()
        for index, (param, m, v, grad) in enumerate(zip(self._parameters, self.moments1, self.moments2, gradients)):
            wd = weight_decay[index] if self.is_group else weight_decay
            new_m = m * self.beta1 + grad * (1.0 - self.beta1)
            new_v = v * self.beta2 + ops.square(grad) * (1.0 - self.beta2)
            update = new_m / (ops.sqrt(new_v) + self.eps)
            if self.decay_flags[index]:
                update = param * wd + update
            ops.assign(param, param - self._lr_at(lr, index) * update)
            ops.assign(m, new_m)
            ops.assign(v, new_v)
        return True
