"""Residual additions in the int8 graph: the ReLU after an addition quantizes onto its uint8 grid and hands its
integers to the next int8 layer; the network against a numpy int8 forward pass written from the documented
formulas (affine grids, int32 accumulation, float32 multipliers, round half to even)."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import PostTrainingQuantization
from aotnn.compression.quant.export_int8 import Int8Layer, convert_to_int8
from aotnn.compression.quant.integer_handover import Handover, QuantizedActivation

RNG = np.random.default_rng(11)
CALIBRATION = [RNG.standard_normal((6, 3, 10, 10)).astype(np.float32) for _ in range(2)]
HELD_OUT = RNG.standard_normal((8, 3, 10, 10)).astype(np.float32)
F32 = np.float32


class ResidualNet(nn.Cell):
    """conv -> ReLU -> [conv -> ReLU -> 1x1 conv] + identity -> ReLU -> conv (stride 2) -> dense."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.act0 = nn.ReLU()
        self.conv1 = nn.Conv2d(8, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 1, has_bias=True)
        self.act2 = nn.ReLU()
        self.down = nn.Conv2d(8, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        self.flatten = nn.Flatten()
        self.head = nn.Dense(4 * 5 * 5, 5)

    def construct(self, x):
        x = self.act0(self.stem(x))
        x = self.act2(x + self.conv2(self.act1(self.conv1(x))))
        return self.head(self.flatten(self.down(x)))


@pytest.fixture(scope="module")
def nets():
    """(float network, its PTQ fake-quant form, the int8 conversion)."""
    aotnn.set_seed(5)
    net = ResidualNet()
    rng = np.random.default_rng(5)
    for param in net.get_parameters():
        param.set_data(Tensor(rng.normal(0, 0.4 if param.name.endswith("weight") else 0.2, param.shape)
                              .astype(np.float32)))
    net.set_train(False)
    fake_quant_net = PostTrainingQuantization().apply(net, CALIBRATION)
    return net, fake_quant_net, convert_to_int8(fake_quant_net, Tensor(CALIBRATION[0][:1]))


def _grid(fake_quant) -> tuple[np.float32, int]:
    """uint8 grid of a fake quant's range: scale (max - min) / 255 in float32, zero point round(-min / scale)."""
    low, high = F32(fake_quant.minq.asnumpy()[0]), F32(fake_quant.maxq.asnumpy()[0])
    scale = F32((high - low) / F32(255))
    return scale, int(np.floor(-low / scale + F32(0.5)))


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _int8_forward(p: dict, grids: dict, x: np.ndarray) -> np.ndarray:
    def weight(w):
        scale = (np.abs(w.reshape(len(w), -1)).max(axis=1) / 127).astype(F32).astype(np.float64)
        return np.clip(np.round(w / scale.reshape(-1, *([1] * (w.ndim - 1)))), -127, 127).astype(np.int64), scale

    def quantize(v, grid, low=0):
        return np.clip(np.round(v.astype(F32) / grid[0]) + grid[1], low, 255).astype(np.int64)

    def accumulate(q, grid, name, stride=1, pad=0):
        wq, ws = weight(p[name + ".weight"])
        acc_scale = float(grid[0]) * ws
        acc = _conv(q - grid[1], wq, stride, pad) if wq.ndim == 4 else (q - grid[1]) @ wq.T
        shape = (1, -1, 1, 1) if wq.ndim == 4 else (1, -1)
        return acc + np.round(p[name + ".bias"] / acc_scale).reshape(shape), acc_scale.reshape(shape)

    def requantize(acc_and_scale, out):
        acc, acc_scale = acc_and_scale
        multiplier = (acc_scale / float(grids[out][0])).astype(F32)
        return np.clip(np.round(acc.astype(F32) * multiplier) + grids[out][1], grids[out][1], 255).astype(np.int64)

    def dequantize(acc_and_scale):
        acc, acc_scale = acc_and_scale
        return acc.astype(F32) * acc_scale.astype(F32)

    q0 = requantize(accumulate(quantize(x, grids["stem"]), grids["stem"], "stem", pad=1), "act0")
    q1 = requantize(accumulate(q0, grids["act0"], "conv1", pad=1), "act1")
    total = (q0 - grids["act0"][1]).astype(F32) * grids["act0"][0] + dequantize(accumulate(q1, grids["act1"], "conv2"))
    q2 = quantize(total, grids["act2"], low=grids["act2"][1])  # the ReLU is the clamp at the zero point
    down = dequantize(accumulate(q2, grids["act2"], "down", stride=2, pad=1)).reshape(len(x), -1)
    return dequantize(accumulate(quantize(down, grids["head"]), grids["head"], "head"))


class _Recording(Handover):
    """A hand-over that records whether each look-up found integers."""

    def __init__(self):
        super().__init__()
        self.found: list[bool] = []

    def take(self, x, key, qmin, qmax):
        q = super().take(x, key, qmin, qmax)
        self.found.append(q is not None)
        return q


def _with_handover(int8_net, handover) -> None:
    for _, cell in int8_net.cells_and_names():
        if isinstance(cell, (Int8Layer, QuantizedActivation)) and (handover is not None or isinstance(cell, Int8Layer)):
            cell.handover = handover


def test_relu_after_addition_hands_integers_on(nets):
    _, fake_quant_net, int8_net = nets
    assert isinstance(int8_net.act2, QuantizedActivation)
    assert all(isinstance(cell.handover, Handover) for _, cell in int8_net.cells_and_names()
               if isinstance(cell, Int8Layer))
    x = Tensor(HELD_OUT[:2])  # a shape the conversion's trace did not compile: one fresh capture of the network
    recording = _Recording()
    network = convert_to_int8(fake_quant_net, Tensor(CALIBRATION[0][:1]))
    _with_handover(network, recording)
    handed = network(x).asnumpy()
    assert recording.found.count(True) >= 1  # the strided conv after the addition reads act2's integers
    plain = convert_to_int8(fake_quant_net, Tensor(CALIBRATION[0][:1]))
    _with_handover(plain, None)  # every int8 layer quantizes its float input itself
    np.testing.assert_array_equal(plain(x).asnumpy(), handed)  # quantize(dequantize(q)) == q, exactly


def test_residual_network_matches_numpy_int8_reference(nets):
    net, fake_quant_net, int8_net = nets
    p = {param.name: param.asnumpy().astype(np.float64) for param in net.get_parameters()}
    grids = {name: _grid(getattr(fake_quant_net, name).fake_quant_act) for name in ("act0", "act1", "act2")}
    grids["stem"] = _grid(fake_quant_net.stem.fake_quant_input)
    grids["head"] = _grid(fake_quant_net.head.fake_quant_input)
    reference = _int8_forward(p, grids, HELD_OUT)
    # the reference hands conv1's integers to conv2 (a link), act0's are also read by the addition (none)
    assert int8_net.conv1.integer_output and int8_net.conv2.integer_input
    assert not int8_net.stem.layer.integer_output and not int8_net.conv1.integer_input
    out = int8_net(Tensor(HELD_OUT)).asnumpy()
    assert out.shape == (8, 5) and out.dtype == np.float32
    # float32 multipliers and scales against the reference's float64 weight scales: a rounding tie may land
    # one step apart and travel on; most logits agree to float32 rounding
    head_step = float(grids["head"][0]) * np.abs(p["head.weight"]).max() * 4
    assert np.abs(out - reference).max() <= head_step, (np.abs(out - reference).max(), head_step)
    assert np.mean(np.abs(out - reference) <= 1e-4 * np.abs(reference).max()) >= 0.9
    logits = net(Tensor(HELD_OUT)).asnumpy()
    assert np.linalg.norm(out - logits) <= 0.1 * np.linalg.norm(logits)


def _layers(network) -> list[Int8Layer]:
    return [cell for _, cell in network.cells_and_names() if isinstance(cell, Int8Layer)]


def test_links_are_decided_without_building_the_converted_network(nets):
    """Converting builds (or loads) one graph, the trace; the links come from a symbolic capture."""
    from aotnn.jit.compiled import STATS

    _, fake_quant_net, _ = nets
    x = CALIBRATION[1][:3]  # a shape not traced before in this module
    before = STATS["builds"] + STATS["disk_hits"]
    network = convert_to_int8(fake_quant_net, Tensor(x))
    assert STATS["builds"] + STATS["disk_hits"] - before == 1
    linked = [(layer.integer_input, layer.integer_output) for layer in _layers(network)]
    assert linked == [(False, False), (False, True), (True, False), (False, False), (False, False)]


def test_linked_network_equals_unlinked(nets):
    """Integers handed over a link are exactly what the consumer would quantize the float tensor to."""
    _, fake_quant_net, int8_net = nets
    x = Tensor(np.random.default_rng(3).standard_normal((8, 3, 10, 10)).astype(np.float32))
    linked = int8_net(x).asnumpy()
    unlinked = convert_to_int8(fake_quant_net, Tensor(CALIBRATION[0][:1]))
    assert any(layer.integer_input for layer in _layers(unlinked))
    for _, cell in unlinked.cells_and_names():
        if isinstance(cell, Int8Layer):
            cell.integer_input = cell.integer_output = False
        cell._jit_cache.clear()
    np.testing.assert_array_equal(unlinked(x).asnumpy(), linked)
