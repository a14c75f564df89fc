"""Deploy a quantization-aware trained network with real 8-bit kernels.

:func:`convert_to_int8` turns a QAT network (``Conv2dQuant``, ``DenseQuant``, the BatchNorm-folding
convolutions, ``ActQuant``, ``FakeQuantWithMinMaxObserver``) into an inference network whose
convolutions and dense layers multiply 8-bit integers with int32 accumulation
(``aotnn.ops.int8_conv2d`` / ``int8_dense``):

- weights are quantized once with the ranges their ``fake_quant_weight`` learned (after folding
  BatchNorm into them where the layer does), to int8 (the unsigned grid shifted by 128);
- a layer's input is quantized with the range of the fake-quant cell that produced it (to uint8 with
  its zero point; a signed range is shifted by 128 onto uint8, which VNNI multiplies); the first
  layer, whose input no fake quant produced, quantizes it per call with a symmetric int8 scale
  ``max|x| / 127`` (dynamic quantization);
- an ``ActQuant`` applied right after a layer (ReLU, ReLU6 or no activation) is fused into it: the
  int32 accumulators plus the int32 bias are requantized straight to that ActQuant's uint8 grid
  (``aotnn.ops.int8_requantize``, float32 multiplier, round half to even), the activation being a
  clamp of the integer range;
- between two such layers values travel as 8-bit integers: a layer whose requantized output feeds
  the next layer's input quantization on the same grid hands over its uint8/int8 tensor (no
  dequantize/quantize pair), so that the network's own ``construct`` runs max-pooling and flattening
  on integers. A link is kept only when the captured graph (one symbolic capture, no build) shows that
  the integers reach the consumer through max-pooling and shape changes alone and nothing else reads
  them (:func:`.integer_links.decide_links`: an addition or any other float consumer would not);
  without example inputs values travel as float32 on the fake-quant grid;
- a layer without activation whose output goes straight into the next layer's input fake quant
  (an ``InputQuant``, as post-training quantization places after a projection) requantizes onto that
  grid in its epilogue, as if an ``ActQuant`` without activation followed it;
- an ``ActQuant`` (ReLU, ReLU6 or none) or per-tensor fake quant that no layer absorbed, such as the
  ReLU after a residual addition, becomes a :class:`~.integer_handover.QuantizedActivation`: it
  quantizes onto its grid (the activation as the clamp) and hands the integers to the int8 layers that
  read its output (:class:`~.integer_handover.Handover`), so that in the exported graph the addition is
  fused into the producing convolution's epilogue and uint8 tensors cross the kernels. Other quant
  cells (``TensorAddQuant``, ``MulQuant``) keep their fake-quant float form.

Which fake quant produced which input is found by running the network once on example inputs, as
one compiled graph returning every quant cell's input and output (checking that the values lie on that fake quant's grid); without inputs, the order in
which the cells are defined is taken as the order in which they run.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...nn.cell import Cell
from ... import ops
from .integer_handover import Handover, QuantizedActivation, grid_key
from .integer_links import decide_links

__all__ = ["convert_to_int8", "export_int8"]

_LAYERS = ("Conv2dQuant", "DenseQuant", "Conv2dBnFoldQuant", "Conv2dBnFoldQuantOneConv",
           "Conv2dBnWithoutFoldQuant")
_PRODUCERS = ("ActQuant", "FakeQuantWithMinMaxObserver", "FakeQuantWithMinMax", "TensorAddQuant", "MulQuant")
_FUSABLE_ACTS = ("ReLU", "ReLU6", "Identity", "NoneType")


@dataclass
class QParams:
    """An affine grid ``real = scale * (q - zero_point)``, ``q`` in [qmin, qmax] (numpy, one per channel)."""
    scale: np.ndarray
    zero_point: np.ndarray
    qmin: int
    qmax: int

    @property
    def dtype(self) -> str:
        """The 8-bit type holding the grid: uint8 for an unsigned range, else int8."""
        return "uint8" if self.qmin >= 0 else "int8"

    def quantize(self, values: np.ndarray, axis: int = 0) -> np.ndarray:
        shape = [1] * values.ndim
        shape[axis] = -1
        scale, zp = self.scale.reshape(shape), self.zero_point.reshape(shape)
        return np.clip(np.round(values / scale) + zp, self.qmin, self.qmax).astype(np.int64)

    def on_grid(self, values: np.ndarray) -> bool:
        steps = values.astype(np.float64) / float(self.scale[0]) + float(self.zero_point[0])
        return bool(np.all(np.abs(steps - np.round(steps)) < 1e-2)
                    and steps.min() > self.qmin - 0.5 and steps.max() < self.qmax + 0.5)


def unsigned_grid(params: QParams) -> QParams:
    """The same real values on a uint8 grid: a signed 8-bit range shifted by 128 (``q + 128``, zero point
    ``+ 128``), exact; VNNI's ``vpdpbusd`` multiplies unsigned activations."""
    if params.qmin >= 0 or params.qmin < -128 or params.qmax > 127:
        return params
    return QParams(params.scale, params.zero_point + 128, params.qmin + 128, params.qmax + 128)


def fake_quant_qparams(fake_quant: Cell) -> QParams:
    """The grid of a ``FakeQuantWithMinMaxObserver``: its nudged range over ``quant_range`` (float32, as the op)."""
    qmin, qmax = (int(v) for v in fake_quant.quant_range)
    f32 = np.float32
    low = np.asarray(fake_quant.minq.asnumpy(), f32).reshape(-1)
    high = np.asarray(fake_quant.maxq.asnumpy(), f32).reshape(-1)
    if getattr(fake_quant, "symmetric", False):
        peak = np.maximum(np.abs(low), high)
        low, high = -peak, peak
    span = high - low
    scale = np.where(span == 0, f32(1), span / f32(qmax - qmin)).astype(f32)
    from_min = np.where(span == 0, f32(0), f32(qmin) - low / scale).astype(f32)
    zero_point = np.clip(np.floor(from_min + f32(0.5)), qmin, qmax).astype(np.int64)
    return QParams(scale.astype(np.float64), zero_point, qmin, qmax)


def _type(cell: Any) -> str:
    return type(cell).__name__


def _act_bounds(act: Any, out: QParams) -> tuple[int, int] | None:
    """Integer clamp of a fusable activation on ``out``'s grid, None if it cannot be fused."""
    name = _type(act)
    zy, lo, hi = int(out.zero_point[0]), out.qmin, out.qmax
    if name == "ReLU":
        return max(lo, zy), hi
    if name == "ReLU6":
        return max(lo, zy), min(hi, zy + int(np.round(6.0 / out.scale[0])))
    if name in ("Identity", "NoneType"):
        return lo, hi
    return None


def _folded(layer: Cell) -> tuple[np.ndarray, np.ndarray | None]:
    """(weight, bias) as float64 with BatchNorm folded in, as each layer computes in inference."""
    weight = np.asarray(layer.weight.asnumpy(), np.float64)
    bias = getattr(layer, "bias", None)
    bias = None if bias is None or not getattr(layer, "has_bias", True) else np.asarray(bias.asnumpy(), np.float64)
    kind = _type(layer)
    holder = layer.batchnorm if kind == "Conv2dBnWithoutFoldQuant" else layer
    if not hasattr(holder, "moving_mean"):
        return weight, bias
    gamma, beta, mean, var = (np.asarray(getattr(holder, n).asnumpy(), np.float64)
                              for n in ("gamma", "beta", "moving_mean", "moving_variance"))
    factor = gamma / np.sqrt(var + float(holder.eps))
    weight = weight * factor.reshape(-1, *([1] * (weight.ndim - 1)))
    shift = beta - factor * mean
    if kind == "Conv2dBnFoldQuantOneConv" or bias is None:  # OneConv ignores its bias
        return weight, shift
    if kind == "Conv2dBnWithoutFoldQuant":  # BN(conv + b)
        return weight, shift + factor * bias
    return weight, shift + bias  # Conv2dBnFoldQuant: conv(x, w_folded, bias) + shift


def _weight_qparams(layer: Cell, weight: np.ndarray) -> QParams:
    fake_quant = getattr(layer, "fake_quant_weight", None)
    if fake_quant is not None and getattr(layer, "fake", True) and _type(layer) != "Conv2dBnWithoutFoldQuant":
        params = fake_quant_qparams(fake_quant)
    else:  # the trained range is the unfolded weight's: take a symmetric per-channel range of the folded one
        peak = np.abs(weight.reshape(weight.shape[0], -1)).max(axis=1)
        params = QParams(np.maximum(peak / 127.0, 1e-12), np.full(weight.shape[0], 128), 1, 255)
    channels = weight.shape[0]
    return QParams(np.broadcast_to(params.scale, (channels,)).copy(),
                   np.broadcast_to(params.zero_point, (channels,)).copy(), params.qmin, params.qmax)


def _pair_of(value) -> tuple[int, int]:
    """(h, w) from an int or a tuple whose last two items are (h, w) (MindSpore keeps (1, 1, h, w) too)."""
    values = np.broadcast_to(np.asarray(value, np.int64).reshape(-1), (2,)) if np.ndim(value) == 0 \
        else np.asarray(value, np.int64).reshape(-1)[-2:]
    return int(values[0]), int(values[1])


def _fold_weight_zero_points(q: np.ndarray, zw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, zero points, signs): ``q - zw`` stored where it fits int8, negated where only its negation
    does (the sign goes into the channel's scale), so the kernel skips the weight zero-point terms.

    A symmetric range nudged half a step off centre gives ``q - zw`` in [-127, 128]: negated, it fits.
    Channels where neither fits keep their ``q`` and ``zw``. The products are unchanged exactly.
    """
    q, zw = q.astype(np.int64), zw.astype(np.int64).copy()
    channels = q.shape[0]
    centred = q - zw.reshape(-1, *([1] * (q.ndim - 1)))
    flat = centred.reshape(channels, -1)
    sign = np.ones(channels)
    for c in range(channels):
        if flat[c].max() <= 127 and flat[c].min() >= -128:
            q[c], zw[c] = centred[c], 0
        elif flat[c].min() >= -127 and flat[c].max() <= 128:
            q[c], zw[c], sign[c] = -centred[c], 0, -1.0
    return q, zw, sign


def _const(values: np.ndarray, dtype, name: str) -> Parameter:
    return Parameter(Tensor(np.ascontiguousarray(values, dtype=dtype)), name=name, requires_grad=False)


class Int8Layer(Cell):
    """A convolution or dense layer run with int8 x int8 -> int32 kernels (made by :func:`convert_to_int8`).

    Input: float32 (values on ``in_qparams``' grid when given), or with ``integer_input`` the 8-bit
    integers of that grid. Output: float32, on ``out_qparams``' grid when an activation fake quant was
    fused, else the dequantized accumulators plus bias; with ``integer_output`` (fused layers only) the
    8-bit integers of ``out_qparams``' grid.
    """

    def __init__(self, layer: Cell, in_qparams: QParams | None, out_qparams: QParams | None, act: Any):
        super().__init__()
        weight, bias = _folded(layer)
        self.is_conv = weight.ndim == 4
        if self.is_conv:
            self.stride, self.dilation = _pair_of(layer.stride), _pair_of(layer.dilation)
            self.pad_mode = str(layer.pad_mode).lower()
            self.padding = layer.padding
            self.group = int(getattr(layer, "group", 1))
        wq = _weight_qparams(layer, weight)
        shift = 128 if wq.qmin >= 0 else 0  # int8 storage of an unsigned grid
        q, zw, sign = _fold_weight_zero_points(wq.quantize(weight, axis=0) - shift, wq.zero_point - shift)
        wq = QParams(wq.scale * sign, wq.zero_point, wq.qmin, wq.qmax)
        self.weight = _const(q, np.int8, "weight")
        self.w_zero_point = _const(zw, np.int32, "w_zero_point") if np.any(zw) else None
        self.w_scale = _const(wq.scale, np.float32, "w_scale")
        self.in_qparams, self.out_qparams, self.act_name = in_qparams, out_qparams, _type(act)
        channels = weight.shape[0]
        bounds = _act_bounds(act, out_qparams) if out_qparams is not None else None
        self.fused = in_qparams is not None and bounds is not None
        if in_qparams is not None:
            self.x_scale = _const(in_qparams.scale[:1], np.float32, "x_scale")
            self.x_zero_point = int(in_qparams.zero_point[0])
            acc_scale = in_qparams.scale[0] * wq.scale
            self.acc_scale = _const(acc_scale, np.float32, "acc_scale")
            # -zx * sum(w - zw) per output channel is a constant: folded into the int32 bias
            bias_q = np.zeros(channels) if bias is None else np.round(bias / acc_scale)
            folded = self.x_zero_point * (q - zw.reshape(-1, *([1] * (q.ndim - 1)))).reshape(channels, -1).sum(axis=1)
            self.bias = _const(bias_q - folded, np.int32, "bias")
        else:
            self.x_zero_point = 0
            self.bias = None if bias is None else _const(bias, np.float32, "bias")
        if self.fused:
            self.multiplier = _const(acc_scale / out_qparams.scale[0], np.float32, "multiplier")
            self.out_low, self.out_high = bounds
        if out_qparams is not None:
            self.y_scale = _const(out_qparams.scale[:1], np.float32, "y_scale")
            self.y_zero_point = int(out_qparams.zero_point[0])
        self.channels = channels
        self.integer_input = False
        self.integer_output = False
        self.handover = None  # set by convert_to_int8: integers offered by this call's producers

    def _input_integers(self, x):
        """The 8-bit input: ``x`` itself (``integer_input``), the integers a producer offered for it, or ``x``
        quantized onto the input grid."""
        p = self.in_qparams
        if self.integer_input:
            return x
        if self.handover is not None:
            key = grid_key(p.scale[0], p.zero_point[0], p.dtype)
            q = self.handover.take(x, key, p.qmin, p.qmax)
            if q is not None:
                return q
        return ops.int8_quantize(x, self.x_scale, self.x_zero_point, p.qmin, p.qmax, p.dtype, 1)

    def _accumulate(self, xq):
        folded = self.in_qparams is not None
        if self.is_conv:
            return ops.int8_conv2d(xq, self.weight, self.x_zero_point, self.w_zero_point, self.stride, self.pad_mode,
                                   self.padding, self.dilation, self.group, folded)
        return ops.int8_dense(xq, self.weight, self.x_zero_point, self.w_zero_point, folded)

    def construct(self, x):
        if self.in_qparams is not None:
            acc = self._accumulate(self._input_integers(x))
            if self.fused:
                q = self.out_qparams
                yq = ops.int8_requantize(acc, self.bias, self.multiplier, self.y_zero_point, self.out_low,
                                         self.out_high, q.dtype, 1)
                if self.integer_output:
                    return yq
                y = ops.int8_dequantize(yq, self.y_scale, self.y_zero_point, 1)
                if self.handover is not None:
                    self.handover.offer(self, y, yq, grid_key(q.scale[0], q.zero_point[0], q.dtype), self.out_low,
                                        self.out_high)
                return y
            if self.bias is not None:
                acc = acc + self._per_channel(self.bias, acc)
            y = ops.int8_dequantize(acc, self.acc_scale, 0, 1)
        else:
            x_scale = ops.int8_dynamic_scale(x)
            xq = ops.int8_quantize(x, x_scale, 0, -127, 127, "int8", 1)
            acc = self._accumulate(xq)
            y = ops.int8_dequantize(acc, x_scale * self.w_scale, 0, 1)
            if self.bias is not None:
                y = y + self._per_channel(self.bias, y)
        if self.act_name == "ReLU":
            y = ops.relu(y)
        elif self.act_name == "ReLU6":
            y = ops.relu6(y)
        if self.out_qparams is not None:
            p = self.out_qparams
            y = ops.int8_dequantize(ops.int8_quantize(y, self.y_scale, self.y_zero_point, p.qmin, p.qmax, p.dtype, 1),
                                    self.y_scale, self.y_zero_point, 1)
        return y

    def _per_channel(self, values, like):
        shape = [1] * len(like.shape)
        shape[1] = self.channels
        return ops.reshape(values, tuple(shape))

    def extend_repr(self) -> str:
        kind = "conv2d" if self.is_conv else "dense"
        source = "dynamic" if self.in_qparams is None else f"zero_point={self.x_zero_point}"
        return (f"{kind}, out_channels={self.channels}, input={source}, fused_activation={self.fused}, "
                f"integer_input={self.integer_input}, integer_output={self.integer_output}")


class _Passthrough(Cell):
    """Stands where a fused ActQuant was: the preceding Int8Layer already produced its output."""

    def construct(self, x):
        return x


class InputQuant(Cell):
    """A quantized layer preceded by the fake quant of its input (post-training quantization puts one
    where no ActQuant gives the layer its input grid). Converted, the int8 layer quantizes its input
    onto that grid itself and the fake quant is dropped."""

    def __init__(self, fake_quant_input: Cell, layer: Cell):
        super().__init__()
        self.fake_quant_input = fake_quant_input
        self.layer = layer

    def construct(self, x):
        return self.layer(self.fake_quant_input(x))


def _top_level_quant_cells(network: Cell) -> list[tuple[str, Cell]]:
    found: list[tuple[str, Cell]] = []
    for name, cell in network.cells_and_names():
        if _type(cell) not in _LAYERS + _PRODUCERS:
            continue
        if any(name.startswith(outer + ".") for outer, _ in found):
            continue
        found.append((name, cell))
    return found


def _trace(network: Cell, cells: list[tuple[str, Cell]], inputs: tuple) -> list[tuple[str, Any, Any]]:
    """(name, first input, output) of each quant cell, in the order a call on ``inputs`` runs them
    (one compiled graph of the whole network returning them: :class:`.watch.WatchedNetwork`)."""
    from .watch import WatchedNetwork

    was_training = network.training
    network.set_train(False)
    try:
        _, calls = WatchedNetwork(network, cells)(*inputs)
    finally:
        network.set_train(was_training)
    return [(call.name, call.x, call.y) for call in calls]


def _producer_qparams(cell: Cell) -> QParams | None:
    fake_quant = cell if _type(cell).startswith("FakeQuant") else getattr(cell, "fake_quant_act", None)
    return None if fake_quant is None else fake_quant_qparams(fake_quant)


def _replace(network: Cell, name: str, new: Cell) -> None:
    """Put ``new`` where the sub-cell ``name`` is, at the same place in its parent's order of cells (a
    SequentialCell runs its cells in that order)."""
    *path, leaf = name.split(".")
    parent = network
    for part in path:
        parent = getattr(parent, part)
    cells = parent.__dict__["_cells"]
    order = list(cells)
    setattr(parent, leaf, new)
    if leaf in order:
        reordered = [(key, cells[key]) for key in order]
        cells.clear()
        cells.update(reordered)


def convert_to_int8(network: Cell, *inputs: Any) -> Cell:
    """A copy of the QAT ``network`` whose convolutions and dense layers compute with int8 kernels.

    Args:
        network (Cell): a network holding ``Conv2dQuant`` / ``DenseQuant`` / ``Conv2dBnFoldQuant*``
            layers and ``ActQuant`` / ``FakeQuantWithMinMaxObserver`` cells.
        inputs (Tensor): optional example inputs; one call on them finds which fake quant feeds
            which layer. Without them the cells' definition order is taken as their call order.

    Returns:
        Cell: the converted network (in inference mode); ``network`` is left unchanged.

    Raises:
        TypeError: ``network`` is not a Cell.
        ValueError: ``network`` holds no quantized convolution or dense layer.
    """
    if not isinstance(network, Cell):
        raise TypeError(f"network: expected a Cell, got {type(network).__name__}")
    net = copy.deepcopy(network)
    cells = _top_level_quant_cells(net)
    if not any(_type(c) in _LAYERS for _, c in cells):
        raise ValueError("network: expected a network with quantized layers (Conv2dQuant, DenseQuant, "
                         "Conv2dBnFoldQuant...), found none")
    if inputs:
        events = _trace(net, cells, inputs)
    else:
        events = [(name, None, None) for name, _ in cells]
    by_name = dict(cells)
    calls = {name: sum(1 for event in events if event[0] == name) for name in by_name}
    fused_acts: dict[str, str] = {}  # fused ActQuant name -> the layer that produces its output
    converted: dict[str, Int8Layer] = {}
    links: list[tuple[str, str]] = []  # (producing layer, consuming layer) on one integer grid
    input_fake_quants = {id(cell.fake_quant_input) for _, cell in net.cells_and_names() if isinstance(cell, InputQuant)}
    for i, (name, x, y) in enumerate(events):
        layer = by_name[name]
        if _type(layer) not in _LAYERS:
            continue
        in_q = None
        if i > 0 and _type(by_name[events[i - 1][0]]) in _PRODUCERS:
            candidate = _producer_qparams(by_name[events[i - 1][0]])
            if candidate is not None and candidate.scale.size == 1 and (x is None or candidate.on_grid(x)):
                in_q = unsigned_grid(candidate)
                producer = fused_acts.get(events[i - 1][0])
                if producer is not None and calls[events[i - 1][0]] == 1:
                    links.append((producer, name))
        out_q, act = None, getattr(layer, "activation", None) if getattr(layer, "activation_flag", False) else None
        # the output grid: an ActQuant right after the layer, or the input fake quant of the next layer
        nxt = by_name[events[i + 1][0]] if i + 1 < len(events) else None
        if nxt is not None and (_type(nxt) == "ActQuant" or id(nxt) in input_fake_quants):
            nxt_name, nxt_x, _ = events[i + 1]
            same_input = y is None or (nxt_x is not None and nxt_x.shape == y.shape and np.array_equal(nxt_x, y))
            nxt_q = _producer_qparams(nxt)
            if act is None and same_input and nxt_q is not None and nxt_q.scale.size == 1 \
                    and _type(getattr(nxt, "act", None)) in _FUSABLE_ACTS \
                    and not getattr(nxt, "fake_before", False) and calls[nxt_name] == 1:
                out_q, act = unsigned_grid(nxt_q), getattr(nxt, "act", None)
                fused_acts[nxt_name] = name
        converted[name] = Int8Layer(layer, in_q, out_q, act)
        _replace(net, name, converted[name])
    for name in fused_acts:
        _replace(net, name, _Passthrough())
    handover = Handover()
    for name, cell in cells:
        if name not in fused_acts and id(cell) not in input_fake_quants:
            quantized = _quantized_activation(cell, handover)
            if quantized is not None:
                _replace(net, name, quantized)
    for layer in converted.values():
        layer.handover = handover
    for _, cell in net.cells_and_names():
        if isinstance(cell, InputQuant) and isinstance(cell.layer, Int8Layer) and cell.layer.in_qparams is not None:
            cell.fake_quant_input = _Passthrough()
    net.set_train(False)
    if inputs and links:
        # only a layer that requantizes onto its output grid (fused) has integers to hand over
        decide_links(net, [(converted[a], converted[b]) for a, b in links if calls[b] == 1 and converted[a].fused],
                     inputs)
    return net


def _quantized_activation(cell: Cell, handover: Handover) -> QuantizedActivation | None:
    """The integer form of an unfused per-tensor ``ActQuant`` (ReLU, ReLU6 or none) or fake quant, else None."""
    kind = _type(cell)
    if kind not in ("ActQuant", "FakeQuantWithMinMaxObserver") or getattr(cell, "fake_before", False):
        return None
    if getattr(cell, "per_channel", False):
        return None
    params = _producer_qparams(cell)
    if params is None or params.scale.size != 1:
        return None
    params = unsigned_grid(params)
    bounds = _act_bounds(getattr(cell, "act", None), params)
    if bounds is None:
        return None
    return QuantizedActivation(float(params.scale[0]), int(params.zero_point[0]), bounds[0], bounds[1], params.dtype,
                               handover)


def export_int8(network: Cell, *inputs: Any, file_name: str, target: Any = "llvm", **kwargs: Any) -> str:
    """Convert the QAT ``network`` with :func:`convert_to_int8` and export it with :func:`aotnn.export`.

    Args:
        network (Cell): the QAT network.
        inputs (Tensor): example inputs fixing the input signature (also used to trace the network).
        file_name (str): output path.
        target: 'llvm' (this host), 'aarch64', or a TVM target dict; cross targets give a BUNDLE.
        kwargs: passed on to :func:`aotnn.export` (``file_format``, ``tuning_db``).

    Returns:
        str: the path written.
    """
    from ...jit.export import export

    if not inputs:
        raise ValueError("inputs: expected at least one example input, got none")
    converted = convert_to_int8(network, *inputs)
    return export(converted, *inputs, file_name=file_name, target=None if target == "llvm" else target, **kwargs)
