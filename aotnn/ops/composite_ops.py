"""MindSpore's graph-composition helpers: ``constexpr``, ``partial``, ``depend``, ``MultitypeFuncGraph``,
``HyperMap``/``Map``, and ``clip_by_global_norm`` and the ``ReduceOp`` names.

aotnn captures ``construct`` by running its Python, so compile-time constants and type dispatch are plain
Python: ``constexpr`` functions simply run while the graph is captured, and ``MultitypeFuncGraph`` picks
its overload from the argument types at that moment.
"""
from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..common import dtype as mstype
from ..common.parameter import Parameter
from ..common.tensor import Tensor
from . import functional as F

__all__ = ['constexpr', 'partial', 'depend', 'MultitypeFuncGraph', 'HyperMap', 'Map', 'clip_by_global_norm',
           'ReduceOp']


def constexpr(fn: Callable | None = None, *, get_instance: bool = True, name: str | None = None,
              reuse_result: bool = True, check: bool = True):
    """Mark ``fn`` as computed while the graph is built (its arguments are shapes, dtypes, numbers).

    Usable bare (``@constexpr``) or with MindSpore's keywords (``@constexpr(reuse_result=False)``). Since
    capture runs the Python of ``construct``, the function is returned unchanged and runs at capture time.
    """
    if fn is None:
        return lambda inner: inner
    if not callable(fn):
        raise TypeError(f"constexpr: expected a function, got {type(fn).__name__}")
    return fn


def partial(func: Callable, *args: Any) -> Callable:
    """``func`` with its leading arguments fixed to ``args``."""
    if not callable(func):
        raise TypeError(f"partial: func must be callable, got {type(func).__name__}")
    return functools.partial(func, *args)


def depend(value, expr):
    """``value``; the order against ``expr`` is implicit in a captured graph (every effect is kept)."""
    return value


class ReduceOp:
    """The reductions of collective ops: ``ReduceOp.SUM``, ``MAX``, ``MIN``, ``PROD``, ``AVG``."""
    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"


def _type_names(value: Any) -> tuple[str, ...]:
    """The MindSpore type names ``value`` matches in ``MultitypeFuncGraph.register``."""
    if isinstance(value, Parameter):
        return ("Tensor", "Parameter")
    if isinstance(value, Tensor):
        return ("Tensor",)
    if isinstance(value, (bool, np.bool_)):
        return ("Bool", "Number")
    if isinstance(value, (int, np.integer)):
        return ("Int", "Number")
    if isinstance(value, (float, np.floating)):
        return ("Float", "Number")
    if isinstance(value, str):
        return ("String",)
    if value is None:
        return ("None",)
    if isinstance(value, tuple):
        return ("Tuple",)
    if isinstance(value, list):
        return ("List",)
    if isinstance(value, dict):
        return ("Dictionary",)
    if isinstance(value, mstype.DType):
        return ("TypeType",)
    if callable(value):
        return ("Function",)
    return (type(value).__name__,)


class MultitypeFuncGraph:
    """A function with one overload per argument-type signature, chosen at call time.

    Example::

        grad_scale = MultitypeFuncGraph("grad_scale")

        @grad_scale.register("Number", "Tensor")
        def _(scale, grad): ...

    Type names: 'Tensor', 'Parameter', 'Number', 'Int', 'Float', 'Bool', 'String', 'None', 'Tuple', 'List',
    'Dictionary', 'Function', 'TypeType', or a class name (e.g. 'RowTensor').

    Args:
        name (str): the function's name, used in error messages.
        read_value (bool): accepted for MindSpore compatibility. Default: False.
    """

    def __init__(self, name: str, read_value: bool = False):
        if not isinstance(name, str):
            raise TypeError(f"MultitypeFuncGraph: name must be a str, got {type(name).__name__}")
        self.name = name
        self._overloads: list[tuple[tuple[str, ...], Callable]] = []

    def register(self, *type_names: str) -> Callable[[Callable], Callable]:
        """Decorator: register the decorated function for arguments of ``type_names``."""
        for t in type_names:
            if not isinstance(t, str):
                raise TypeError(f"MultitypeFuncGraph.register: type names must be str, got {t!r}")

        def record(fn: Callable) -> Callable:
            self._overloads.append((tuple(type_names), fn))
            return fn
        return record

    def __call__(self, *args: Any) -> Any:
        for signature, fn in self._overloads:
            if len(signature) == len(args) and builtins.all(
                    name in _type_names(arg) for name, arg in zip(signature, args)):
                return fn(*args)
        got = tuple(_type_names(a)[0] for a in args)
        raise TypeError(f"MultitypeFuncGraph '{self.name}': no overload registered for argument types {got}; "
                        f"registered: {[s for s, _ in self._overloads]}")


def _sequences(args: tuple) -> bool:
    return builtins.any(isinstance(a, (tuple, list)) for a in args)


def _lengths_agree(args: tuple, who: str) -> int:
    lengths = {len(a) for a in args if isinstance(a, (tuple, list))}
    if len(lengths) != 1 or not builtins.all(isinstance(a, (tuple, list)) for a in args):
        raise ValueError(f"{who}: every argument must be a tuple/list of one length, got "
                         f"{[type(a).__name__ if not isinstance(a, (tuple, list)) else len(a) for a in args]}")
    return lengths.pop()


class Map:
    """Apply a function to the elements of tuples/lists in lockstep, one level deep.

    Args:
        ops (Callable): the function, or None to take it as the first call argument. Default: None.
        reverse (bool): accepted for MindSpore compatibility (order of application). Default: False.
    """
    _recursive = False

    def __init__(self, ops: Callable | None = None, reverse: bool = False):
        if ops is not None and not callable(ops):
            raise TypeError(f"{type(self).__name__}: ops must be callable, got {type(ops).__name__}")
        self.ops, self.reverse = ops, reverse

    def __call__(self, *args: Any) -> Any:
        fn = self.ops
        if fn is None:
            if not args or not callable(args[0]):
                raise TypeError(f"{type(self).__name__}: the first argument must be the function to apply")
            fn, args = args[0], args[1:]
        return self._apply(fn, args)

    def _apply(self, fn: Callable, args: tuple) -> Any:
        if not args or not _sequences(args):
            return fn(*args)
        count = _lengths_agree(args, type(self).__name__)
        order = range(count - 1, -1, -1) if self.reverse else range(count)
        results = {i: (self._apply(fn, tuple(a[i] for a in args)) if self._recursive
                       else fn(*(a[i] for a in args))) for i in order}
        return tuple(results[i] for i in range(count))


class HyperMap(Map):
    """``Map`` that recurses into nested tuples/lists and applies the function to their leaves."""
    _recursive = True


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """Scale every tensor of ``x`` by ``clip_norm / max(global_norm, clip_norm)``, where ``global_norm`` is
    the L2 norm of all of them together.

    Args:
        x (Union[tuple[Tensor], list[Tensor]]): the tensors (e.g. gradients).
        clip_norm (Union[float, int, Tensor]): the largest global norm kept. Default: 1.0.
        use_norm (None): must be None (as in MindSpore).

    Returns:
        tuple[Tensor], the clipped tensors.

    Raises:
        TypeError: ``x`` not a tuple/list of Tensors.
        ValueError: ``clip_norm`` not positive, or ``use_norm`` given.
    """
    if not isinstance(x, (tuple, list)) or not x or not builtins.all(isinstance(t, Tensor) for t in x):
        raise TypeError("clip_by_global_norm: x must be a non-empty tuple/list of Tensors")
    if use_norm is not None:
        raise ValueError("clip_by_global_norm: use_norm must be None")
    if not isinstance(clip_norm, Tensor) and clip_norm <= 0:
        raise ValueError(f"clip_by_global_norm: clip_norm must be positive, got {clip_norm}")
    squares = [F.reduce_sum(F.square(F.cast(t, mstype.float32))) for t in x]
    total = squares[0]
    for s in squares[1:]:
        total = F.add(total, s)
    norm = F.sqrt(total)
    scale = F.div(clip_norm, F.maximum(norm, clip_norm))
    return tuple(F.mul(t, F.cast(scale, t.dtype)) for t in x)
