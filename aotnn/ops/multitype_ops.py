"""MindSpore's composite dispatchers: ``MultitypeFuncGraph`` (one function per argument-type signature),
``HyperMap`` and ``Map`` (apply a function across sequences), and ``Reciprocal``. Inside a Cell's construct
they run as ordinary Python over the traced Tensors."""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ["MultitypeFuncGraph", "HyperMap", "Map", "Reciprocal", "reciprocal"]


def _matches(type_name: str, value: Any) -> bool:
    from ..common.parameter import Parameter
    name = type_name.lower()
    if name in ("tensor", "parameter"):
        return isinstance(value, Tensor) or (name == "parameter" and isinstance(value, Parameter))
    if name == "bool":
        return isinstance(value, bool)
    if name in ("number", "int", "float"):
        kinds = {"number": numbers.Number, "int": numbers.Integral, "float": numbers.Real}
        return isinstance(value, kinds[name]) and not isinstance(value, bool)
    if name in ("tuple", "list"):
        return isinstance(value, tuple if name == "tuple" else list)
    if name in ("function", "func"):
        return callable(value) and not isinstance(value, Tensor)
    if name in ("string", "str"):
        return isinstance(value, str)
    if name == "none":
        return value is None
    if name == "dict" or name == "dictionary":
        return isinstance(value, dict)
    return type(value).__name__.lower() == name  # RowTensor, COOTensor, ...


class MultitypeFuncGraph:
    """A function chosen by its arguments' types.

    Args:
        name (str): the name, for messages.
        read_value (bool): accepted. Default: False.
        doc_url (str): accepted. Default: ''.
    Examples:
        >>> add = MultitypeFuncGraph("add")
        >>> @add.register("Tensor", "Tensor")
        ... def _(x, y): return x + y
    """

    def __init__(self, name: str, read_value: bool = False, doc_url: str = ""):
        self.name = name
        self.entries: list[tuple[tuple[str, ...], Callable]] = []

    def register(self, *type_names: Any) -> Callable[[Callable], Callable]:
        """Decorator registering a function for arguments of these types ('Tensor', 'Number', 'Bool',
        'Tuple', 'List', 'Function', 'String', 'None', or a class name such as 'RowTensor')."""
        names = tuple(t if isinstance(t, str) else getattr(t, "__name__", str(t)) for t in type_names)

        def deco(fn: Callable) -> Callable:
            self.entries.append((names, fn))
            return fn
        return deco

    def __call__(self, *args: Any) -> Any:
        for names, fn in self.entries:
            if len(names) == len(args) and all(_matches(n, a) for n, a in zip(names, args)):
                return fn(*args)
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"MultitypeFuncGraph '{self.name}': no function registered for argument types ({got}); "
                        f"registered: {[list(n) for n, _ in self.entries]}")


def _apply_across(fn: Callable, args: tuple, recurse: bool) -> Any:
    sequences = [a for a in args if isinstance(a, (tuple, list))]
    if not sequences:
        return fn(*args)
    length = len(sequences[0])
    if any(len(s) != length for s in sequences):
        raise ValueError(f"HyperMap/Map: the sequences must have the same length, got {[len(s) for s in sequences]}")
    columns = [a if isinstance(a, (tuple, list)) else (a,) * length for a in args]
    if recurse:
        return tuple(_apply_across(fn, items, True) for items in zip(*columns))
    return tuple(fn(*items) for items in zip(*columns))


class HyperMap:
    """Apply ``ops`` (or the first call argument) across sequences, recursing into nested ones; non-sequence
    arguments are passed to every call.

    Args:
        ops (Callable): the function; None: give it as the first argument of each call. Default: None.
        reverse (bool): accepted (order of evaluation). Default: False.
    """

    _recurse = True

    def __init__(self, ops: Callable | None = None, reverse: bool = False):
        self.ops, self.reverse = ops, reverse

    def __call__(self, *args: Any) -> Any:
        fn, rest = (self.ops, args) if self.ops is not None else (args[0], args[1:])
        if not callable(fn):
            raise TypeError(f"{type(self).__name__}: the function must be callable, got {type(fn).__name__}")
        return _apply_across(fn, tuple(rest), self._recurse)


class Map(HyperMap):
    """As :class:`HyperMap`, one level deep."""

    _recurse = False


def reciprocal(x: Any) -> Any:
    """``1 / x`` elementwise."""
    return 1 / x


Reciprocal = type("Reciprocal", (Primitive,), {"__call__": lambda self, x: reciprocal(x),
                                               "__doc__": "``ops.Reciprocal()(x)``: 1 / x."})
