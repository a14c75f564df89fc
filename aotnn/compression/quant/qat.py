"""``create_quant_config``: the observers that quantization-aware layers build for weights and activations."""
from __future__ import annotations

from typing import Any

from ...nn.layer.quant_observer import FakeQuantWithMinMaxObserver, QuantConfig
from ..common import QuantDtype

__all__ = ['create_quant_config']


def _pair(value: Any, name: str, kinds: tuple[type, ...]) -> tuple[Any, Any]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"For 'create_quant_config', the '{name}' must be a tuple of 2 items (weight, activation), "
                        f"but got {value!r}.")
    for item in value:
        if isinstance(item, bool) and bool not in kinds or not isinstance(item, kinds):
            raise TypeError(f"For 'create_quant_config', the '{name}' items must be "
                            f"{' or '.join(k.__name__ for k in kinds)}, but got {value!r}.")
    return value[0], value[-1]


def create_quant_config(quant_observer=(FakeQuantWithMinMaxObserver, FakeQuantWithMinMaxObserver),
                        quant_delay=(0, 0),
                        quant_dtype=(QuantDtype.INT8, QuantDtype.INT8),
                        per_channel=(False, False),
                        symmetric=(False, False),
                        narrow_range=(False, False),
                        mode="DEFAULT") -> QuantConfig:
    """Configure the observers of quantization-aware training.

    Each argument is a pair: (weights, activations).

    Args:
        quant_observer (tuple[type]): observer classes. Default: (FakeQuantWithMinMaxObserver,) * 2.
        quant_delay (tuple[int]): steps before quantization starts. Default: (0, 0).
        quant_dtype (tuple[QuantDtype]): target integer types. Default: (QuantDtype.INT8, QuantDtype.INT8).
        per_channel (tuple[bool]): per-channel ranges; activations must be per layer. Default: (False, False).
        symmetric (tuple[bool]): symmetric ranges. Default: (False, False).
        narrow_range (tuple[bool]): drop the lowest integer level. Default: (False, False).
        mode (str): "DEFAULT" (QAT) or "LEARNED_SCALE". Default: "DEFAULT".

    Returns:
        QuantConfig, a namedtuple of two observer factories (``weight``, ``activation``).

    Raises:
        TypeError: an argument is not a pair of the documented types.
        ValueError: the activation is per channel, or ``mode`` is unknown.
    """
    weight_observer, act_observer = _pair(quant_observer, "quant_observer", (type,))
    delays = _pair(quant_delay, "quant_delay", (int,))
    dtypes = _pair(quant_dtype, "quant_dtype", (QuantDtype,))
    channels = _pair(per_channel, "per_channel", (bool,))
    symmetrics = _pair(symmetric, "symmetric", (bool,))
    narrows = _pair(narrow_range, "narrow_range", (bool,))
    if channels[1]:
        raise ValueError("For 'create_quant_config', the second element of 'per_channel' (activations) must be "
                         "False, but got True.")
    if mode not in ("DEFAULT", "LEARNED_SCALE"):
        raise ValueError(f"For 'create_quant_config', the 'mode' must be 'DEFAULT' or 'LEARNED_SCALE', "
                         f"but got {mode!r}.")
    weight = weight_observer.partial_init(quant_delay=delays[0], quant_dtype=dtypes[0], per_channel=channels[0],
                                          symmetric=symmetrics[0], narrow_range=narrows[0], mode=mode)
    activation = act_observer.partial_init(quant_delay=delays[1], quant_dtype=dtypes[1], per_channel=channels[1],
                                           symmetric=symmetrics[1], narrow_range=narrows[1], mode=mode)
    return QuantConfig(weight=weight, activation=activation)
