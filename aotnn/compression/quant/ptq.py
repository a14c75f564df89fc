"""``PostTrainingQuantization``: int8 deployment of a trained float network from a calibration set.

The float network is compiled once (per batch layout) as one graph that also returns what the
observers (:mod:`.observer`) watch: the outputs of every ReLU / ReLU6 cell and the inputs of every
convolution and dense layer (:class:`.watch.WatchedNetwork`), and run on each calibration batch. The network is then rewritten in the quantization-aware form that
:class:`QuantizationAwareTraining` produces, with the observed ranges in place of trained ones:

- ``Conv2d`` (with the ``BatchNorm2d`` that follows it folded in) -> ``Conv2dQuant``, ``Dense`` ->
  ``DenseQuant``; the weight ranges are the (per output channel) min/max of the folded weights;
- ``ReLU`` / ``ReLU6`` -> ``ActQuant`` whose range is the activation's observed range (widened to
  hold 0, so that 0 is exact);
- a layer whose input does not come from an ``ActQuant`` (the network's input, an addition, a layer
  without activation) gets a ``FakeQuantWithMinMaxObserver`` in front of it holding its input's range
  (an ``InputQuant``; converted, the int8 layer quantizes onto that grid itself).

:func:`convert_to_int8` then turns that network into the same int8 graph QAT deploys to, and
:func:`export_int8` exports it the same way.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable

import numpy as np

from ...common.tensor import Tensor
from ...nn.cell import Cell
from .export_int8 import InputQuant, _replace, _type, convert_to_int8, fake_quant_qparams
from .bias_correction import ChannelMeans, weight_rounding_shift
from .equalize import cross_layer_equalize
from .observer import create_observer
from .watch import WatchedNetwork

__all__ = ["PostTrainingQuantization"]

_LAYER_TYPES = ("Conv2d", "Dense")
_ACT_TYPES = ("ReLU", "ReLU6")
_WATCHED = _LAYER_TYPES + _ACT_TYPES + ("BatchNorm2d",)


class _CallSites(Cell):
    """An activation cell the network calls at several places, split into one ActQuant per call site
    (each with its own range): the k-th call of a network call runs ``site{k}``. The network must call
    it the same number of times on every call, as it did during calibration."""

    def __init__(self, sites: list[Cell]):
        super().__init__()
        self.count = len(sites)
        for i, site in enumerate(sites):
            setattr(self, f"site{i}", site)
        self.next_site = [0]  # mutated in place: setting a Cell attribute would mark the structure changed

    def construct(self, x):
        site = self.next_site[0]
        self.next_site[0] = (site + 1) % self.count
        return getattr(self, f"site{site}")(x)


class _Folded(Cell):
    """Stands where a BatchNorm2d folded into the preceding convolution was."""

    def construct(self, x):
        return x


def _batches(calibration: Iterable) -> list[tuple[Tensor, ...]]:
    batches = []
    for i, item in enumerate(calibration):
        items = tuple(item) if isinstance(item, (tuple, list)) else (item,)
        if not items or not all(isinstance(a, (Tensor, np.ndarray)) for a in items):
            raise TypeError(f"calibration: expected batches of Tensor / numpy arrays (or tuples of them), "
                            f"got {type(item).__name__} at batch {i}")
        batches.append(tuple(a if isinstance(a, Tensor) else Tensor(np.asarray(a)) for a in items))
    if not batches:
        raise ValueError("calibration: expected at least one batch, got none")
    return batches


class PostTrainingQuantization:
    """Quantize a trained float network to int8 from a calibration set (no training).

    Weights are quantized symmetrically to int8 (per output channel by default), activations per
    tensor with an asymmetric 8-bit grid (``uint8`` in the int8 graph). The result is the int8 graph
    :func:`convert_to_int8` builds for a QAT network.

    Args:
        activation_observer (str): 'minmax' (the calibration values' min and max), 'percentile' or 'mse'
            (the clipped range of least squared 8-bit quantization error, :class:`.observer.MSEObserver`).
            Default: 'minmax'.
        percentile (float): with 'percentile', the range is [P(100 - p), P(p)] of the values seen.
            Default: 99.99.
        per_channel (tuple[bool]): (weights, activations); activations must be per tensor.
            Default: (True, False).
        symmetric (tuple[bool]): (weights, activations); weights must be symmetric. Default: (True, False).
        cross_layer_equalization (bool): first rescale the channels of each ``conv -> [BatchNorm2d] -> ReLU ->
            conv / dense`` pair so that their weight ranges match (:mod:`.equalize`; the float network's
            output is unchanged, ReLU6 pairs are left alone). Default: False.
        bias_correction (bool): subtract from each layer's bias the mean output shift its weight rounding
            causes on the calibration inputs (:mod:`.bias_correction`). Default: False.

    Raises:
        TypeError: an argument of the wrong type.
        ValueError: an unknown observer, a percentile outside (50, 100], activations per channel or
            asymmetric weights.

    Examples:
        >>> ptq = PostTrainingQuantization(activation_observer="percentile", percentile=99.99)
        >>> int8_net = ptq.quantize(net, [images[i:i + 32] for i in range(0, 320, 32)])
        >>> int8_net(Tensor(images[:1]))
    """

    def __init__(self, activation_observer: str = "minmax", percentile: float = 99.99,
                 per_channel: tuple = (True, False), symmetric: tuple = (True, False),
                 cross_layer_equalization: bool = False, bias_correction: bool = False):
        cls = "PostTrainingQuantization"
        if activation_observer not in ("minmax", "percentile", "mse"):
            raise ValueError(f"For '{cls}', the 'activation_observer' must be 'minmax', 'percentile' or 'mse', "
                             f"but got {activation_observer!r}.")
        for name, value in (("cross_layer_equalization", cross_layer_equalization),
                            ("bias_correction", bias_correction)):
            if not isinstance(value, bool):
                raise TypeError(f"For '{cls}', the '{name}' must be a bool, but got {value!r}.")
        self.cross_layer_equalization, self.bias_correction = cross_layer_equalization, bias_correction
        create_observer(activation_observer, percentile)  # checks percentile
        for name, value in (("per_channel", per_channel), ("symmetric", symmetric)):
            if not isinstance(value, (tuple, list)) or len(value) != 2 or not all(isinstance(v, bool) for v in value):
                raise TypeError(f"For '{cls}', the '{name}' must be a tuple of 2 bools (weights, activations), "
                                f"but got {value!r}.")
        if per_channel[1]:
            raise ValueError(f"For '{cls}', activations must be quantized per tensor: 'per_channel[1]' must be "
                             f"False, but got True.")
        if not symmetric[0]:
            raise ValueError(f"For '{cls}', weights are quantized symmetrically: 'symmetric[0]' must be True, "
                             f"but got False.")
        self.activation_observer, self.percentile = activation_observer, float(percentile)
        self.per_channel, self.symmetric = tuple(per_channel), tuple(symmetric)
        from . import create_quant_config

        self.quant_config = create_quant_config(per_channel=self.per_channel, symmetric=(True, self.symmetric[1]),
                                                narrow_range=(True, False))

    def quantize(self, network: Cell, calibration: Iterable) -> Cell:
        """Calibrate ``network`` on ``calibration`` and return its int8 version (``network`` is unchanged).

        Args:
            network (Cell): a trained float network built from ``nn.Conv2d``, ``nn.BatchNorm2d``,
                ``nn.Dense``, ``nn.ReLU`` / ``nn.ReLU6`` cells (other cells stay float).
            calibration (Iterable): batches of the network's inputs: a Tensor or numpy array each, or a
                tuple of them for a network of several inputs.

        Returns:
            Cell: the int8 network, as :func:`convert_to_int8` builds it (traced on the first sample).

        Raises:
            TypeError: ``network`` is not a Cell, or a batch is not a Tensor / array (tuple).
            ValueError: no calibration batch, or no convolution or dense layer in ``network``.
        """
        fake_quant_net, example = self._apply(network, calibration)
        return convert_to_int8(fake_quant_net, *example)

    def apply(self, network: Cell, calibration: Iterable) -> Cell:
        """Calibrate and return the fake-quantized network (QAT form with the calibrated ranges), before
        :func:`convert_to_int8` (``export_int8`` exports it). Same arguments and errors as :meth:`quantize`."""
        return self._apply(network, calibration)[0]

    def _apply(self, network: Cell, calibration: Iterable) -> tuple[Cell, tuple[Tensor, ...]]:
        """(the fake-quantized network, one sample of the first calibration batch)."""
        if not isinstance(network, Cell):
            raise TypeError(f"For 'PostTrainingQuantization', the 'network' must be a Cell, "
                            f"but got {type(network).__name__}.")
        batches = _batches(calibration)
        net = copy.deepcopy(network)
        net.set_train(False)
        cells = {name: cell for name, cell in net.cells_and_names() if _type(cell) in _WATCHED}
        if not any(_type(c) in _LAYER_TYPES for c in cells.values()):
            raise ValueError("network: expected a network with nn.Conv2d or nn.Dense layers, found none")
        if self.cross_layer_equalization:
            cross_layer_equalize(net, tuple(Tensor(a.asnumpy()[:1]) if a.ndim else a for a in batches[0]))
        self._input_means = ChannelMeans()
        events, observers, needs_input_quant = self._calibrate(net, cells, batches)
        folded = self._fold_pairs(events, cells)
        for name, cell in cells.items():
            if _type(cell) in _LAYER_TYPES:
                shift_input = self._input_means[name] if name in self._input_means else None
                _replace(net, name, self._quant_layer(cell, cells.get(folded.get(name, "")), shift_input))
            elif _type(cell) in _ACT_TYPES and f"{name}#0" in observers:
                sites = [self._act_quant(copy.deepcopy(cell), observers[f"{name}#{k}"])
                         for k in range(sum(1 for event in events if event[0] == name))]
                _replace(net, name, sites[0] if len(sites) == 1 else _CallSites(sites))
        for bn_name in folded.values():
            _replace(net, bn_name, _Folded())
        self._quantize_inputs(net, needs_input_quant, observers)
        example = tuple(Tensor(a.asnumpy()[:1]) if a.ndim else a for a in batches[0])
        net.set_train(False)
        return net, example

    def _calibrate(self, net: Cell, cells: dict, batches: list) -> tuple[list, dict, list]:
        """Run ``net`` on every batch; (events of the first batch, observers by name, the layers whose
        input needs a fake quant of its own).

        An event is (name, whether its input is the previous event's output). Layers observe their
        input (key ``name + ':in'``), activations their output at each call site (key ``name#k`` for
        the k-th call of a network call). The network is compiled once per batch layout with the
        observed tensors as extra outputs.

        A layer's input lies on the grid of the activation called just before it (no fake quant of its
        own) when it is that activation's output, or made of its values only (max-pooling, flattening:
        each value of the first sample is one of the activation's); an average or a sum is not.
        """
        layers = {name for name, cell in cells.items() if _type(cell) in _LAYER_TYPES}
        acts = {name for name, cell in cells.items() if _type(cell) in _ACT_TYPES}

        def producer(calls: list, i: int) -> int | None:
            """The layer or activation call just before call ``i``."""
            return next((j for j in range(i - 1, -1, -1) if calls[j][0] in layers | acts), None)

        # the tensors come back whole and numpy reduces them: reducing them in the graph ('minmax' mode)
        # adds two or three kernels per tensor, whose build costs more than numpy's pass over the values
        watched = WatchedNetwork(net, list(cells.items()), inputs_of=layers, outputs_of=acts)
        events: list[tuple[str, bool]] = []
        needs_input_quant: list[str] = []
        observers: dict[str, Any] = {}

        def observe(key: str, values: np.ndarray | None) -> None:
            if values is not None:
                observers.setdefault(key, create_observer(self.activation_observer, self.percentile)).update(values)

        for batch in batches:
            _, calls = watched(*batch)
            if not events:
                events = [(call.name, call.follows) for call in calls]
                pairs = [(call.name, call.source) for call in calls]
                for i, call in enumerate(calls):
                    j = producer(pairs, i)
                    on_grid = j is not None and calls[j].name in acts and (
                        call.source == j or _values_among(call.x, calls[j].y))
                    if call.name in layers and not on_grid and call.name not in needs_input_quant:
                        needs_input_quant.append(call.name)
            call_index: dict[str, int] = {}
            for call in calls:
                if call.name in layers:
                    observe(call.name + ":in", call.x)
                    if self.bias_correction and call.x is not None and call.x.ndim >= 2:
                        self._input_means.update(call.name, call.x)
                elif call.name in acts:
                    call_index[call.name] = call_index.get(call.name, -1) + 1
                    observe(f"{call.name}#{call_index[call.name]}", call.y)
        return events, observers, needs_input_quant

    @staticmethod
    def _fold_pairs(events: list, cells: dict) -> dict[str, str]:
        """{conv name: BatchNorm2d name} for each BatchNorm2d that only ever normalizes one convolution's output."""
        calls: dict[str, int] = {}
        for name, _ in events:
            calls[name] = calls.get(name, 0) + 1
        pairs = {}
        for (name, _), (nxt, follows) in zip(events, events[1:]):
            if _type(cells[name]) == "Conv2d" and _type(cells[nxt]) == "BatchNorm2d" and calls[name] == 1 \
                    and calls[nxt] == 1 and follows:
                pairs[name] = nxt
        return pairs

    def _quant_layer(self, cell: Cell, batchnorm: Cell | None, input_mean: np.ndarray | None = None) -> Cell:
        """The quantization-aware layer of ``cell`` (``batchnorm`` folded in); with ``input_mean`` (the
        calibration inputs' channel means) its bias is corrected for the weights' rounding."""
        from ... import nn

        weight = np.asarray(cell.weight.asnumpy(), np.float64)
        bias = np.asarray(cell.bias.asnumpy(), np.float64) if cell.has_bias else None
        if batchnorm is not None:
            gamma, beta, mean, var = (np.asarray(getattr(batchnorm, n).asnumpy(), np.float64)
                                      for n in ("gamma", "beta", "moving_mean", "moving_variance"))
            factor = gamma / np.sqrt(var + float(batchnorm.eps))
            weight = weight * factor.reshape(-1, *([1] * (weight.ndim - 1)))
            bias = beta + factor * ((0.0 if bias is None else bias) - mean)
        has_bias = bias is not None or input_mean is not None
        if _type(cell) == "Conv2d":
            if getattr(cell, "data_format", "NCHW") != "NCHW":
                raise ValueError(f"network: expected NCHW convolutions, got data_format {cell.data_format!r}")
            quant = nn.Conv2dQuant(cell.in_channels, cell.out_channels, cell.kernel_size, cell.stride, cell.pad_mode,
                                   cell.padding, cell.dilation, cell.group, has_bias=has_bias,
                                   quant_config=self.quant_config)
        else:
            quant = nn.DenseQuant(cell.in_channels, cell.out_channels, has_bias=has_bias,
                                  activation=cell.activation if cell.activation_flag else None,
                                  quant_config=self.quant_config)
        quant.weight.set_data(Tensor(weight.astype(np.float32)))
        rows = weight.reshape(weight.shape[0], -1)
        if self.per_channel[0]:
            low, high = rows.min(axis=1), rows.max(axis=1)
        else:
            low, high = rows.min(keepdims=True).reshape(1), rows.max(keepdims=True).reshape(1)
        _set_range(quant.fake_quant_weight, low, high)
        if input_mean is not None:
            params = fake_quant_qparams(quant.fake_quant_weight)
            shape = (-1,) + (1,) * (weight.ndim - 1)
            rounded = (params.quantize(weight) - params.zero_point.reshape(shape)) * params.scale.reshape(shape)
            group = int(getattr(cell, "group", 1))
            bias = (0.0 if bias is None else bias) - weight_rounding_shift(weight, rounded, input_mean, group)
        if has_bias:
            quant.bias.set_data(Tensor(np.broadcast_to(bias, (weight.shape[0],)).astype(np.float32)))
        return quant

    def _act_quant(self, act: Cell, observer: Any) -> Cell:
        from ... import nn

        quant = nn.ActQuant(act, quant_config=self.quant_config)
        low, high = observer.range()
        _set_range(quant.fake_quant_act, low, high)
        return quant

    def _quantize_inputs(self, net: Cell, names: list[str], observers: dict) -> None:
        """Put an input fake quant (with the input's calibrated range) before each layer of ``names``."""
        cells = dict(net.cells_and_names())
        for name in names:
            observer = observers.get(name + ":in")
            if observer is None:
                continue
            fake_quant = self.quant_config.activation()
            low, high = observer.range()
            _set_range(fake_quant, low, high)
            _replace(net, name, InputQuant(fake_quant, cells[name]))


def _values_among(x: np.ndarray | None, y: np.ndarray | None) -> bool:
    """Whether every value of ``x``'s first sample is one of ``y``'s first sample."""
    if x is None or y is None or x.ndim == 0 or y.ndim == 0 or x.shape[0] != y.shape[0]:
        return False
    return bool(np.all(np.isin(x[0], y[0])))


def _set_range(fake_quant: Cell, low: np.ndarray, high: np.ndarray) -> None:
    """Give a fake quant cell the range [low, high], widened to hold 0 (so that 0 is on the grid) and
    to a non-empty span."""
    low = np.minimum(np.asarray(low, np.float64).reshape(-1), 0.0)
    high = np.maximum(np.asarray(high, np.float64).reshape(-1), 0.0)
    high = np.where(high - low <= 0, low + 1e-6, high)
    fake_quant.minq.set_data(Tensor(low.astype(np.float32)))
    fake_quant.maxq.set_data(Tensor(high.astype(np.float32)))
