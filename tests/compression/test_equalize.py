"""Cross-layer equalization: the float network's output is unchanged (against a PyTorch forward pass of
the original parameters), the channel ranges of each pair end equal and the per-tensor range ratio
shrinks; pairs through ReLU6 or with a second consumer are left alone."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant.equalize import cross_layer_equalize, equalization_pairs, equalize_pair

EPS = 1e-5
X = np.random.default_rng(3).standard_normal((4, 3, 10, 10)).astype(np.float32)


class Chain(nn.Cell):
    """conv -> BN -> ReLU -> conv (bias) -> ReLU -> conv -> ReLU6 -> conv -> global mean -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(8, eps=EPS)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 6, 3, pad_mode="pad", padding=1, has_bias=True)
        self.relu2 = nn.ReLU()
        self.conv3 = nn.Conv2d(6, 5, 1, has_bias=True)
        self.relu6 = nn.ReLU6()
        self.conv4 = nn.Conv2d(5, 4, 1, has_bias=True)
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        x = self.relu2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        x = self.conv4(self.relu6(self.conv3(x)))
        return self.fc(x.mean(axis=(2, 3)))


class Shared(nn.Cell):
    """conv -> ReLU whose output feeds two convolutions (no pair may be equalized)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 1, has_bias=True)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 2, 1, has_bias=True)
        self.conv3 = nn.Conv2d(4, 2, 1, has_bias=True)

    def construct(self, x):
        x = self.relu(self.conv1(x))
        return self.conv2(x) + self.conv3(x)


def _randomize(net: nn.Cell, seed: int) -> None:
    """Weights whose channel ranges differ by up to 100x (what equalization is for)."""
    rng = np.random.default_rng(seed)
    for param in net.get_parameters():
        shape = param.shape
        if param.name.endswith("weight"):
            value = rng.normal(0, 1, shape) * np.exp(rng.uniform(-2.3, 2.3, (shape[0],) + (1,) * (len(shape) - 1)))
        elif param.name.endswith("moving_variance"):
            value = rng.uniform(0.5, 2.0, shape)
        elif param.name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.normal(0, 0.2, shape)
        param.set_data(Tensor(value.astype(np.float32)))


def _torch_chain(p: dict, x: np.ndarray) -> np.ndarray:
    """Chain's forward pass in PyTorch (float64) from parameters by name."""
    t = {k: torch.tensor(v, dtype=torch.float64) for k, v in p.items()}
    y = F.conv2d(torch.tensor(x, dtype=torch.float64), t["conv1.weight"], padding=1)
    y = F.batch_norm(y, t["bn1.moving_mean"], t["bn1.moving_variance"], t["bn1.gamma"], t["bn1.beta"], eps=EPS)
    y = F.relu(F.conv2d(F.relu(y), t["conv2.weight"], t["conv2.bias"], padding=1))
    y = F.conv2d(F.relu6(F.conv2d(y, t["conv3.weight"], t["conv3.bias"])), t["conv4.weight"], t["conv4.bias"])
    return F.linear(y.mean(dim=(2, 3)), t["fc.weight"], t["fc.bias"]).numpy()


def _params(net: nn.Cell) -> dict:
    return {p.name: p.asnumpy().astype(np.float64) for p in net.get_parameters()}


def _channel_ranges(weight: np.ndarray, axis: int) -> np.ndarray:
    return np.abs(np.moveaxis(weight, axis, 0).reshape(weight.shape[axis], -1)).max(axis=1)


@pytest.fixture(scope="module")
def equalized():
    aotnn.set_seed(0)
    net = Chain()
    net.set_train(False)
    _randomize(net, 1)
    before = _params(net)
    pairs = cross_layer_equalize(net, X, iterations=8)
    return net, before, pairs


def test_pairs_are_the_relu_links_only(equalized):
    _, _, pairs = equalized
    assert [(p.first, p.batchnorm, p.second) for p in pairs] == [("conv1", "bn1", "conv2"), ("conv2", None, "conv3")]


def test_float_output_unchanged(equalized):
    net, before, _ = equalized
    reference = _torch_chain(before, X)
    np.testing.assert_allclose(net(Tensor(X)).asnumpy(), reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max())
    # the equalized parameters are stored as float32: equal up to its rounding
    np.testing.assert_allclose(_torch_chain(_params(net), X), reference, rtol=1e-5)


def test_channel_ranges_equal_and_range_ratio_shrinks(equalized):
    net, before, _ = equalized
    after = _params(net)

    def folded_conv1(p):
        factor = p["bn1.gamma"] / np.sqrt(p["bn1.moving_variance"] + EPS)
        return p["conv1.weight"] * factor[:, None, None, None]

    # conv2 sits in two pairs: after the sweeps both of its sides match their neighbours closely (exactly the
    # side equalized last)
    np.testing.assert_allclose(_channel_ranges(folded_conv1(after), 0), _channel_ranges(after["conv2.weight"], 1),
                               rtol=0.05)
    np.testing.assert_allclose(_channel_ranges(after["conv2.weight"], 0), _channel_ranges(after["conv3.weight"], 1),
                               rtol=1e-6)
    # the random weights spread the output channel ranges of conv1 and conv2 over up to 100x
    for weight, axis in ((folded_conv1, 0), ("conv2.weight", 0)):
        get = weight if callable(weight) else (lambda p, k=weight: p[k])
        ratio = [(lambda r: r.max() / r.min())(_channel_ranges(get(p), axis)) for p in (before, after)]
        assert ratio[1] < 0.5 * ratio[0], ratio
    # the ReLU6 pair is untouched (conv3's input side belongs to the conv2 pair)
    for key in ("conv3.bias", "conv4.weight", "conv4.bias"):
        np.testing.assert_array_equal(after[key], before[key])


def test_second_consumer_blocks_equalization():
    net = Shared()
    net.set_train(False)
    _randomize(net, 2)
    assert equalization_pairs(net, X) == []


def test_equalize_pair_rejects_mismatched_channels():
    first, second = nn.Conv2d(3, 4, 1), nn.Conv2d(5, 2, 1)
    with pytest.raises(ValueError, match="second: expected 4 input channels"):
        equalize_pair(first, None, second)


def test_iterations_checked():
    with pytest.raises(ValueError, match="iterations"):
        cross_layer_equalize(Shared(), X, iterations=0)
