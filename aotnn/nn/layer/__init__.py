"""Layers, one family per file."""
from .activation import ReLU, Softmax
from .basic import Dense, Flatten
from .conv import Conv2d
from .normalization import BatchNorm2d
from .pooling import AvgPool2d, MaxPool2d

_ACTIVATIONS = {"relu": ReLU, "softmax": Softmax}


def get_activation(name: str, prim_name: str | None = None):
    """The activation Cell called ``name`` ('relu', 'softmax', ...), or None for None.

    Raises:
        KeyError: unknown name; the message lists the known ones.
    """
    if name is None:
        return None
    if not isinstance(name, str) or name.lower() not in _ACTIVATIONS:
        raise KeyError(f"name: expected one of {sorted(_ACTIVATIONS)}, got {name!r}")
    return _ACTIVATIONS[name.lower()]()
