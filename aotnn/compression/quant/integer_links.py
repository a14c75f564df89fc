"""Which int8 layers can hand 8-bit integers straight to the next one, decided from the captured graph.

A link (producer, consumer) is a candidate when the producer requantizes onto the grid the consumer
quantizes its input with. With the link on, the producer returns its uint8/int8 tensor and the
consumer takes it as it comes, so everything on the way must keep meaning on integers and nothing
else may read those integers. :func:`decide_links` captures the unlinked network symbolically once
(no build), each consumer quantizing its float input itself, and keeps a link only when the value the
consumer quantizes is the producer's output through nothing but max-pooling and shape changes
(reshape, flatten, transpose, squeeze, expand_dims), each value on that path having exactly one
reader: a float addition or any other reader of those values turns the link off.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ...common.tensor import Tensor
from ...nn.cell import Cell

__all__ = ["decide_links"]

# ops whose result on integers is the integers of the same grid (the max of integers, the same integers moved)
_INTEGER_SAFE_OPS = ("relax.nn.max_pool2d", "relax.reshape", "relax.permute_dims", "relax.squeeze",
                     "relax.expand_dims")


def _bindings_and_uses(function: Any) -> tuple[dict, dict]:
    """(var -> bound value, var -> number of readers) over the function's bindings and its result."""
    from tvm import relax

    bound: dict = {}
    uses: dict = {}

    def count(expr: Any) -> None:
        if isinstance(expr, relax.Var):
            uses[expr] = uses.get(expr, 0) + 1
        elif isinstance(expr, relax.Call):
            for arg in expr.args:
                count(arg)
        elif isinstance(expr, relax.Tuple):
            for field in expr.fields:
                count(field)
        elif isinstance(expr, relax.TupleGetItem):
            count(expr.tuple_value)

    body = function.body
    for block in body.blocks:
        for binding in block.bindings:
            bound[binding.var] = binding.value
            count(binding.value)
    count(body.body)
    return bound, uses


def _integer_path(start: Any, end: Any, bound: dict, uses: dict) -> bool:
    """True if ``end`` (the consumer's input) is ``start`` (the producer's output) through integer-safe
    ops only, every value from ``start`` to ``end`` read exactly once."""
    import tvm
    from tvm import relax

    var = end
    for _ in range(len(bound) + 1):
        if uses.get(var, 0) != 1:
            return False
        if var.same_as(start):
            return True
        value = bound.get(var)
        if isinstance(value, relax.Var):  # an alias binding (an output of the dataflow block)
            var = value
            continue
        if not isinstance(value, relax.Call) or not isinstance(value.op, tvm.ir.Op) \
                or value.op.name not in _INTEGER_SAFE_OPS or not isinstance(value.args[0], relax.Var):
            return False
        var = value.args[0]
    return False


def decide_links(network: Cell, links: Sequence[tuple[Cell, Cell]], inputs: Sequence[Any]) -> list[tuple[Cell, Cell]]:
    """Turn on the links that keep the network's result, from one symbolic capture of ``network``.

    Args:
        network (Cell): the converted network, holding the linked layers.
        links (Sequence[tuple[Cell, Cell]]): (producer, consumer) int8 layers with ``integer_output`` and
            ``integer_input`` flags, the producer's output grid being the consumer's input grid.
        inputs (Sequence): example inputs (Tensors or arrays): their shapes and dtypes fix the capture.

    Returns:
        list[tuple[Cell, Cell]]: the links kept (left on); the others are off.
    """
    from ...jit.compiled import capture_function
    from .watch import WatchedNetwork

    arrays = [a.asnumpy() if isinstance(a, Tensor) else np.asarray(a) for a in inputs]
    specs = [(f"input{i}", tuple(a.shape), a.dtype.name) for i, a in enumerate(arrays)]
    # captured unlinked, each consumer quantizing its float input itself: the path from the producer's
    # float output to that quantization is the one the integers would take, and any other reader shows
    _set(network, links, False)
    calls: list[tuple[str, Any, Any]] = []
    cells = {id(cell): cell for link in links for cell in link}
    handovers = {key: cell.handover for key, cell in cells.items()}
    restore = [WatchedNetwork._tap(str(key), cell, calls) for key, cell in cells.items()]
    try:
        for cell in cells.values():
            cell.handover = None
        mod, _, _, _ = capture_function(network, specs)
    finally:
        for undo in reversed(restore):
            undo()
        for key, cell in cells.items():
            cell.handover = handovers[key]
    kept: list[tuple[Cell, Cell]] = []
    bound, uses = _bindings_and_uses(mod["main"])
    inputs_of: dict[str, list] = {}
    outputs_of: dict[str, list] = {}
    for key, x, y in calls:
        inputs_of.setdefault(key, []).append(x)
        outputs_of.setdefault(key, []).append(y)
    for producer, consumer in links:
        ys, xs = outputs_of.get(str(id(producer)), []), inputs_of.get(str(id(consumer)), [])
        if len(ys) == 1 and len(xs) == 1 and ys[0] is not None and xs[0] is not None \
                and _integer_path(ys[0]._expr, xs[0]._expr, bound, uses):
            kept.append((producer, consumer))
    _set(network, kept, True)
    return kept


def _set(network: Cell, links: Sequence[tuple[Cell, Cell]], on: bool) -> None:
    for producer, consumer in links:
        producer.integer_output = consumer.integer_input = on
    for _, cell in network.cells_and_names():
        cell._jit_cache.clear()
