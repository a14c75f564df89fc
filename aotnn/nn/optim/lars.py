"""LARS, layer-wise adaptive rate scaling around another optimizer (MindSpore's ``nn.LARS``)."""
from __future__ import annotations

from typing import Any, Callable

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from . import _validator as validator
from .optimizer import Optimizer, _scalar, _state

__all__ = ["LARS"]


def _default_lars_filter(x: Parameter) -> bool:
    return "LayerNorm" not in x.name and "bias" not in x.name


def _norm(x):
    return ops.sqrt(ops.reduce_sum(x * x))


class LARS(Optimizer):
    r"""Implements the LARS algorithm: scales each gradient by a layer-wise trust ratio, then lets the wrapped
    optimizer update the parameters.

    .. math::
        \begin{array}{ll}
            \lambda = \frac{\theta \, \| \omega \|}{\| g_{t} \| + \delta \, \| \omega \| + \epsilon} \\
            \lambda = \begin{cases} \min(\frac{\lambda}{\alpha}, 1) & \text{if use_clip} \\
                \lambda & \text{otherwise} \end{cases} \\
            g_{t+1} = \lambda (g_{t} + \delta \omega)
        \end{array}

    :math:`\theta` is `coefficient`, :math:`\omega` a parameter, :math:`\delta` the wrapped optimizer's weight
    decay (which LARS applies instead of it), :math:`\alpha` its learning rate. Parameters for which
    `lars_filter` is False keep their gradients.

    Args:
        optimizer (Optimizer): the optimizer whose gradients are scaled.
        epsilon (float): added to the denominator. Default: 1e-05.
        coefficient (float): trust coefficient :math:`\theta`. Default: 0.001.
        use_clip (bool): clip the local learning rate. Default: False.
        lars_filter (Callable): which parameters use LARS. Default: names without 'LayerNorm' and 'bias'.

    Inputs:
        - **gradients** (tuple[Tensor]) - the gradients of the wrapped optimizer's parameters.

    Outputs:
        what the wrapped optimizer returns.

    Raises:
        TypeError: `optimizer` not an Optimizer; `epsilon` or `coefficient` not a float; `use_clip` not a bool.
        ValueError: `use_clip` with a learning rate both grouped and dynamic.
    """

    def __init__(self, optimizer: Optimizer, epsilon: float = 1e-05, coefficient: float = 0.001,
                 use_clip: bool = False, lars_filter: Callable[[Parameter], bool] = _default_lars_filter):
        super().__init__(0.0, [Parameter(Tensor(0.0), name="fake_param")])
        validator.check_value_type("optimizer", optimizer, [Optimizer], self.cls_name)
        validator.check_value_type("epsilon", epsilon, [float], self.cls_name)
        validator.check_value_type("coefficient", coefficient, [float], self.cls_name)
        validator.check_value_type("use_clip", use_clip, [bool], self.cls_name)
        self.opt = optimizer
        self.epsilon = epsilon
        self.coefficient = coefficient
        self.dynamic_decay_flags = optimizer.dynamic_decay_flags
        self.dynamic_weight_decay = optimizer.dynamic_weight_decay
        self.weight_decay = optimizer.weight_decay
        self.global_step = optimizer.global_step
        self.parameters = self._track(optimizer.parameters)
        self.use_clip = use_clip
        self.lars_flag = tuple(bool(lars_filter(x)) for x in self.parameters)
        self.is_group = optimizer.is_group
        self.learning_rate = _state(0.0, "fake_lr")
        self.decay_flags = optimizer.decay_flags
        self.reciprocal_scale = optimizer.reciprocal_scale
        self.need_scale = optimizer.need_scale
        self.loss_scale = optimizer.loss_scale
        if use_clip:
            self.is_group_lr = optimizer.is_group_lr
            self.dynamic_lr = optimizer.dynamic_lr
            self.origin_learning_rate = optimizer.learning_rate
            if self.is_group_lr and self.dynamic_lr:
                raise ValueError("For 'LARS', if the argument 'use_clip' is set to True, then the dynamic learning "
                                 "rate and group learning rate cannot both be true.")
        # LARS applies the weight decay and the loss scale itself.
        if self.is_group:
            optimizer.dynamic_decay_flags = tuple(False for _ in self.dynamic_decay_flags)
        else:
            optimizer.dynamic_decay_flags = False
        optimizer.decay_flags = tuple(False for _ in self.decay_flags)
        optimizer.dynamic_weight_decay = False
        optimizer.reciprocal_scale = 1.0
        optimizer.exec_weight_decay = False

    def _get_lr(self) -> Any:
        lr = self.origin_learning_rate
        if self.dynamic_lr:
            if self.is_group_lr:
                return tuple(_scalar(schedule(self.global_step)) for schedule in self.origin_learning_rate)
            return _scalar(self.origin_learning_rate(self.global_step))
        return lr

    def construct(self, gradients):
        gradients = self.flatten_gradients(gradients)
        lr = self._get_lr() if self.use_clip else self.learning_rate
        weight_decay = self.get_weight_decay()
        if self.need_scale:
            gradients = tuple(grad * self.reciprocal_scale for grad in gradients)
        scaled = []
        for index, (param, grad) in enumerate(zip(self.parameters, gradients)):
            if self.lars_flag[index]:
                wd = weight_decay[index] if self.is_group else weight_decay
                wd = wd / self.loss_scale if self.decay_flags[index] else 0.0
                w_norm = _norm(param)
                coeff = self.coefficient * w_norm / (_norm(grad) + wd * w_norm + self.epsilon)
                if self.use_clip:
                    coeff = ops.clip_by_value(coeff / self._lr_at(lr, index), 0.0, 1.0)
                grad = (grad + param * wd) * coeff
            scaled.append(grad)
        success = self.opt(tuple(scaled))
        if self._is_dynamic_lr_or_weight_decay() and not self.opt.dynamic_lr and not self.opt.dynamic_weight_decay:
            ops.assign(self.global_step, self.global_step + 1)
        return success
