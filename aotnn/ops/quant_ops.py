"""Fake quantization ops behind the quantization-aware layers (``nn.FakeQuantWithMinMaxObserver``)."""
from __future__ import annotations

from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['fake_quant', 'minmax_update']


def _check_range(x, minq, maxq, channel_axis, op: str) -> None:
    for name, value in (("x", x), ("minq", minq), ("maxq", maxq)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")
        if not value.dtype.is_float:
            raise TypeError(f"{op}: {name} must have a float dtype, got {value.dtype}")
    if minq.ndim != 1 or tuple(minq.shape) != tuple(maxq.shape):
        raise ValueError(f"{op}: minq and maxq must be 1-D of one shape, got {minq.shape} and {maxq.shape}")
    if channel_axis is None:
        if minq.shape[0] != 1:
            raise ValueError(f"{op}: per-layer minq and maxq must have shape (1,), got {minq.shape}")
    elif not -x.ndim <= channel_axis < x.ndim or x.shape[channel_axis] != minq.shape[0]:
        raise ValueError(f"{op}: minq and maxq must have x.shape[channel_axis] items, got {minq.shape} "
                         f"for x of shape {x.shape} and channel_axis {channel_axis}")


def fake_quant(x, minq, maxq, quant_min=-128, quant_max=127, symmetric=False, channel_axis=None, step=None,
               quant_delay=0):
    r"""Quantize and dequantize ``x`` on the integer grid ``[quant_min, quant_max]`` spanning ``[minq, maxq]``.

    MindSpore's FakeQuantPerLayer (``channel_axis=None``) and FakeQuantPerChannel: the range is nudged so
    that 0 is exactly representable, ``x`` is clamped to it and rounded to the nearest level. The gradient
    passes straight through inside the nudged range and is zero outside.

    Args:
        x (Tensor): float input.
        minq (Tensor): range minima, shape (1,) or (C,) with C = ``x.shape[channel_axis]``.
        maxq (Tensor): range maxima, same shape.
        quant_min (int): smallest integer level. Default: -128.
        quant_max (int): largest integer level. Default: 127.
        symmetric (bool): use ``[-m, m]`` with ``m = max(|minq|, maxq)``. Default: False.
        channel_axis (int): the axis of per-channel ranges; None for one range. Default: None.
        step (Tensor): int32 (1,) step counter for ``quant_delay``. Default: None.
        quant_delay (int): while ``step < quant_delay`` the input passes unchanged. Default: 0.

    Returns:
        Tensor of the shape and dtype of ``x``.

    Raises:
        TypeError: ``x``, ``minq`` or ``maxq`` is not a float Tensor.
        ValueError: ``minq``/``maxq`` do not match ``x`` and ``channel_axis``; ``quant_min >= quant_max``.
    """
    _check_range(x, minq, maxq, channel_axis, "fake_quant")
    if not quant_min < quant_max:
        raise ValueError(f"fake_quant: quant_min must be less than quant_max, got {quant_min} and {quant_max}")
    return apply("fake_quant", x, minq, maxq, step, quant_min=float(quant_min), quant_max=float(quant_max),
                 symmetric=bool(symmetric), channel_axis=channel_axis, quant_delay=int(quant_delay))


def minmax_update(x, minq, maxq, ema=False, ema_decay=0.999, channel_axis=None):
    r"""The observed range of ``x``: MindSpore's MinMaxUpdatePerLayer / MinMaxUpdatePerChannel.

    .. math::
        x_{min} = \min(c \cdot minq + (1 - c) \min(X), 0) \text{ with ema, else } \min(\min(X), 0)

    and likewise for the maximum (``c`` = ``ema_decay``).

    Args:
        x (Tensor): float input.
        minq (Tensor): current minima, (1,) or (C,).
        maxq (Tensor): current maxima, same shape.
        ema (bool): average with the current range. Default: False.
        ema_decay (float): the weight of the current range. Default: 0.999.
        channel_axis (int): axis of per-channel ranges; None for one range. Default: None.

    Returns:
        Tuple of two Tensors (new minima, new maxima), shaped like ``minq``.

    Raises:
        TypeError: ``x``, ``minq`` or ``maxq`` is not a float Tensor.
        ValueError: ``minq``/``maxq`` do not match ``x`` and ``channel_axis``.
    """
    _check_range(x, minq, maxq, channel_axis, "minmax_update")
    return apply("minmax_update", x, minq, maxq, ema=bool(ema), ema_decay=float(ema_decay),
                 channel_axis=channel_axis)
