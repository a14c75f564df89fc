"""Integer hand-over between the cells of a converted int8 network, and the integer form of an unfused ActQuant.

A cell that quantizes onto a grid and returns the float dequantization (an int8 layer with a fused
activation, a :class:`QuantizedActivation`) offers its 8-bit integers in a :class:`Handover` shared by
the network's cells. An int8 layer whose input is that very float tensor (the same Tensor object, so
the same value in this call) on the same grid takes the integers instead of quantizing the float again:
``quantize(dequantize(q)) == q`` exactly (``|q - zero_point| <= 255``: the float32 round trip stays
within 1e-4 of ``q``). In a captured graph the float dequantization then has only float consumers
(an addition's other operand), which fuse it into their own kernel: 8-bit tensors cross the kernels.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...nn.cell import Cell
from ... import ops

__all__ = ["Handover", "QuantizedActivation", "grid_key"]


def grid_key(scale: float, zero_point: int, dtype: str) -> tuple:
    """What two grids share when their integers mean the same reals: float32 scale, zero point, dtype."""
    return float(np.float32(scale)), int(zero_point), str(dtype)


class Handover:
    """The integers behind float tensors produced in the current call, one slot per producing cell."""

    def __init__(self) -> None:
        self.slots: dict[int, tuple[Any, Any, tuple, int, int]] = {}

    def offer(self, producer: Cell, out: Any, q: Any, key: tuple, low: int, high: int) -> None:
        """``producer`` returned ``out``, the dequantization of ``q`` (values in [low, high]) on grid ``key``."""
        self.slots[id(producer)] = (out, q, key, low, high)

    def take(self, x: Any, key: tuple, qmin: int, qmax: int) -> Any:
        """The integers behind ``x`` on grid ``key`` if a producer offered them and they lie in [qmin, qmax]."""
        for out, q, offered_key, low, high in self.slots.values():
            if out is x and offered_key == key and qmin <= low and high <= qmax:
                return q
        return None


class QuantizedActivation(Cell):
    """An ``ActQuant`` that no layer's requantization absorbed (one after an addition), as integers: the
    activation is the clamp of its uint8/int8 grid, the integers are offered to the int8 layers reading
    this output, and the float dequantization is returned for the other consumers.

    Args:
        scale (float): the grid's scale.
        zero_point (int): the grid's zero point.
        low (int), high (int): the clamp on the integer grid (the activation and the grid's range).
        dtype (str): 'uint8' or 'int8'.
        handover (Handover): shared with the network's int8 layers.
    """

    def __init__(self, scale: float, zero_point: int, low: int, high: int, dtype: str, handover: Handover):
        super().__init__()
        from ...common.parameter import Parameter
        from ...common.tensor import Tensor

        self.scale = Parameter(Tensor(np.asarray([scale], np.float32)), name="scale", requires_grad=False)
        self.zero_point, self.low, self.high, self.dtype = int(zero_point), int(low), int(high), dtype
        self.key = grid_key(scale, zero_point, dtype)
        self.handover = handover

    def construct(self, x):
        q = ops.int8_quantize(x, self.scale, self.zero_point, self.low, self.high, self.dtype, 1)
        out = ops.int8_dequantize(q, self.scale, self.zero_point, 1)
        self.handover.offer(self, out, q, self.key, self.low, self.high)
        return out

    def extend_repr(self) -> str:
        return f"zero_point={self.zero_point}, clamp=[{self.low}, {self.high}], dtype={self.dtype}"
