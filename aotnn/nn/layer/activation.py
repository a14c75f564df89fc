"""Activation layers and ``get_activation``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.activation_ops import check_float_input
from ..cell import Cell

__all__ = ['SeLU', 'GLU', 'CELU', 'ELU', 'FastGelu', 'GELU', 'HShrink', 'HSigmoid', 'HSwish', 'LeakyReLU', 'LogSigmoid',
           'LogSoftmax', 'PReLU', 'ReLU', 'ReLU6', 'Sigmoid', 'Softmax', 'SoftShrink', 'Tanh',
           'Softmin', 'Softmax2d', 'SiLU', 'Tanhshrink', 'Hardtanh', 'Softsign', 'Mish', 'RReLU', 'Threshold',
           'get_activation']


def _number(value: Any, name: str, cls: str, floats_only: bool = False) -> float:
    allowed = (float,) if floats_only else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed):
        kind = "a float" if floats_only else "a float or an int"
        raise TypeError(f"{cls}: {name} must be {kind}, got {type(value).__name__}")
    return float(value)


def _axis(axis: Any, cls: str) -> int:
    """An int axis (or a one-element tuple/list holding one), as MindSpore's softmax layers take."""
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            raise ValueError(f"{cls}: axis as a tuple must hold exactly one int, got {axis!r}")
        axis = axis[0]
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{cls}: axis must be an int or a tuple of one int, got {type(axis).__name__}")
    return axis


def _check_axis_range(axis: int, x, cls: str) -> None:
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"{cls}: axis must be in [{-x.ndim}, {x.ndim}), got {axis}")


class _FloatElementwise(Cell):
    """``_fn(x)`` for a float16/float32 ``x`` (TypeError otherwise)."""
    _fn = None

    def construct(self, x):
        check_float_input(x, type(self).__name__)
        return type(self)._fn(x)


class ReLU(Cell):
    """Rectified linear unit: ``max(0, x)`` element-wise.

    Inputs:
        - **x** (Tensor) - any number type and shape.
    """

    def construct(self, x):
        return ops.relu(x)


class ReLU6(_FloatElementwise):
    """``min(max(0, x), 6)`` element-wise.

    Raises:
        TypeError: x is not float16 or float32.
    """
    _fn = staticmethod(ops.relu6)


class Sigmoid(_FloatElementwise):
    """``1 / (1 + exp(-x))`` element-wise.

    Raises:
        TypeError: x is not float16 or float32.
    """
    _fn = staticmethod(ops.sigmoid)


class Tanh(_FloatElementwise):
    """Hyperbolic tangent element-wise.

    Raises:
        TypeError: x is not float16 or float32.
    """
    _fn = staticmethod(ops.tanh)


class Softmax(Cell):
    """``exp(x_i) / sum_j exp(x_j)`` along ``axis``.

    Args:
        axis (Union[int, tuple[int]]): the axis (an int or a one-element tuple). Default: -1.

    Raises:
        TypeError: ``axis`` is neither an int nor a tuple; x is not float16 or float32.
        ValueError: ``axis`` is a tuple of other than one element, or out of [-x.ndim, x.ndim).
    """

    def __init__(self, axis: int | tuple[int] = -1):
        super().__init__()
        self.axis = _axis(axis, type(self).__name__)

    def construct(self, x):
        check_float_input(x, type(self).__name__)
        _check_axis_range(self.axis, x, type(self).__name__)
        return ops.softmax(x, self.axis)


class Softmin(Softmax):
    """``exp(-x_i) / sum_j exp(-x_j)`` along ``axis``; arguments as :class:`Softmax`."""

    def construct(self, x):
        check_float_input(x, "Softmin")
        _check_axis_range(self.axis, x, "Softmin")
        return ops.softmax(-x, self.axis)


class Softmax2d(Cell):
    """Softmax over the channel axis of a (C, H, W) or (N, C, H, W) input (axis -3).

    Raises:
        ValueError: the input is neither 3-D nor 4-D.
    """

    def construct(self, x):
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: x must be 3-D or 4-D, got shape {x.shape}")
        check_float_input(x, "Softmax2d")
        return ops.softmax(x, -3)


class LogSoftmax(Cell):
    """``log(softmax(x))`` along ``axis``.

    Args:
        axis (int): Default: -1.

    Raises:
        TypeError: ``axis`` is not an int; x is not float16 or float32.
        ValueError: ``axis`` is out of [-x.ndim, x.ndim).
    """

    def __init__(self, axis: int = -1):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"LogSoftmax: axis must be an int, got {type(axis).__name__}")
        self.axis = axis

    def construct(self, x):
        check_float_input(x, "LogSoftmax")
        _check_axis_range(self.axis, x, "LogSoftmax")
        return ops.log_softmax(x, self.axis)


class GELU(Cell):
    """Gaussian error linear unit, ``x * P(X <= x)`` with ``X ~ N(0, 1)``.

    Args:
        approximate (bool): True: ``0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))``; False: the exact
            ``0.5x(1 + erf(x / sqrt(2)))``. Default: True.

    Raises:
        TypeError: ``approximate`` is not a bool; x is not float16 or float32.
    """

    def __init__(self, approximate: bool = True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"GELU: approximate must be a bool, got {type(approximate).__name__}")
        self.approximate = approximate

    def construct(self, x):
        return ops.gelu(x, approximate='tanh' if self.approximate else 'none')


class FastGelu(Cell):
    """``x / (1 + exp(-1.702|x|)) * exp(0.851(x - |x|))`` element-wise.

    Raises:
        TypeError: x is not float16 or float32.
    """

    def construct(self, x):
        return ops.fast_gelu(x)


class ELU(Cell):
    """Exponential linear unit: ``x`` for ``x >= 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha (float): only 1.0 is accepted, as MindSpore. Default: 1.0.

    Raises:
        TypeError: ``alpha`` is not a float; x is not float16 or float32.
        ValueError: ``alpha`` is not 1.0.
    """

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = _number(alpha, "alpha", "ELU", floats_only=True)
        if self.alpha != 1.0:
            raise ValueError(f"ELU: alpha must be 1.0, got {alpha}")

    def construct(self, x):
        return ops.elu(x, self.alpha)


class CELU(Cell):
    """Continuously differentiable ELU: ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        alpha (float): Default: 1.0.

    Raises:
        TypeError: ``alpha`` is not a float; x is not float16 or float32.
        ValueError: ``alpha`` is 0.
    """

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = _number(alpha, "alpha", "CELU", floats_only=True)
        if self.alpha == 0.0:
            raise ValueError("CELU: alpha must not be 0, got 0.0")

    def construct(self, x):
        return ops.celu(x, self.alpha)


class LeakyReLU(Cell):
    """``x`` for ``x >= 0``, else ``alpha * x``.

    Args:
        alpha (Union[int, float]): slope for negative inputs. Default: 0.2.

    Raises:
        TypeError: ``alpha`` is not a float or an int.
    """

    def __init__(self, alpha: float = 0.2):
        super().__init__()
        _number(alpha, "alpha", "LeakyReLU")
        self.alpha = alpha

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)


class PReLU(Cell):
    """Parametric ReLU: ``max(0, x) + w * min(0, x)``, ``w`` learned per channel (axis 1) or shared.

    ``w`` is kept non-negative: each call uses ``relu(w)``, and training writes that back, as
    MindSpore does. Stand-alone, the parameter is named 'a' (attribute ``w``).

    Args:
        channel (int): elements of ``w``: 1 (shared) or the input's channel count. Default: 1.
        w (Union[float, list, Tensor]): initial value: a float for every element, a list of
            ``channel`` floats, or a float16/float32 Tensor of shape (channel,). Default: 0.25.

    Raises:
        TypeError: ``channel`` is not an int, or ``w`` is not a float, list or Tensor.
        ValueError: ``channel`` < 1; a ``w`` list or Tensor of the wrong length, dtype or elements.
    """

    def __init__(self, channel: int = 1, w: float | list | Tensor = 0.25):
        super().__init__()
        if isinstance(channel, bool) or not isinstance(channel, int):
            raise TypeError(f"PReLU: channel must be an int, got {type(channel).__name__}")
        if channel < 1:
            raise ValueError(f"PReLU: channel must be at least 1, got {channel}")
        if isinstance(w, (float, np.floating)):
            value = Tensor(np.full((channel,), w, np.float32))
        elif isinstance(w, list):
            if len(w) != channel or not all(isinstance(v, (float, np.floating)) for v in w):
                raise ValueError(f"PReLU: w as a list must hold channel={channel} floats, got {w!r}")
            value = Tensor(np.asarray(w, np.float32))
        elif isinstance(w, Tensor):
            if w.dtype not in (mstype.float16, mstype.float32):
                raise ValueError(f"PReLU: w as a Tensor must be float16 or float32, got {w.dtype}")
            if w.shape != (channel,):
                raise ValueError(f"PReLU: w as a Tensor must have shape ({channel},), got {w.shape}")
            value = w
        else:
            raise TypeError(f"PReLU: w must be a float, a list or a Tensor, got {type(w).__name__}")
        self.channel = channel
        self.w = Parameter(value, name="a")

    def construct(self, x):
        check_float_input(x, "PReLU")
        if x.ndim >= 2 and self.channel not in (1, x.shape[1]):
            raise ValueError(f"PReLU: x must have channel={self.channel} channels on axis 1, got shape {x.shape}")
        w = ops.relu(self.w)
        out = ops.prelu(x, ops.cast(w, x.dtype))
        if self.training:
            ops.assign(self.w, w)
        return out


class HSwish(Cell):
    """Hard swish: ``x * relu6(x + 3) / 6``.

    Raises:
        TypeError: x is not float16 or float32.
    """

    def construct(self, x):
        return ops.hardswish(x)


class HSigmoid(Cell):
    """Hard sigmoid: ``max(0, min(1, (x + 3) / 6))``.

    Raises:
        TypeError: x is not a float Tensor.
    """

    def construct(self, input_x):
        return ops.hardsigmoid(input_x)


class LogSigmoid(Cell):
    """``log(1 / (1 + exp(-x)))`` element-wise.

    Raises:
        TypeError: x is not float16 or float32.
    """

    def construct(self, x):
        return ops.logsigmoid(x)


class SoftShrink(Cell):
    """``x - lambd`` for ``x > lambd``, ``x + lambd`` for ``x < -lambd``, else 0.

    Args:
        lambd (float): threshold, >= 0. Default: 0.5.

    Raises:
        TypeError: ``lambd`` is not a float; x is not float16 or float32.
        ValueError: ``lambd`` is negative.
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = _number(lambd, "lambd", "SoftShrink", floats_only=True)
        if self.lambd < 0:
            raise ValueError(f"SoftShrink: lambd must be no less than 0, got {lambd}")

    def construct(self, input_x):
        return ops.softshrink(input_x, self.lambd)


class HShrink(Cell):
    """Hard shrink: ``x`` where ``|x| > lambd``, else 0.

    Args:
        lambd (float): threshold. Default: 0.5.

    Raises:
        TypeError: ``lambd`` is not a float; x is not float16 or float32.
    """

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = _number(lambd, "lambd", "HShrink", floats_only=True)

    def construct(self, input_x):
        return ops.hardshrink(input_x, self.lambd)


class SiLU(Cell):
    """``x * sigmoid(x)`` element-wise."""

    def construct(self, x):
        return ops.silu(x)


class Tanhshrink(Cell):
    """``x - tanh(x)`` element-wise."""

    def construct(self, x):
        check_float_input(x, "Tanhshrink")
        return x - ops.tanh(x)


class Hardtanh(Cell):
    """``min(max(x, min_val), max_val)`` element-wise.

    Args:
        min_val (Union[int, float]): Default: -1.0.
        max_val (Union[int, float]): Default: 1.0.

    Raises:
        TypeError: ``min_val`` or ``max_val`` is not a number.
        ValueError: ``max_val`` < ``min_val``.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val = _number(min_val, "min_val", "Hardtanh")
        self.max_val = _number(max_val, "max_val", "Hardtanh")
        if self.max_val < self.min_val:
            raise ValueError(f"Hardtanh: max_val must be >= min_val={min_val}, got {max_val}")

    def construct(self, x):
        return ops.hardtanh(x, self.min_val, self.max_val)


class Softsign(Cell):
    """``x / (1 + |x|)`` element-wise."""

    def construct(self, x):
        return ops.softsign(x)


class Mish(Cell):
    """``x * tanh(log(1 + exp(x)))`` element-wise."""

    def construct(self, input_x):
        return ops.mish(input_x)


class Threshold(Cell):
    """``x`` where ``x > threshold``, else ``value``.

    Args:
        threshold (Union[int, float]): the threshold.
        value (Union[int, float]): the replacement.

    Raises:
        TypeError: ``threshold`` or ``value`` is not a number.
    """

    def __init__(self, threshold: float, value: float):
        super().__init__()
        self.threshold = _number(threshold, "threshold", "Threshold")
        self.value = _number(value, "value", "Threshold")

    def construct(self, input_x):
        return ops.threshold(input_x, self.threshold, self.value)


class RReLU(Cell):
    """Randomised leaky ReLU: ``x`` for ``x >= 0``, else ``a * x`` with ``a ~ U(lower, upper)`` drawn
    afresh for every element on every call.

    Args:
        lower (Union[int, float]): Default: 1/8.
        upper (Union[int, float]): Default: 1/3.

    Raises:
        TypeError: ``lower`` or ``upper`` is not a number; x is not a float Tensor.
        ValueError: ``lower`` > ``upper``.
    """

    def __init__(self, lower: float = 1 / 8, upper: float = 1 / 3):
        super().__init__()
        self.lower = _number(lower, "lower", "RReLU")
        self.upper = _number(upper, "upper", "RReLU")
        if self.lower > self.upper:
            raise ValueError(f"RReLU: upper must be greater than lower={lower}, got {upper}")

    def construct(self, x):
        check_float_input(x, "RReLU")
        slope = ops.cast(ops.uniform_random(x.shape) * (self.upper - self.lower) + self.lower, x.dtype)
        return ops.select(x >= 0, x, x * slope)


_activation = {
    'softmin': Softmin,
    'softmax': Softmax,
    'softmax2d': Softmax2d,
    'logsoftmax': LogSoftmax,
    'relu': ReLU,
    'relu6': ReLU6,
    'rrelu': RReLU,
    'silu': SiLU,
    'tanh': Tanh,
    'tanhshrink': Tanhshrink,
    'hardtanh': Hardtanh,
    'gelu': GELU,
    'fast_gelu': FastGelu,
    'elu': ELU,
    'sigmoid': Sigmoid,
    'softsign': Softsign,
    'prelu': PReLU,
    'leakyrelu': LeakyReLU,
    'hswish': HSwish,
    'hsigmoid': HSigmoid,
    'logsigmoid': LogSigmoid,
    'softshrink': SoftShrink,
    'hshrink': HShrink,
    'threshold': Threshold,
    'mish': Mish,
}


def get_activation(name: str | None, prim_name: str | None = None) -> Cell | None:
    """The activation Cell called ``name``, built with its defaults ('relu', 'gelu', 'prelu'...), or None for None.

    Names are MindSpore's: softmin, softmax, softmax2d, logsoftmax, relu, relu6, rrelu, silu, tanh,
    tanhshrink, hardtanh, gelu, fast_gelu, elu, sigmoid, softsign, prelu, leakyrelu, hswish,
    hsigmoid, logsigmoid, softshrink, hshrink, threshold (which needs arguments, so cannot be built
    by name), mish. Upper-case spellings are accepted too.

    Args:
        name (str): the activation's name.
        prim_name (str): the caller's name, for the error message. Default: None.

    Returns:
        Cell, or None.

    Raises:
        KeyError: an unknown name; the message lists the known ones.
        TypeError: ``name`` is neither a str nor None.
    """
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"get_activation: name must be a str or None, got {type(name).__name__}")
    key = name.lower()
    if key not in _activation:
        who = f"For '{prim_name}', the" if prim_name else "The"
        raise KeyError(f"{who} 'name' must be in {list(_activation)}, but got {name!r}")
    return _activation[key]()


class SeLU(Cell):
    """Scaled exponential linear unit: ``scale * (x if x > 0 else alpha * (exp(x) - 1))``,
    alpha = 1.6732632423543772848, scale = 1.0507009873554804934.

    Raises:
        TypeError: x is not float16 or float32.
    """

    def construct(self, input_x):
        return ops.selu(input_x)


class GLU(Cell):
    """Gated linear unit: ``x`` split in halves a, b along ``axis``; returns ``a * sigmoid(b)``.

    Args:
        axis (int): the axis split. Default: -1.

    Raises:
        TypeError: ``axis`` not an int; x not float16/float32.
        ValueError: at call time, an odd axis length.
    """

    def __init__(self, axis: int = -1):
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"For 'GLU', the 'axis' must be an int, but got {type(axis).__name__}.")
        self.dim = axis

    def construct(self, x):
        return ops.glu(x, self.dim)
