"""Dynamic learning rates, MindSpore's ``nn.dynamic_lr``: plain Python lists, one rate per step.

An optimizer given such a list uses element ``i`` at step ``i``.
"""
from __future__ import annotations

import math
from typing import Any

__all__ = ['piecewise_constant_lr', 'exponential_decay_lr', 'natural_exp_decay_lr', 'inverse_decay_lr',
           'cosine_decay_lr', 'polynomial_decay_lr', 'warmup_lr']


def _where(prim_name: str | None) -> str:
    return f"For '{prim_name}', the" if prim_name else "The"


def check_positive_int(value: Any, name: str, prim_name: str | None = None) -> int:
    """An int > 0 (bools refused): TypeError for other types, ValueError for other values."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{_where(prim_name)} '{name}' must be int, but got '{type(value).__name__}'.")
    if value <= 0:
        raise ValueError(f"{_where(prim_name)} '{name}' must be int and must > 0, but got '{value}'.")
    return value


def check_float(value: Any, name: str, prim_name: str | None = None, minimum: float = 0.0,
                strict: bool = True) -> float:
    """A Python float > ``minimum`` (>= when not ``strict``); an int is a TypeError, as in MindSpore."""
    if isinstance(value, bool) or not isinstance(value, float):
        raise TypeError(f"{_where(prim_name)} '{name}' must be float, but got '{type(value).__name__}'.")
    if (value <= minimum) if strict else (value < minimum):
        relation = '>' if strict else '>='
        raise ValueError(f"{_where(prim_name)} '{name}' must be float and must {relation} {minimum}, "
                         f"but got '{value}'.")
    return value


def check_non_negative_float(value: Any, name: str, prim_name: str) -> float:
    """A Python float >= 0, the lower end of a rate range (``min_lr``, ``end_learning_rate``, a warm-up's
    ``learning_rate``), whose TypeError MindSpore words apart from :func:`check_float`'s."""
    if isinstance(value, bool) or not isinstance(value, float):
        raise TypeError(f"For '{prim_name}', the argument '{name}' must be type of float, "
                        f"but got '{name}' type: {type(value)}.")
    return check_float(value, name, prim_name, strict=False)


def check_bool(value: Any, name: str, prim_name: str | None = None) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{_where(prim_name)} type of '{name}' should be 'bool', but got type "
                        f"'{type(value).__name__}'.")
    return value


def _check_steps(total_step, step_per_epoch, name: str) -> None:
    check_positive_int(total_step, 'total_step', name)
    check_positive_int(step_per_epoch, 'step_per_epoch', name)


def _check_decay_inputs(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair, name):
    _check_steps(total_step, step_per_epoch, name)
    check_positive_int(decay_epoch, 'decay_epoch', name)
    check_float(learning_rate, 'learning_rate', name)
    check_float(decay_rate, 'decay_rate', name)
    check_bool(is_stair, 'is_stair', name)


def _epochs(total_step: int, step_per_epoch: int) -> list[int]:
    """The epoch of every step: ``floor(i / step_per_epoch)``."""
    return [i // step_per_epoch for i in range(total_step)]


def piecewise_constant_lr(milestone, learning_rates) -> list[float]:
    r"""Piecewise constant learning rate: ``learning_rates[t]`` for steps in :math:`[M_{t-1}, M_t)`.

    Args:
        milestone (Union[list[int], tuple[int]]): non-decreasing positive step counts.
        learning_rates (Union[list[float], tuple[float]]): one rate per milestone.

    Returns:
        list[float] of length ``milestone[-1]``.

    Raises:
        TypeError: arguments not lists/tuples; a milestone not an int; a rate not a float.
        ValueError: lengths differ; a milestone <= 0 or smaller than the one before.

    Examples:
        >>> piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01])
        [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01]
    """
    name = 'piecewise_constant_lr'
    for arg, value in (('milestone', milestone), ('learning_rates', learning_rates)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"For '{name}', the type of '{arg}' should be one of ['tuple', 'list'], "
                            f"but got type '{type(value).__name__}'.")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"For '{name}', the size of 'milestone' must be same with the size of 'learning_rates', "
                         f"but got 'milestone' size: {len(milestone)}, 'learning_rates' size: {len(learning_rates)}.")
    rates: list[float] = []
    last = 0
    for i, (stop, rate) in enumerate(zip(milestone, learning_rates)):
        check_positive_int(stop, f'milestone[{i}]', name)
        if isinstance(rate, bool) or not isinstance(rate, float):
            raise TypeError(f"For '{name}', the type of 'learning_rates[{i}]' must be 'float', "
                            f"but got '{type(rate).__name__}'.")
        if stop < last:
            raise ValueError(f"For '{name}', the value of milestone[{i}] must be greater than milestone[{i - 1}], "
                             f"but got milestone[{i}]: {stop}, milestone[{i - 1}]: {last}.")
        rates += [rate] * (stop - last)
        last = stop
    return rates


def exponential_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                         decay_epoch: int, is_stair: bool = False) -> list[float]:
    r"""Exponential decay: :math:`lr_i = learning\_rate \cdot decay\_rate^{current\_epoch / decay\_epoch}`,
    with :math:`current\_epoch = \lfloor i / step\_per\_epoch \rfloor` (the exponent floored when ``is_stair``).

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        total_step (int): number of steps (the list's length).
        step_per_epoch (int): steps per epoch.
        decay_epoch (int): epochs per decay period.
        is_stair (bool): decay once every ``decay_epoch`` epochs. Default: False.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: ints that should be floats (or the reverse), or a non-bool ``is_stair``.
        ValueError: non-positive values.

    Examples:
        >>> exponential_decay_lr(0.1, 0.9, 6, 2, 1)
        [0.1, 0.1, 0.09000000000000001, 0.09000000000000001, 0.08100000000000002, 0.08100000000000002]
    """
    _check_decay_inputs(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                        'exponential_decay_lr')
    return [learning_rate * decay_rate ** (math.floor(epoch / decay_epoch) if is_stair else epoch / decay_epoch)
            for epoch in _epochs(total_step, step_per_epoch)]


def natural_exp_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                         decay_epoch: int, is_stair: bool = False) -> list[float]:
    r"""Natural exponential decay: :math:`lr_i = learning\_rate \cdot e^{-decay\_rate \cdot current\_epoch}`,
    with the epoch rounded down to a multiple of ``decay_epoch`` when ``is_stair``.

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        total_step (int): number of steps.
        step_per_epoch (int): steps per epoch.
        decay_epoch (int): epochs per decay period (used when ``is_stair``).
        is_stair (bool): decay once every ``decay_epoch`` epochs. Default: False.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: ints that should be floats (or the reverse), or a non-bool ``is_stair``.
        ValueError: non-positive values.

    Examples:
        >>> natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True)
        [0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657]
    """
    _check_decay_inputs(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                        'natural_exp_decay_lr')
    return [learning_rate * math.e ** (-decay_rate * (epoch // decay_epoch * decay_epoch if is_stair else epoch))
            for epoch in _epochs(total_step, step_per_epoch)]


def inverse_decay_lr(learning_rate: float, decay_rate: float, total_step: int, step_per_epoch: int,
                     decay_epoch: int, is_stair: bool = False) -> list[float]:
    r"""Inverse-time decay: :math:`lr_i = learning\_rate / (1 + decay\_rate \cdot current\_epoch / decay\_epoch)`
    (the ratio floored when ``is_stair``).

    Args:
        learning_rate (float): initial rate, > 0.
        decay_rate (float): > 0.
        total_step (int): number of steps.
        step_per_epoch (int): steps per epoch.
        decay_epoch (int): epochs per decay period.
        is_stair (bool): decay once every ``decay_epoch`` epochs. Default: False.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: ints that should be floats (or the reverse), or a non-bool ``is_stair``.
        ValueError: non-positive values.

    Examples:
        >>> inverse_decay_lr(0.1, 0.5, 6, 1, 1, True)
        [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333, 0.028571428571428574]
    """
    _check_decay_inputs(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch, is_stair,
                        'inverse_decay_lr')
    if is_stair:
        return [learning_rate / (1 + decay_rate * math.floor(epoch / decay_epoch))
                for epoch in _epochs(total_step, step_per_epoch)]
    return [learning_rate / (1 + decay_rate * epoch / decay_epoch) for epoch in _epochs(total_step, step_per_epoch)]


def cosine_decay_lr(min_lr: float, max_lr: float, total_step: int, step_per_epoch: int,
                    decay_epoch: int) -> list[float]:
    r"""Cosine decay: :math:`lr_i = min\_lr + 0.5 (max\_lr - min\_lr)(1 + \cos(\pi \cdot t / decay\_epoch))`,
    :math:`t = \min(current\_epoch, decay\_epoch)`.

    Args:
        min_lr (float): the final rate, >= 0.
        max_lr (float): the initial rate, > ``min_lr``.
        total_step (int): number of steps.
        step_per_epoch (int): steps per epoch.
        decay_epoch (int): epochs to decay over.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: ``min_lr`` or ``max_lr`` not a float; counts not ints.
        ValueError: ``min_lr`` < 0, ``max_lr`` <= ``min_lr``, non-positive counts.

    Examples:
        >>> cosine_decay_lr(0.01, 0.1, 6, 2, 2)
        [0.1, 0.1, 0.05500000000000001, 0.05500000000000001, 0.01, 0.01]
    """
    name = 'cosine_decay_lr'
    check_non_negative_float(min_lr, 'min_lr', name)
    check_float(max_lr, 'max_lr', name)
    _check_steps(total_step, step_per_epoch, name)
    check_positive_int(decay_epoch, 'decay_epoch', name)
    if min_lr >= max_lr:
        raise ValueError(f"For '{name}', the 'max_lr' should be greater than the 'min_lr', "
                         f"but got 'max_lr' value: {max_lr}, 'min_lr' value: {min_lr}.")
    delta = 0.5 * (max_lr - min_lr)
    return [min_lr + delta * (1 + math.cos(math.pi * min(epoch, decay_epoch) / decay_epoch))
            for epoch in _epochs(total_step, step_per_epoch)]


def polynomial_decay_lr(learning_rate: float, end_learning_rate: float, total_step: int, step_per_epoch: int,
                        decay_epoch: int, power: float, update_decay_epoch: bool = False) -> list[float]:
    r"""Polynomial decay:
    :math:`lr_i = (learning\_rate - end\_learning\_rate)(1 - t / T)^{power} + end\_learning\_rate`,
    :math:`t = \min(current\_epoch, decay\_epoch)` and :math:`T = decay\_epoch`; with
    ``update_decay_epoch``, :math:`t = current\_epoch` and
    :math:`T = decay\_epoch \cdot \max(\lceil current\_epoch / decay\_epoch \rceil, 1)`.

    Args:
        learning_rate (float): initial rate, > 0.
        end_learning_rate (float): final rate, >= 0.
        total_step (int): number of steps.
        step_per_epoch (int): steps per epoch.
        decay_epoch (int): epochs to decay over.
        power (float): > 0.
        update_decay_epoch (bool): restart the decay every ``decay_epoch`` epochs. Default: False.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: float arguments given as ints, counts not ints, a non-bool ``update_decay_epoch``.
        ValueError: out-of-range values.

    Examples:
        >>> polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5)
        [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01]
    """
    name = 'polynomial_decay_lr'
    check_float(learning_rate, 'learning_rate', name)
    check_non_negative_float(end_learning_rate, 'end_learning_rate', name)
    check_float(power, 'power', name)
    _check_steps(total_step, step_per_epoch, name)
    check_positive_int(decay_epoch, 'decay_epoch', name)
    check_bool(update_decay_epoch, 'update_decay_epoch', name)
    delta = learning_rate - end_learning_rate
    rates = []
    for epoch in _epochs(total_step, step_per_epoch):
        if update_decay_epoch:
            period, done = decay_epoch * max(math.ceil(epoch / decay_epoch), 1), epoch
        else:
            period, done = decay_epoch, min(epoch, decay_epoch)
        rates.append(delta * (1 - done / period) ** power + end_learning_rate)
    return rates


def warmup_lr(learning_rate: float, total_step: int, step_per_epoch: int, warmup_epoch: int) -> list[float]:
    r"""Linear warm-up: :math:`lr_i = learning\_rate \cdot \min(current\_epoch, warmup\_epoch) / warmup\_epoch`.

    Args:
        learning_rate (float): the rate reached after warm-up, >= 0.
        total_step (int): number of steps.
        step_per_epoch (int): steps per epoch.
        warmup_epoch (int): epochs of warm-up.

    Returns:
        list[float] of length ``total_step``.

    Raises:
        TypeError: ``learning_rate`` not a float; counts not ints.
        ValueError: ``learning_rate`` < 0; non-positive counts.

    Examples:
        >>> warmup_lr(0.1, 6, 2, 2)
        [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]
    """
    name = 'warmup_lr'
    check_non_negative_float(learning_rate, 'learning_rate', name)
    check_positive_int(warmup_epoch, 'warmup_epoch', name)
    _check_steps(total_step, step_per_epoch, name)
    return [learning_rate * min(epoch, warmup_epoch) / warmup_epoch for epoch in _epochs(total_step, step_per_epoch)]
