"""MindSpore's functional activations (``ops.gelu``, ``ops.elu``...): each names a lowering rule.

``relu``, ``relu6``, ``sigmoid``, ``tanh``, ``softmax`` and ``log_softmax`` live in ``functional.py``.
"""
from __future__ import annotations

from typing import Any

from ..common.tensor import Tensor
from ._dispatch import apply
from .functional import select, softmax

__all__ = ['selu', 'glu', 'gelu', 'fast_gelu', 'elu', 'celu', 'leaky_relu', 'prelu', 'hardswish', 'hardsigmoid',
           'hardshrink', 'softshrink', 'logsigmoid', 'softplus', 'silu', 'mish', 'softsign', 'hardtanh',
           'threshold', 'softmin']


def check_float_input(x: Any, op: str, name: str = "x") -> None:
    """Raise TypeError unless ``x`` is a float Tensor (MindSpore's activations take float16/float32)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_float:
        raise TypeError(f"{op}: {name} must have a float dtype (float16 or float32), got {x.dtype}")


def _check_number(value: Any, op: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{op}: {name} must be a float or an int, got {type(value).__name__}")
    return float(value)


def gelu(input, approximate: str = 'none'):  # noqa: A002 (MindSpore's argument name)
    """Gaussian error linear unit: ``x * P(X <= x)`` with ``X ~ N(0, 1)``.

    Args:
        input (Tensor): float16 or float32.
        approximate (str): 'none' (the exact erf form) or 'tanh'
            (``0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3)))``). Default: 'none'.

    Raises:
        TypeError: ``input`` is not a float Tensor.
        ValueError: ``approximate`` is neither 'none' nor 'tanh'.
    """
    check_float_input(input, "gelu", "input")
    if approximate not in ('none', 'tanh'):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return apply("gelu", input, approximate == 'tanh')


def fast_gelu(x):
    """``x / (1 + exp(-1.702|x|)) * exp(0.851(x - |x|))``."""
    check_float_input(x, "fast_gelu")
    return apply("fast_gelu", x)


def elu(input_x, alpha: float = 1.0):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    check_float_input(input_x, "elu", "input_x")
    return apply("elu", input_x, _check_number(alpha, "elu", "alpha"))


def celu(x, alpha: float = 1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Raises:
        ValueError: ``alpha`` is 0.
    """
    check_float_input(x, "celu")
    alpha = _check_number(alpha, "celu", "alpha")
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0, got 0")
    return apply("celu", x, alpha)


def leaky_relu(input, alpha: float = 0.2):  # noqa: A002
    """``x`` for ``x >= 0``, else ``alpha * x``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"leaky_relu: input must be a Tensor, got {type(input).__name__}")
    return apply("leaky_relu", input, _check_number(alpha, "leaky_relu", "alpha"))


def prelu(x, weight):
    """``x`` for ``x >= 0``, else ``weight[c] * x`` with ``c`` the channel (axis 1).

    Args:
        x (Tensor): float input, (N, C, ...).
        weight (Tensor): 1-D, C elements or one shared element.

    Raises:
        TypeError: ``x`` or ``weight`` is not a float Tensor.
        ValueError: ``weight`` is not 1-D or its size is neither 1 nor C.
    """
    check_float_input(x, "prelu")
    check_float_input(weight, "prelu", "weight")
    channels = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim == 1 else 1)
    if weight.ndim != 1 or weight.shape[0] not in (1, channels):
        raise ValueError(f"prelu: weight must be 1-D with 1 or {channels} elements, got shape {weight.shape}")
    return apply("prelu", x, weight)


def hardswish(x):
    """``x * relu6(x + 3) / 6``."""
    check_float_input(x, "hardswish")
    return apply("hswish", x)


def hardsigmoid(input):  # noqa: A002
    """``max(0, min(1, (x + 3) / 6))``."""
    check_float_input(input, "hardsigmoid", "input")
    return apply("hsigmoid", input)


def hardshrink(x, lambd: float = 0.5):
    """``x`` where ``|x| > lambd``, else 0."""
    check_float_input(x, "hardshrink")
    return apply("hshrink", x, _check_number(lambd, "hardshrink", "lambd"))


def softshrink(x, lambd: float = 0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Raises:
        ValueError: ``lambd`` is negative.
    """
    check_float_input(x, "softshrink")
    lambd = _check_number(lambd, "softshrink", "lambd")
    if lambd < 0:
        raise ValueError(f"softshrink: lambd must be no less than 0, got {lambd}")
    return apply("softshrink", x, lambd)


def logsigmoid(x):
    """``log(1 / (1 + exp(-x)))``."""
    check_float_input(x, "logsigmoid")
    return apply("logsigmoid", x)


def softplus(input, beta: float = 1, threshold: float = 20):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``; ``x`` itself where ``beta * x > threshold``."""
    check_float_input(input, "softplus", "input")
    beta = _check_number(beta, "softplus", "beta")
    threshold = _check_number(threshold, "softplus", "threshold")
    scaled = input if beta == 1 else input * beta
    soft = apply("softplus", scaled) if beta == 1 else apply("softplus", scaled) / beta
    return select(scaled > threshold, input, soft)


def silu(x):
    """``x * sigmoid(x)``."""
    check_float_input(x, "silu")
    return apply("silu", x)


def mish(x):
    """``x * tanh(log(1 + exp(x)))``."""
    check_float_input(x, "mish")
    return apply("mish", x)


def softsign(x):
    """``x / (1 + |x|)``."""
    check_float_input(x, "softsign")
    return apply("softsign", x)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0):  # noqa: A002
    """``min(max(x, min_val), max_val)``.

    Raises:
        ValueError: ``max_val`` is less than ``min_val``.
    """
    check_float_input(input, "hardtanh", "input")
    min_val = _check_number(min_val, "hardtanh", "min_val")
    max_val = _check_number(max_val, "hardtanh", "max_val")
    if max_val < min_val:
        raise ValueError(f"hardtanh: max_val must be >= min_val={min_val}, got {max_val}")
    return apply("hardtanh", input, min_val, max_val)


def threshold(input, thr: float, value: float):  # noqa: A002
    """``x`` where ``x > thr``, else ``value``."""
    check_float_input(input, "threshold", "input")
    return apply("threshold", input, _check_number(thr, "threshold", "thr"),
                 _check_number(value, "threshold", "value"))


def softmin(x, axis: int = -1):
    """``softmax(-x)`` along ``axis``."""
    check_float_input(x, "softmin")
    return softmax(-x, axis)


_SELU_ALPHA = 1.67326324235437728481
_SELU_SCALE = 1.05070098735548049342


def selu(input_x):
    """Scaled ELU: ``scale * (x if x > 0 else alpha * (exp(x) - 1))`` with alpha = 1.6732632423543772848
    and scale = 1.0507009873554804934.

    Raises:
        TypeError: input_x not a float16/float32 Tensor.
    """
    check_float_input(input_x, "selu", "input_x")
    return apply("mul", apply("elu", input_x, _SELU_ALPHA), _SELU_SCALE)


def glu(x, axis: int = -1):
    """Gated linear unit: split ``x`` in halves a, b along ``axis``, return ``a * sigmoid(b)``.

    Raises:
        TypeError: x not a float16/float32 Tensor, axis not an int.
        ValueError: the axis length is odd.
    """
    from .array_ops import split

    check_float_input(x, "glu", "x")
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"glu: axis must be an int, got {type(axis).__name__}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"glu: axis must be in [{-x.ndim}, {x.ndim}), got {axis}")
    if x.shape[axis] % 2:
        raise ValueError(f"glu: the length of axis {axis} must be even, got shape {x.shape}")
    a, b = split(x, x.shape[axis] // 2, axis)
    return apply("mul", a, apply("sigmoid", b))
