"""``ops.Print``: MindSpore's debugging print primitive.

In PyNative mode MindSpore prints each input (strings as they are, tensors as their repr) and returns None.
aotnn prints the same way when the inputs hold values; while a graph is captured the tensors are symbolic
and the compiled kernels have no host print, so nothing is printed there (models commonly create a Print in
``__init__`` and never call it, or call it only while debugging).
"""
from __future__ import annotations

from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ['Print']

_PRINTABLE = (str, Tensor, int, float, bool)


class Print(Primitive):
    """``ops.Print()(*inputs)``: prints strings, tensors and Python scalars; returns None.

    Raises:
        TypeError: an input is not a str, Tensor, int, float or bool (or a tuple/list of them).
    """

    def __call__(self, *inputs) -> None:
        flat = []
        for index, item in enumerate(inputs):
            for element in (item if isinstance(item, (tuple, list)) else (item,)):
                if not isinstance(element, _PRINTABLE):
                    raise TypeError(f"For 'Print', input {index} must be a str, Tensor, int, float or bool, "
                                    f"but got {type(element).__name__}.")
                flat.append(element)
        if any(isinstance(e, Tensor) and e.is_symbolic for e in flat):
            return None
        for element in flat:
            print(element)
        return None
