"""Watching what chosen sub-cells of a network see, from ONE compiled graph of the whole network.

A forward hook makes every call of the cells around it run op by op, each hooked cell compiled on
its own (hundreds of builds for an ImageNet model). :class:`WatchedNetwork` instead captures the
network once per input layout with the watched cells' first inputs and outputs as extra outputs of
the graph (or only their min and max, a few bytes), builds it once and runs it on every batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ...common.tensor import Tensor
from ...nn.cell import Cell

__all__ = ["WatchedCall", "WatchedNetwork"]

_MODES = ("values", "minmax")


@dataclass
class WatchedCall:
    """One call of a watched cell, in the order the calls finish (the order forward hooks run in).

    Attributes:
        name (str): the cell's name in the network.
        x (numpy.ndarray | None): its first argument (None when that is not a Tensor or not asked for);
            in 'minmax' mode the array ``[min, max]`` of it.
        y (numpy.ndarray | None): its output, likewise.
        follows (bool): the first argument is the very tensor the previous watched call returned.
        source (int | None): the index of the latest earlier call that returned the very tensor this
            call's first argument is (None if none did).
    """
    name: str
    x: np.ndarray | None
    y: np.ndarray | None
    follows: bool
    source: int | None = None


@dataclass
class _Slot:
    name: str
    x: int | None
    y: int | None
    follows: bool
    source: int | None


def _same(a: Tensor | None, b: Tensor | None) -> bool:
    if a is None or b is None:
        return False
    return a is b or (a._expr is not None and b._expr is not None and a._expr.same_as(b._expr))


class WatchedNetwork:
    """``network`` compiled with what the cells ``watched`` see as extra outputs.

    Args:
        network (Cell): the network, run as it is (put it in the mode wanted, e.g. inference).
        watched (Sequence[tuple[str, Cell]]): (name, cell) of the sub-cells to watch.
        inputs_of (Sequence[str] | None): names whose first argument is wanted; None: all.
        outputs_of (Sequence[str] | None): names whose output is wanted; None: all.
        mode (str): 'values' (the tensors) or 'minmax' (each tensor's ``[min, max]``, reduced in the
            graph: little to return, but two reductions more to build per tensor). Default: 'values'.

    Raises:
        TypeError: ``network`` or a watched cell is not a Cell.
        ValueError: an unknown ``mode``.

    Examples:
        >>> watched = WatchedNetwork(net, [("relu", net.relu)], mode="minmax")
        >>> output, calls = watched(Tensor(images))
        >>> calls[0].y  # [min, max] of the ReLU's output
    """

    def __init__(self, network: Cell, watched: Sequence[tuple[str, Cell]], inputs_of: Sequence[str] | None = None,
                 outputs_of: Sequence[str] | None = None, mode: str = "values"):
        if not isinstance(network, Cell):
            raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
        for name, cell in watched:
            if not isinstance(cell, Cell):
                raise TypeError(f"watched: expected (name, Cell) pairs, got {type(cell).__name__} for {name!r}")
        if mode not in _MODES:
            raise ValueError(f"mode: expected one of {_MODES}, got {mode!r}")
        self.network, self.watched, self.mode = network, list(watched), mode
        self.inputs_of = None if inputs_of is None else set(inputs_of)
        self.outputs_of = None if outputs_of is None else set(outputs_of)
        self._compiled: dict[tuple, tuple[Any, list[_Slot]]] = {}

    def __call__(self, *inputs: Any) -> tuple[Any, list[WatchedCall]]:
        """Run the network on ``inputs`` (Tensors or numpy arrays).

        Returns:
            (the network's output, the watched calls in order).
        """
        tensors = [a if isinstance(a, Tensor) else Tensor(np.asarray(a)) for a in inputs]
        key = tuple((t.shape, t.dtype.name) for t in tensors)
        if key not in self._compiled:
            self._compiled[key] = self._compile(tensors)
        compiled, slots = self._compiled[key]
        output, watched = compiled([t.asnumpy() for t in tensors])

        def value(index: int | None) -> np.ndarray | None:
            return None if index is None else watched[index].asnumpy()

        return output, [WatchedCall(s.name, value(s.x), value(s.y), s.follows, s.source) for s in slots]

    def _compile(self, tensors: list[Tensor]) -> tuple[Any, list[_Slot]]:
        from ... import ops
        from ...jit.compiled import compile_function

        slots: list[_Slot] = []

        def run(*symbolic: Tensor):
            calls: list[tuple[str, Any, Any]] = []
            restore = [self._tap(name, cell, calls) for name, cell in self.watched]
            try:
                output = self.network(*symbolic)
            finally:
                for undo in reversed(restore):
                    undo()
            sources = [next((j for j in range(i - 1, -1, -1) if _same(x, calls[j][2])), None)
                       for i, (_, x, _) in enumerate(calls)]
            leaves: list[Tensor] = []

            def leaf(tensor: Any) -> int | None:
                if not isinstance(tensor, Tensor) or not tensor.is_symbolic:
                    return None
                for i, seen in enumerate(leaves):
                    if _same(seen, tensor):
                        return i
                leaves.append(tensor)
                return len(leaves) - 1

            slots.clear()
            for i, ((name, x, y), source) in enumerate(zip(calls, sources)):
                want_x = self.inputs_of is None or name in self.inputs_of
                want_y = self.outputs_of is None or name in self.outputs_of
                slots.append(_Slot(name, leaf(x) if want_x else None, leaf(y) if want_y else None,
                                   source == i - 1, source))
            if self.mode == "minmax":
                leaves[:] = [ops.stack([ops.amin(t), ops.amax(t)]) for t in leaves]
            return output, leaves

        specs = [(f"input{i}", t.shape, t.dtype.name) for i, t in enumerate(tensors)]
        return compile_function(run, specs), list(slots)

    @staticmethod
    def _tap(name: str, cell: Cell, calls: list) -> Any:
        """Make ``cell`` record (name, first argument, output) of each call into ``calls``; returns the undo."""
        had_own = "construct" in cell.__dict__
        original = cell.construct

        def construct(*args: Any, **kwargs: Any) -> Any:
            output = original(*args, **kwargs)
            calls.append((name, args[0] if args and isinstance(args[0], Tensor) else None,
                          output if isinstance(output, Tensor) else None))
            return output

        object.__setattr__(cell, "construct", construct)  # not a structure change: only this capture sees it

        def undo() -> None:
            if had_own:
                object.__setattr__(cell, "construct", original)
            else:
                del cell.__dict__["construct"]

        return undo
