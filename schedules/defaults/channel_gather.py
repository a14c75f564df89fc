"""Relax rewrite: reshapes and transposes of a channels-last tensor's NCHW form, done channels-last.

A channel shuffle (ShuffleNet: ``reshape(x, (n*c/2, 2, h*w))``, ``transpose(1, 0, 2)``,
``reshape(2, n, c/2, h, w)`` and a split; torchvision's ``view(n, g, c/g, h, w)``,
``transpose(1, 2)``, ``view(n, c, h, w)``) only moves whole channels: in the NHWC form each result
is a gather along the channel axis - a strided slice where the channels picked are evenly spaced
(ShuffleNetV2's halves: the even and the odd channels). Written over the NCHW form it was a
transpose of the map out of NHWC and one back per block (generic element-wise kernels, 16% of
ShuffleNetV2's time). Likewise ``reshape(x, (n, c, h*w))`` and ``transpose(0, 2, 1)`` (a ViT's patch
tokens) is the NHWC form itself, reshaped.

The chain (reshapes, squeezes, transposes, splits and their items, aliases) is followed from a
tensor with an NHWC twin to the values used outside it, and evaluated on an array of element
indices: where the result is such a gather or reshape, the value is emitted from the twin; the
chain's own bindings become dead code. Anything else leaves the chain to the other rules.
"""
from __future__ import annotations

import math

import numpy as np
from tvm import relax

from .layout import Rewriter, static_shape

RESHAPES = {"relax.reshape", "relax.squeeze", "relax.expand_dims", "relax.flatten"}
CHAIN = RESHAPES | {"relax.permute_dims", "relax.split"}
REPLACED = "channel_gather.replaced"  # memo key: (REPLACED, var) for each value this rule emits
_MAX_ELEMENTS = 1 << 22  # index arrays of this many int64 elements (32 MB each) at most


def replaced(rw: Rewriter, var: relax.Expr) -> bool:
    """Whether ``var``'s value comes from this rule (rules that look through a binding to the
    value it reshapes must not: that value is part of a chain this rule made dead code)."""
    return (REPLACED, var) in rw.memo


def _op_name(value) -> str | None:
    return value.op.name if isinstance(value, relax.Call) and hasattr(value.op, "name") else None


def _in_chain(value) -> bool:
    return _op_name(value) in CHAIN or isinstance(value, (relax.TupleGetItem, relax.Var))


def _follow(rw: Rewriter, start: relax.Var) -> tuple[list, list] | None:
    """(the chain's bindings in order, its terminals: vars used outside it), or None when a value
    of the chain is used both inside and outside it, is the function's result or has no static shape."""
    chain, terminals, todo, seen = [], [], [start], set()
    while todo:
        var = todo.pop(0)
        if var in seen:
            continue
        seen.add(var)
        chain.append(var)
        users = rw.users(var)
        inside = [u for u in users if u is not None and _in_chain(rw.value_of(u))]
        if inside and len(inside) != len(users):
            return None
        if not inside:
            value = rw.value_of(var)
            if not users or not isinstance(value, relax.Call) or static_shape(var) is None:
                return None
            terminals.append(var)
        todo.extend(inside)
    return chain, terminals


def _evaluate(rw: Rewriter, chain: list, source: relax.Var, index: np.ndarray) -> dict:
    """Each chain variable's value as an array of the ``source`` element indices it holds."""
    values = {source: index}
    for var in chain:
        value = rw.value_of(var)
        if isinstance(value, relax.Var):
            values[var] = values[value]
        elif isinstance(value, relax.TupleGetItem):
            values[var] = values[value.tuple_value][value.index]
        else:
            x = values[value.args[0]]
            name = _op_name(value)
            if name in RESHAPES:
                values[var] = x.reshape(static_shape(var))
            elif name == "relax.permute_dims":
                axes = value.attrs.axes
                values[var] = np.transpose(x, None if axes is None else [int(a) for a in axes])
            else:  # relax.split
                points = value.attrs.indices_or_sections
                axis = int(value.attrs.axis)
                if isinstance(points, (int,)) or hasattr(points, "value"):
                    values[var] = np.split(x, int(points), axis=axis)
                else:
                    values[var] = np.split(x, [int(p) for p in points], axis=axis)
    return values


def _channel_gather(held: np.ndarray, n: int, c: int, h: int, w: int) -> np.ndarray | None:
    """The source channels ``held`` (an (n, c', h, w) array of NCHW element indices) picks, when
    it picks whole channels for every image and pixel in place; None otherwise."""
    if held.ndim != 4 or held.shape[0] != n or held.shape[2:] != (h, w):
        return None
    image, channel, pixel = held // (c * h * w), held // (h * w) % c, held % (h * w)
    if not (np.array_equal(image, np.broadcast_to(np.arange(n).reshape(n, 1, 1, 1), held.shape))
            and np.array_equal(pixel, np.broadcast_to(np.arange(h * w).reshape(1, 1, h, w), held.shape))):
        return None
    picked = channel[0, :, 0, 0]
    if not np.array_equal(channel, np.broadcast_to(picked.reshape(1, -1, 1, 1), held.shape)):
        return None
    return picked


def _emit_gather(rw: Rewriter, twin: relax.Expr, picked: np.ndarray, c: int) -> relax.Expr:
    """The channels-last tensor of the ``picked`` channels of ``twin``."""
    if len(picked) == c and np.array_equal(picked, np.arange(c)):
        return twin
    steps = np.diff(picked)
    if len(picked) == 1 or (steps[0] > 0 and np.all(steps == steps[0])):
        stride = int(steps[0]) if len(picked) > 1 else 1
        first = int(picked[0])
        return rw.bb.emit(relax.op.strided_slice(twin, axes=[3], begin=[first],
                                                 end=[first + stride * (len(picked) - 1) + 1], strides=[stride]))
    indices = relax.const(picked.astype("int64"))
    return rw.bb.emit(relax.op.take(twin, indices, axis=3))


def rewrite_rule(rw: Rewriter, var: relax.Var, call: relax.Call) -> bool:
    """Schedules the chain of data movements starting at ``var`` from the twin of its input;
    always returns False (the chain's start itself is left to the other rules, as dead code)."""
    if _op_name(call) not in RESHAPES | {"relax.permute_dims"}:
        return False
    source = call.args[0]
    shape = static_shape(source)
    if shape is None or len(shape) != 4 or not rw.has_twin(source) or math.prod(shape) > _MAX_ELEMENTS:
        return False
    found = _follow(rw, var)
    if found is None:
        return False
    chain, terminals = found
    n, c, h, w = shape
    values = _evaluate(rw, chain, source, np.arange(math.prod(shape), dtype=np.int64).reshape(shape))
    plans = []
    for terminal in terminals:
        held = values[terminal]
        picked = _channel_gather(held, n, c, h, w)
        if picked is not None:
            plans.append((terminal, "gather", picked))
            continue
        # the NHWC position of each element: is the terminal the twin, reshaped?
        image, channel, pixel = held // (c * h * w), held // (h * w) % c, held % (h * w)
        if np.array_equal(((image * h * w + pixel) * c + channel).ravel(), np.arange(held.size)):
            plans.append((terminal, "reshape", held.shape))
            continue
        return False
    for terminal, kind, what in plans:
        rw.memo[(REPLACED, terminal)] = True
        if kind == "gather":
            rw.defer(terminal, lambda t=terminal, p=what: rw.set_nhwc(t, _emit_gather(rw, rw.nhwc(source), p, c)))
        else:
            rw.defer(terminal, lambda t=terminal, s=what: rw.set_nchw(
                t, rw.bb.emit(relax.op.reshape(rw.nhwc(source), s))))
    return False
