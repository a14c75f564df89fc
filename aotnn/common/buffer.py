"""Buffer: a Tensor that belongs to a Cell's state but is not trained (MindSpore's ``nn.Buffer``)."""
from __future__ import annotations

from typing import Any

from .tensor import Tensor


class Buffer(Tensor):
    """Non-trainable Cell state. Inside a compiled graph it is an input like a parameter, so
    changing its value never needs a recompile.

    Args:
        data: the initial value (Tensor, numpy array, number or list).
    """

    def __init__(self, data: Any):
        super().__init__(data.asnumpy() if isinstance(data, Tensor) else data)
        self.name = "buffer"  # set to the attribute name when a Cell takes it
