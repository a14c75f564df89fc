"""Cross-layer equalization (Nagel et al. 2019, "Data-Free Quantization Through Weight Equalization and
Bias Correction", section 4.1): rescale the channels between two consecutive layers so that each
channel's weight range is the same in both, which shrinks the per-tensor ranges without changing what
the float network computes.

For a pair ``conv A -> [BatchNorm2d] -> ReLU -> conv/dense B`` in which B's input is exactly the ReLU's
output, ``ReLU(x / s) = ReLU(x) / s`` for ``s > 0``: dividing A's output channel ``i`` by ``s_i`` (through
the BatchNorm's gamma and beta when there is one, else A's weight and bias) and multiplying B's input
channel ``i`` by ``s_i`` leaves B's output unchanged. ``s_i = sqrt(r1_i / r2_i)`` with ``r1_i`` the
largest |weight| of A's (BatchNorm-folded) output channel ``i`` and ``r2_i`` that of B's input channel
``i`` makes both ranges ``sqrt(r1_i * r2_i)``.

ReLU6 is not scale-equivariant (``ReLU6(x / s) != ReLU6(x) / s`` once ``x > 6 min(1, s)``), so pairs
through a ReLU6 (MobileNetV2's) are left alone: equalizing them would change the float network.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...common.tensor import Tensor
from ...nn.cell import Cell
from .export_int8 import _type
from .watch import WatchedNetwork

__all__ = ["EqualizedPair", "equalization_pairs", "equalize_pair", "cross_layer_equalize"]


@dataclass
class EqualizedPair:
    """Two layers with an equalizable channel axis between them.

    Attributes:
        first (str): conv A's name.
        batchnorm (str | None): the BatchNorm2d between A and the ReLU, if any.
        second (str): conv / dense B's name.
    """
    first: str
    batchnorm: str | None
    second: str


def equalization_pairs(network: Cell, example: Tensor | np.ndarray | tuple) -> list[EqualizedPair]:
    """The ``conv -> [BatchNorm2d] -> ReLU -> conv / dense`` pairs of ``network``, found from one call on
    ``example`` (the order the cells are called in and which call's output each one takes).

    A pair qualifies when each link takes exactly the previous link's output, A, the BatchNorm2d and B
    are called once per network call (the ReLU may be called elsewhere too), B is a ``Conv2d`` without
    groups or a ``Dense`` and no other Conv2d / Dense / BatchNorm2d / ReLU call takes the ReLU's output
    (e.g. a downsampling shortcut). An operator that is not a cell (an addition, a concatenation) taking
    the ReLU's output too is not seen: such a network's float output would change, so compare it before
    and after when its structure is not known.

    Args:
        network (Cell): the float network (inference mode).
        example (Tensor | numpy.ndarray | tuple): one input batch (a tuple for several inputs).

    Returns:
        list[EqualizedPair]: the pairs, in call order.
    """
    kinds = ("Conv2d", "Dense", "BatchNorm2d", "ReLU", "ReLU6")
    cells = [(name, cell) for name, cell in network.cells_and_names() if name and _type(cell) in kinds]
    cell_of = dict(cells)
    examples = example if isinstance(example, tuple) else (example,)
    _, calls = WatchedNetwork(network, cells, inputs_of=[], outputs_of=[])(*examples)
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.name] = counts.get(call.name, 0) + 1
    consumers: dict[int, int] = {}
    for call in calls:
        if call.source is not None:
            consumers[call.source] = consumers.get(call.source, 0) + 1

    def kind(i: int | None) -> str:
        return "" if i is None else _type(cell_of[calls[i].name])

    pairs = []
    for b, call in enumerate(calls):
        act = call.source
        if kind(b) not in ("Conv2d", "Dense") or kind(act) != "ReLU" or consumers.get(act) != 1:
            continue
        if kind(b) == "Conv2d" and int(cell_of[call.name].group) != 1:
            continue
        before = calls[act].source
        batchnorm = None
        if kind(before) == "BatchNorm2d" and consumers.get(before) == 1:
            batchnorm, before = before, calls[before].source
        if kind(before) != "Conv2d" or consumers.get(before) != 1:
            continue
        # the ReLU holds no parameters: a ReLU cell called at several places (ResNet's blocks) may be one link
        names = [calls[i].name for i in (before, b) + (() if batchnorm is None else (batchnorm,))]
        if all(counts[n] == 1 for n in names):
            pairs.append(EqualizedPair(calls[before].name, None if batchnorm is None else calls[batchnorm].name,
                                       call.name))
    return pairs


def _array(parameter) -> np.ndarray:
    return np.asarray(parameter.asnumpy(), np.float64)


def _set(parameter, value: np.ndarray) -> None:
    parameter.set_data(Tensor(value.astype(parameter.asnumpy().dtype)))


def equalize_pair(first: Cell, batchnorm: Cell | None, second: Cell) -> np.ndarray:
    """Equalize one pair in place (see the module docstring); the scales ``s`` applied.

    Args:
        first (Cell): conv A.
        batchnorm (Cell | None): the BatchNorm2d after A, or None.
        second (Cell): conv / dense B, whose input channels are A's output channels.

    Returns:
        numpy.ndarray: ``s``, one per channel (1 where a channel's weights are all zero).

    Raises:
        ValueError: A's output channels are not B's input channels.
    """
    weight_a = _array(first.weight)
    factor = np.ones(weight_a.shape[0])
    if batchnorm is not None:
        factor = _array(batchnorm.gamma) / np.sqrt(_array(batchnorm.moving_variance) + float(batchnorm.eps))
    range_a = np.abs(weight_a.reshape(weight_a.shape[0], -1) * factor[:, None]).max(axis=1)
    weight_b = _array(second.weight)
    if weight_b.shape[1] != weight_a.shape[0]:
        raise ValueError(f"second: expected {weight_a.shape[0]} input channels (the first layer's outputs), "
                         f"got weight shape {weight_b.shape}")
    range_b = np.abs(np.moveaxis(weight_b, 1, 0).reshape(weight_b.shape[1], -1)).max(axis=1)
    usable = (range_a > 0) & (range_b > 0)
    scale = np.where(usable, np.sqrt(np.where(usable, range_a, 1.0) / np.where(usable, range_b, 1.0)), 1.0)
    if batchnorm is not None:
        _set(batchnorm.gamma, _array(batchnorm.gamma) / scale)
        _set(batchnorm.beta, _array(batchnorm.beta) / scale)
    else:
        _set(first.weight, weight_a / scale.reshape(-1, *([1] * (weight_a.ndim - 1))))
        if first.has_bias:
            _set(first.bias, _array(first.bias) / scale)
    _set(second.weight, weight_b * scale.reshape(1, -1, *([1] * (weight_b.ndim - 2))))
    return scale


def cross_layer_equalize(network: Cell, example: Tensor | np.ndarray | tuple,
                         iterations: int = 4) -> list[EqualizedPair]:
    """Equalize every pair :func:`equalization_pairs` finds, in place, ``iterations`` sweeps over them
    (a layer in two pairs moves again when its other pair is equalized; the sweeps converge).

    Args:
        network (Cell): the float network (inference mode).
        example (Tensor | numpy.ndarray | tuple): one input batch (to find the pairs; a tuple for several
            inputs).
        iterations (int): sweeps, at least 1. Default: 4.

    Returns:
        list[EqualizedPair]: the pairs equalized.

    Raises:
        ValueError: ``iterations`` below 1.
    """
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations: expected an int >= 1, got {iterations!r}")
    pairs = equalization_pairs(network, example)
    cells = dict(network.cells_and_names())
    for _ in range(iterations):
        for pair in pairs:
            equalize_pair(cells[pair.first], cells.get(pair.batchnorm) if pair.batchnorm else None,
                          cells[pair.second])
    return pairs
