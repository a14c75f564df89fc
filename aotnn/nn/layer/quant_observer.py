"""The fake-quantization observer of quantization-aware training (FakeQuantWithMinMaxObserver) and the
observer factories a network is built with (QuantConfig, quant_config_default).

Attribute names follow MindSpore (``minq``, ``maxq``): exporters and checkpoints rely on them.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any

import numpy as np

from ... import ops
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...compression.common import QuantDtype
from ..cell import Cell
from ._checks import check_bool, strict_positive_int

__all__ = ['FakeQuantWithMinMaxObserver', 'QuantConfig', 'quant_config_default']


def _partial_init(cls_or_self, **kwargs) -> functools.partial:
    """A factory of ``cls_or_self`` with ``kwargs`` bound (later keywords override them)."""
    return functools.partial(cls_or_self, **kwargs)


class _Observer(Cell):
    """Base class of observers, the cells that watch a tensor's range and fake-quantize it."""

    partial_init = classmethod(_partial_init)

    def __init__(self, quant_dtype: QuantDtype):
        super().__init__()
        if not isinstance(quant_dtype, QuantDtype):
            raise TypeError(f"For '{type(self).__name__}', the 'quant_dtype' must be a QuantDtype, "
                            f"but got {type(quant_dtype).__name__}.")
        self.quant_dtype = quant_dtype

    def extend_repr(self) -> str:
        return f"quant_dtype={self.quant_dtype}"


class UniformQuantObserver(_Observer):
    """Base class of observers quantizing onto a uniform integer grid."""

    def __init__(self, quant_dtype=QuantDtype.INT8, per_channel=False, symmetric=False, narrow_range=False,
                 num_channels=1):
        super().__init__(quant_dtype)
        cls = type(self).__name__
        self.per_channel = check_bool(per_channel, "per_channel", cls)
        self.symmetric = check_bool(symmetric, "symmetric", cls)
        self.narrow_range = check_bool(narrow_range, "narrow_range", cls)
        self.num_channels = strict_positive_int(num_channels, "num_channels", cls)


class FakeQuantWithMinMaxObserver(UniformQuantObserver):
    r"""Fake quantization with a min/max observer (MindSpore's 'DEFAULT' mode).

    In training the range is observed on every call (and written to ``minq``/``maxq``):

    .. math::
        x_{min} = \min(\min(X), 0) \text{ (ema=False)}, \quad \min((1 - c) \min(X) + c\, x_{min}, 0) \text{ (ema)}

    and likewise ``x_max`` with ``max``. The range is nudged so that 0 is a level: ``scale = (x_max -
    x_min) / (Q_max - Q_min)``, ``zp = floor(clamp(Q_min - x_min / scale, Q_min, Q_max) + 0.5)``,
    ``u_min = (Q_min - zp) scale``, ``u_max = (Q_max - zp) scale``; the output is
    ``floor((clamp(X, u_min, u_max) - u_min) / scale + 0.5) * scale + u_min``. ``Q_min, Q_max`` come from
    ``quant_dtype`` (-128, 127 for INT8), ``Q_min + 1`` with ``narrow_range``. ``symmetric`` first widens
    the range to ``[-m, m]``, ``m = max(|x_min|, x_max)`` (as MindSpore's kernels do). Gradients pass
    straight through inside ``[u_min, u_max]`` and are zero outside; ``minq``/``maxq`` are not trained.

    Args:
        min_init (Union[int, float, list]): initial minimum (a list: one per channel). Default: -6.
        max_init (Union[int, float, list]): initial maximum. Default: 6.
        ema (bool): average the observed range with ``ema_decay``. Default: False.
        ema_decay (float): the weight of the previous range. Default: 0.999.
        per_channel (bool): one range per channel along ``channel_axis``. Default: False.
        channel_axis (int): the channel axis for ``per_channel``. Default: 1.
        num_channels (int): the number of channels for ``per_channel``. Default: 1.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.
        symmetric (bool): a range symmetric around 0. Default: False.
        narrow_range (bool): leave out the lowest level. Default: False.
        quant_delay (int): training steps (calls) before quantization starts. Default: 0.
        neg_trunc (bool): negative truncation, used by 'LEARNED_SCALE' mode only. Default: False.
        mode (str): 'DEFAULT' or 'LEARNED_SCALE' (not supported by aotnn). Default: 'DEFAULT'.

    Inputs:
        - **x** (Tensor) - float input, preferably 2-D or 4-D.

    Outputs:
        Tensor of the shape and dtype of ``x``.

    Raises:
        TypeError: ``min_init`` or ``max_init`` is not an int, float or list; ``quant_delay`` is not an int;
            a flag is not a bool; ``quant_dtype`` is not a QuantDtype.
        ValueError: ``quant_delay`` is negative; ``min_init`` is not less than ``max_init``; a list has the
            wrong length; ``mode`` is neither 'DEFAULT' nor 'LEARNED_SCALE'; LEARNED_SCALE without
            ``symmetric`` (or without ``narrow_range`` unless ``neg_trunc``).
        NotImplementedError: ``mode`` is 'LEARNED_SCALE'.

    Examples:
        >>> fake_quant = nn.FakeQuantWithMinMaxObserver()
        >>> x = Tensor(np.array([[1, 2, 1], [-2, 0, -1]]), mindspore.float32)
        >>> print(fake_quant(x))
        [[ 0.9882353  1.9764706  0.9882353]
         [-1.9764706  0.        -0.9882353]]
    """

    def __init__(self, min_init=-6, max_init=6, ema=False, ema_decay=0.999, per_channel=False, channel_axis=1,
                 num_channels=1, quant_dtype=QuantDtype.INT8, symmetric=False, narrow_range=False, quant_delay=0,
                 neg_trunc=False, mode="DEFAULT"):
        super().__init__(quant_dtype=quant_dtype, per_channel=per_channel, symmetric=symmetric,
                         narrow_range=narrow_range, num_channels=num_channels)
        cls = type(self).__name__
        for name, value in (("min_init", min_init), ("max_init", max_init)):
            if isinstance(value, bool) or not isinstance(value, (int, float, list)):
                raise TypeError(f"For '{cls}', the '{name}' must be an int, float or list, "
                                f"but got {type(value).__name__}.")
        if isinstance(quant_delay, bool) or not isinstance(quant_delay, int):
            raise TypeError(f"For '{cls}', the 'quant_delay' must be int, but got {type(quant_delay).__name__}.")
        if quant_delay < 0:
            raise ValueError(f"For '{cls}', the 'quant_delay' must be non-negative, but got {quant_delay}.")
        if isinstance(channel_axis, bool) or not isinstance(channel_axis, int):
            raise TypeError(f"For '{cls}', the 'channel_axis' must be int, but got {type(channel_axis).__name__}.")
        self.ema = check_bool(ema, "ema", cls)
        self.neg_trunc = check_bool(neg_trunc, "neg_trunc", cls)
        if isinstance(ema_decay, bool) or not isinstance(ema_decay, (int, float)) or not 0 <= ema_decay <= 1:
            raise ValueError(f"For '{cls}', the 'ema_decay' must be a float in [0, 1], but got {ema_decay!r}.")
        if mode not in ("DEFAULT", "LEARNED_SCALE"):
            raise ValueError(f"For '{cls}', the 'mode' must be 'DEFAULT' or 'LEARNED_SCALE', but got {mode!r}.")
        if mode == "LEARNED_SCALE":
            if not symmetric:
                raise ValueError(f"For '{cls}', LEARNED_SCALE mode needs 'symmetric' True.")
            if not neg_trunc and not narrow_range:
                raise ValueError(f"For '{cls}', LEARNED_SCALE mode needs 'narrow_range' True unless 'neg_trunc'.")
            raise NotImplementedError(f"For '{cls}', mode 'LEARNED_SCALE' is not supported by aotnn; use 'DEFAULT'.")
        self.min_init, self.max_init = min_init, max_init
        self.ema_decay = float(ema_decay)
        self.channel_axis = channel_axis
        self.quant_delay = quant_delay
        self.mode = mode
        self.num_bits = quant_dtype.num_bits
        min_array, max_array = self._init_array(min_init, "min_init"), self._init_array(max_init, "max_init")
        if not np.greater(max_array, min_array).all():
            raise ValueError(f"For '{cls}', the 'min_init' must be less than 'max_init', "
                             f"but got {min_init!r} and {max_init!r}.")
        self.minq = Parameter(Tensor(min_array), name="quant_min", requires_grad=False)
        self.maxq = Parameter(Tensor(max_array), name="quant_max", requires_grad=False)
        if quant_delay > 0:  # counts training calls, as the kernel's internal global step
            self.step = Parameter(Tensor(np.zeros((1,), np.int32)), name="step", requires_grad=False)

    def _init_array(self, value: Any, name: str) -> np.ndarray:
        count = self.num_channels if self.per_channel else 1
        if isinstance(value, list):
            if len(value) != count:
                raise ValueError(f"For '{type(self).__name__}', the '{name}' list must have {count} items, "
                                 f"but got {len(value)}.")
            return np.array(value, np.float32)
        return np.full((count,), value, np.float32)

    @property
    def quant_range(self) -> tuple[int, int]:
        """The integer levels (Q_min, Q_max) this observer quantizes onto."""
        low, high = self.quant_dtype.range
        return (low + 1 if self.narrow_range else low), high

    def reset(self, quant_dtype=QuantDtype.INT8, min_init=-6, max_init=6) -> None:
        """Reset the quant dtype and the range (MindSpore allows it only in LEARNED_SCALE mode).

        Raises:
            ValueError: the mode is 'DEFAULT'.
        """
        raise ValueError(f"For '{type(self).__name__}', 'reset' is only supported in LEARNED_SCALE mode.")

    def extend_repr(self) -> str:
        return (f"quant_dtype={self.quant_dtype}, symmetric={self.symmetric}, narrow_range={self.narrow_range}, "
                f"ema={self.ema}({self.ema_decay}), per_channel={self.per_channel}({self.channel_axis}, "
                f"{self.num_channels}), quant_delay={self.quant_delay}, min_init={self.min_init}, "
                f"max_init={self.max_init}")

    def construct(self, x):
        axis = self.channel_axis if self.per_channel else None
        low, high = self.quant_range
        if not self.training:
            return ops.fake_quant(x, self.minq, self.maxq, low, high, self.symmetric, axis)
        new_min, new_max = ops.minmax_update(x, self.minq, self.maxq, self.ema, self.ema_decay, axis)
        ops.assign(self.minq, new_min)
        ops.assign(self.maxq, new_max)
        if self.quant_delay == 0:
            return ops.fake_quant(x, new_min, new_max, low, high, self.symmetric, axis)
        out = ops.fake_quant(x, new_min, new_max, low, high, self.symmetric, axis, self.step, self.quant_delay)
        ops.assign(self.step, self.step + 1)
        return out


QuantConfig = namedtuple("QuantConfig", ['weight', 'activation'])
QuantConfig.__doc__ = """The observer factories of a quantization-aware network: ``weight`` and ``activation``."""

quant_config_default = QuantConfig(weight=FakeQuantWithMinMaxObserver.partial_init(),
                                   activation=FakeQuantWithMinMaxObserver.partial_init())
