"""The integer data types fake quantization targets."""
from __future__ import annotations

import enum

__all__ = ['QuantDtype']


@enum.unique
class QuantDtype(enum.Enum):
    """An integer data type for quantization: INT2..INT8 (signed) and UINT2..UINT8 (unsigned).

    Examples:
        >>> QuantDtype.INT8.num_bits
        8
    """

    INT2 = "INT2"
    INT3 = "INT3"
    INT4 = "INT4"
    INT5 = "INT5"
    INT6 = "INT6"
    INT7 = "INT7"
    INT8 = "INT8"
    UINT2 = "UINT2"
    UINT3 = "UINT3"
    UINT4 = "UINT4"
    UINT5 = "UINT5"
    UINT6 = "UINT6"
    UINT7 = "UINT7"
    UINT8 = "UINT8"

    def __str__(self) -> str:
        return self.name

    @property
    def num_bits(self) -> int:
        """The number of bits of this type."""
        return int(self.value[-1])

    @staticmethod
    def is_signed(dtype: QuantDtype) -> bool:
        """Whether ``dtype`` is one of the signed INT types."""
        return dtype.value.startswith("INT")

    @staticmethod
    def switch_signed(dtype: QuantDtype) -> QuantDtype:
        """The type of the same width with the other signedness (INT8 <-> UINT8)."""
        name = dtype.value[1:] if dtype.value.startswith("U") else "U" + dtype.value
        return QuantDtype(name)

    @property
    def range(self) -> tuple[int, int]:
        """The smallest and largest integer of this type: (-128, 127) for INT8, (0, 255) for UINT8."""
        bits = self.num_bits
        if QuantDtype.is_signed(self):
            return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return 0, (1 << bits) - 1
