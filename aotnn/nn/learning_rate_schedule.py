"""Learning rate schedules, MindSpore's ``nn.learning_rate_schedule``: Cells mapping a step to a rate.

An optimizer given a schedule calls it with its ``global_step`` inside the compiled training
step, so the rate is computed in the graph (float32), as MindSpore does.
"""
from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..common import dtype as mstype
from ..common.tensor import Tensor
from .cell import Cell
from .dynamic_lr import check_bool, check_float, check_non_negative_float, check_positive_int

__all__ = ['LearningRateSchedule', 'ExponentialDecayLR', 'NaturalExpDecayLR', 'InverseDecayLR', 'CosineDecayLR',
           'PolynomialDecayLR', 'WarmUpLR']


def _step(global_step) -> Tensor:
    """``global_step`` as a float32 Tensor (Python ints are accepted too)."""
    if not isinstance(global_step, Tensor):
        global_step = Tensor(np.asarray(global_step, np.int32))
    return ops.cast(global_step, mstype.float32)


class LearningRateSchedule(Cell):
    """Base class of learning rate schedules.

    Subclasses define ``construct(global_step)`` returning the rate at that step as a float32
    Tensor (of ``global_step``'s shape: ``()`` for a scalar step, ``(1,)`` for an optimizer's).
    """

    def construct(self, global_step):
        raise NotImplementedError(f"{type(self).__name__} must define construct(global_step)")


def _check_decay(learning_rate, decay_rate, decay_steps, is_stair, name: str) -> None:
    check_positive_int(decay_steps, 'decay_steps', name)
    check_float(learning_rate, 'learning_rate', name)
    check_float(decay_rate, 'decay_rate', name)
    check_bool(is_stair, 'is_stair', name)


class _DecayLR(LearningRateSchedule):
    """Shared arguments of the exponential, natural-exponential and inverse-time decays."""

    def __init__(self, learning_rate: float, decay_rate: float, decay_steps: int, is_stair: bool = False):
        super().__init__()
        _check_decay(learning_rate, decay_rate, decay_steps, is_stair, type(self).__name__)
        self.learning_rate = learning_rate
        self.decay_rate = decay_rate
        self.decay_steps = decay_steps
        self.is_stair = is_stair

    def _progress(self, global_step) -> Tensor:
        """``step / decay_steps``, floored when ``is_stair``."""
        p = _step(global_step) / float(self.decay_steps)
        return ops.floor(p) if self.is_stair else p

    def extend_repr(self) -> str:
        return (f"learning_rate={self.learning_rate}, decay_rate={self.decay_rate}, "
                f"decay_steps={self.decay_steps}, is_stair={self.is_stair}")


class ExponentialDecayLR(_DecayLR):
    r"""Exponential decay: :math:`learning\_rate \cdot decay\_rate^{p}`, :math:`p = step / decay\_steps`
    (floored when ``is_stair``).

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        decay_steps (int): steps per decay period, > 0.
        is_stair (bool): decay once every ``decay_steps`` steps. Default: False.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: ``learning_rate``/``decay_rate`` not floats, ``decay_steps`` not an int,
            ``is_stair`` not a bool.
        ValueError: ``decay_steps`` < 1, ``learning_rate`` or ``decay_rate`` <= 0.
    """

    def construct(self, global_step):
        return ops.pow(self.decay_rate, self._progress(global_step)) * self.learning_rate


class NaturalExpDecayLR(_DecayLR):
    r"""Natural exponential decay: :math:`learning\_rate \cdot e^{-decay\_rate \cdot p}`, :math:`p = step`
    (rounded down to a multiple of ``decay_steps`` when ``is_stair``).

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        decay_steps (int): steps per decay period, > 0.
        is_stair (bool): decay once every ``decay_steps`` steps. Default: False.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: ``learning_rate``/``decay_rate`` not floats, ``decay_steps`` not an int,
            ``is_stair`` not a bool.
        ValueError: ``decay_steps`` < 1, ``learning_rate`` or ``decay_rate`` <= 0.
    """

    def construct(self, global_step):
        p = _step(global_step)
        if self.is_stair:
            p = ops.floor(p / float(self.decay_steps)) * float(self.decay_steps)
        return ops.exp(p * -self.decay_rate) * self.learning_rate


class InverseDecayLR(_DecayLR):
    r"""Inverse-time decay: :math:`learning\_rate / (1 + decay\_rate \cdot p)`, :math:`p = step / decay\_steps`
    (floored when ``is_stair``).

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        decay_steps (int): steps per decay period, > 0.
        is_stair (bool): decay once every ``decay_steps`` steps. Default: False.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: ``learning_rate``/``decay_rate`` not floats, ``decay_steps`` not an int,
            ``is_stair`` not a bool.
        ValueError: ``decay_steps`` < 1, ``learning_rate`` or ``decay_rate`` <= 0.
    """

    def construct(self, global_step):
        return self.learning_rate / (self._progress(global_step) * self.decay_rate + 1.0)


class CosineDecayLR(LearningRateSchedule):
    r"""Cosine decay:
    :math:`min\_lr + 0.5 (max\_lr - min\_lr)(1 + \cos(\pi \cdot \min(step, decay\_steps) / decay\_steps))`.

    Args:
        min_lr (float): the final rate, >= 0.
        max_lr (float): the initial rate, > ``min_lr``.
        decay_steps (int): steps to decay over, > 0.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: ``min_lr`` or ``max_lr`` not a float, ``decay_steps`` not an int.
        ValueError: ``min_lr`` < 0, ``max_lr`` <= ``min_lr``, ``decay_steps`` < 1.
    """

    def __init__(self, min_lr: float, max_lr: float, decay_steps: int):
        super().__init__()
        name = type(self).__name__
        check_non_negative_float(min_lr, 'min_lr', name)
        check_float(max_lr, 'max_lr', name)
        check_positive_int(decay_steps, 'decay_steps', name)
        if min_lr >= max_lr:
            raise ValueError(f"For '{name}', the 'max_lr' must be greater than the 'min_lr', "
                             f"but got 'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
        self.min_lr = min_lr
        self.max_lr = max_lr
        self.decay_steps = decay_steps
        self.delta = 0.5 * (max_lr - min_lr)

    def construct(self, global_step):
        p = ops.minimum(_step(global_step), float(self.decay_steps))
        return (ops.cos(p * (math.pi / self.decay_steps)) + 1.0) * self.delta + self.min_lr

    def extend_repr(self) -> str:
        return f"min_lr={self.min_lr}, max_lr={self.max_lr}, decay_steps={self.decay_steps}"


class PolynomialDecayLR(LearningRateSchedule):
    r"""Polynomial decay:
    :math:`(learning\_rate - end\_learning\_rate)(1 - t / T)^{power} + end\_learning\_rate`, with
    :math:`t = \min(step, decay\_steps)`, :math:`T = decay\_steps`; with ``update_decay_steps``,
    :math:`t = step` and :math:`T = decay\_steps \cdot \max(\lceil step / decay\_steps \rceil, 1)`.

    Args:
        learning_rate (float): initial rate, > 0.
        end_learning_rate (float): final rate, >= 0.
        decay_steps (int): steps to decay over, > 0.
        power (float): > 0.
        update_decay_steps (bool): restart the decay every ``decay_steps`` steps. Default: False.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: float arguments given as other types, ``decay_steps`` not an int,
            ``update_decay_steps`` not a bool.
        ValueError: out-of-range values.
    """

    def __init__(self, learning_rate: float, end_learning_rate: float, decay_steps: int, power: float,
                 update_decay_steps: bool = False):
        super().__init__()
        name = type(self).__name__
        check_float(learning_rate, 'learning_rate', name)
        check_non_negative_float(end_learning_rate, 'end_learning_rate', name)
        check_positive_int(decay_steps, 'decay_steps', name)
        check_bool(update_decay_steps, 'update_decay_steps', name)
        check_float(power, 'power', name)
        self.learning_rate = learning_rate
        self.start_learning_rate = learning_rate
        self.end_learning_rate = end_learning_rate
        self.decay_steps = decay_steps
        self.power = power
        self.update_decay_steps = update_decay_steps
        self.diff_learning_rate = learning_rate - end_learning_rate

    def construct(self, global_step):
        step = _step(global_step)
        steps = float(self.decay_steps)
        if self.update_decay_steps:
            period = ops.maximum(ops.ceil(step / steps), 1.0) * steps
            p = step / period
        else:
            p = ops.minimum(step, steps) / steps
        return ops.pow(1.0 - p, self.power) * self.diff_learning_rate + self.end_learning_rate

    def extend_repr(self) -> str:
        return (f"learning_rate={self.learning_rate}, end_learning_rate={self.end_learning_rate}, "
                f"decay_steps={self.decay_steps}, power={self.power}, update_decay_steps={self.update_decay_steps}")


class WarmUpLR(LearningRateSchedule):
    r"""Linear warm-up: :math:`learning\_rate \cdot \min(step, warmup\_steps) / warmup\_steps`.

    Args:
        learning_rate (float): the rate reached after warm-up, >= 0.
        warmup_steps (int): steps of warm-up, > 0.

    Inputs:
        - **global_step** (Tensor) - the current step (int32).

    Outputs:
        Tensor, float32, the rate at that step.

    Raises:
        TypeError: ``learning_rate`` not a float, ``warmup_steps`` not an int.
        ValueError: ``learning_rate`` < 0, ``warmup_steps`` < 1.
    """

    def __init__(self, learning_rate: float, warmup_steps: int):
        super().__init__()
        name = type(self).__name__
        check_non_negative_float(learning_rate, 'learning_rate', name)
        check_positive_int(warmup_steps, 'warmup_steps', name)
        self.learning_rate = learning_rate
        self.warmup_steps = warmup_steps

    def construct(self, global_step):
        percent = ops.minimum(_step(global_step), float(self.warmup_steps)) / float(self.warmup_steps)
        return percent * self.learning_rate

    def extend_repr(self) -> str:
        return f"learning_rate={self.learning_rate}, warmup_steps={self.warmup_steps}"
