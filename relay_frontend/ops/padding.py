"""Lowering rule for padding: constant, reflect, symmetric, replicate and circular modes.

Built from ``concat`` (constant) and ``take`` with precomputed source indices (mirror modes), ops that
Relax can differentiate, rather than ``nn.pad``, which it cannot.
"""
from __future__ import annotations

import numpy as np
from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import emit
from .registry import rule

_op = relax.op
MODES = ("constant", "reflect", "symmetric", "replicate", "circular")


def mirror_indices(size: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source index of every output position along an axis padded from the input's own elements.

    'reflect' mirrors about the edge element (which is not repeated), 'symmetric' about the edge itself
    (the edge element is repeated); 'replicate' repeats the edge element, 'circular' wraps around.
    """
    positions = np.arange(-before, size + after)
    if mode == "replicate":
        return np.clip(positions, 0, size - 1).astype(np.int64)
    if mode == "circular":
        return np.mod(positions, size).astype(np.int64)
    if mode == "reflect":
        period = 2 * (size - 1) if size > 1 else 1
        folded = np.mod(positions, period)
        return np.where(folded < size, folded, period - folded).astype(np.int64)
    folded = np.mod(positions, 2 * size)
    return np.where(folded < size, folded, 2 * size - 1 - folded).astype(np.int64)


@rule("pad")
def pad(x, paddings, mode="constant", value=0):
    """Pad every axis ``d`` of ``x`` by ``paddings[d] = (before, after)``.

    'reflect' needs each padding smaller than its axis, 'symmetric' and 'circular' no larger than it.
    """
    shape = static_shape(x)
    mode = str(mode).lower()
    if mode not in MODES:
        raise CaptureError(f"mode: expected one of {tuple(m.upper() for m in MODES)}, got {mode!r}")
    pairs = [tuple(int(p) for p in pair) for pair in paddings]
    if len(pairs) != len(shape) or any(len(pair) != 2 for pair in pairs):
        raise CaptureError(f"paddings: expected {len(shape)} (before, after) pairs for an input of shape {shape}, "
                           f"got {paddings!r}")
    if any(p < 0 for pair in pairs for p in pair):
        raise CaptureError(f"paddings: expected non-negative values, got {paddings!r}")
    dtype = dtype_of(x)
    for axis, (before, after) in enumerate(pairs):
        if before == 0 and after == 0:
            continue
        size = static_shape(x)[axis]
        if mode == "constant":
            parts = []
            for count in (before, None, after):
                if count is None:
                    parts.append(x)
                elif count:
                    part_shape = list(static_shape(x))
                    part_shape[axis] = count
                    parts.append(_op.broadcast_to(relax.const(value, dtype), part_shape))
            x = emit(_op.concat(parts, axis=axis))
            continue
        limit = {"reflect": size - 1, "replicate": None}.get(mode, size)
        if limit is not None and max(before, after) > limit:
            raise CaptureError(f"paddings: {mode} padding of axis {axis} (size {size}) must be at most {limit}, "
                               f"got ({before}, {after})")
        source = relax.const(mirror_indices(size, before, after, mode), "int64")
        x = emit(_op.take(x, source, axis=axis, mode="clip"))
    return x
