"""Bias correction and the 'mse' observer of post-training quantization: the weight-rounding shift against
a loop over the documented formula, channel means against numpy, the corrected network's mean output error
against the uncorrected one's on held-out inputs, and the MSE range against a numpy 8-bit quantizer."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import PostTrainingQuantization
from aotnn.compression.quant.bias_correction import ChannelMeans, weight_rounding_shift
from aotnn.compression.quant.observer import MSEObserver, create_observer


def test_weight_rounding_shift_matches_loop():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((6, 2, 3, 3))  # 3 groups of 2 input channels, 2 outputs each
    quantized = np.round(weight * 4) / 4
    mean = rng.standard_normal(6)
    expected = np.zeros(6)
    for o in range(6):
        g = o // 2
        for c in range(2):
            expected[o] += (quantized[o, c] - weight[o, c]).sum() * mean[2 * g + c]
    np.testing.assert_allclose(weight_rounding_shift(weight, quantized, mean, group=3), expected, rtol=1e-12)
    dense = rng.standard_normal((4, 5))
    np.testing.assert_allclose(weight_rounding_shift(dense, dense + 0.1, mean[:5]), 0.1 * np.full(4, mean[:5].sum()))


def test_weight_rounding_shift_errors_name_the_argument():
    with pytest.raises(ValueError, match="input_mean: expected 6 channels"):
        weight_rounding_shift(np.zeros((6, 2, 1, 1)), np.zeros((6, 2, 1, 1)), np.zeros(5), group=3)
    with pytest.raises(ValueError, match="quantized: expected"):
        weight_rounding_shift(np.zeros((6, 2)), np.zeros((6, 3)), np.zeros(2))


def test_channel_means_match_numpy():
    rng = np.random.default_rng(1)
    batches = [rng.standard_normal((n, 3, 4, 5)) + 2 for n in (2, 5)]
    means = ChannelMeans()
    for batch in batches:
        means.update("x", batch)
    np.testing.assert_allclose(means["x"], np.concatenate(batches).mean(axis=(0, 2, 3)), rtol=1e-12)
    assert "y" not in means
    with pytest.raises(ValueError, match="expected 3 channels"):
        means.update("x", np.zeros((1, 4, 2, 2)))


class Small(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, pad_mode="valid", has_bias=True)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(16, 16, 3, pad_mode="valid", has_bias=True)
        self.fc = nn.Dense(16, 4)

    def construct(self, x):
        x = self.relu(self.conv2(self.relu(self.conv1(x))))
        return self.fc(x.mean(axis=(2, 3)))


def test_bias_correction_reduces_mean_output_error():
    """Per-tensor weights of channels 30x apart round coarsely: the corrected network's mean logit error
    over held-out inputs is smaller than the uncorrected one's."""
    aotnn.set_seed(0)
    net = Small()
    net.set_train(False)
    rng = np.random.default_rng(2)
    for param in net.get_parameters():
        shape = param.shape
        value = rng.normal(0, 0.3, shape)
        if param.name.endswith("weight"):
            value = value * np.exp(rng.uniform(-1.7, 1.7, (shape[0],) + (1,) * (len(shape) - 1)))
        param.set_data(Tensor(value.astype(np.float32)))
    inputs = (rng.standard_normal((96, 3, 8, 8)) + 1.0).astype(np.float32)
    calibration, held_out = [inputs[i:i + 16] for i in range(0, 64, 16)], inputs[64:]
    reference = net(Tensor(held_out)).asnumpy().astype(np.float64)
    errors = []
    for correct in (False, True):
        ptq = PostTrainingQuantization(per_channel=(False, False), bias_correction=correct)
        fake = ptq.apply(net, calibration)(Tensor(held_out)).asnumpy()
        errors.append(np.linalg.norm((fake - reference).mean(axis=0)))
    assert errors[1] < 0.5 * errors[0], errors


def _grid_mse(values: np.ndarray, low: float, high: float) -> float:
    """Mean squared error of rounding ``values`` onto the uint8 grid of [low, high] (clipping outside)."""
    scale = (high - low) / 255.0
    zero_point = np.round(-low / scale)
    q = np.clip(np.round(values / scale) + zero_point, 0, 255)
    return float(np.mean(((q - zero_point) * scale - values) ** 2))


def test_mse_observer_beats_minmax_and_percentile_ranges():
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.laplace(0, 1, 20000), [40.0, -30.0]])
    observer = MSEObserver()
    observer.update(values)
    low, high = (float(v[0]) for v in observer.range())
    assert -30.0 < low < 0 < high < 40.0
    chosen = _grid_mse(values, low, high)
    assert chosen < _grid_mse(values, -30.0, 40.0)
    for p in (99.0, 99.9, 99.99):
        assert chosen <= _grid_mse(values, np.percentile(values, 100 - p), np.percentile(values, p)) * 1.001


def test_mse_observer_keeps_uniform_range_and_checks_arguments():
    values = np.random.default_rng(4).uniform(0, 5, 50000)
    observer = create_observer("mse")
    observer.update(values)
    low, high = observer.range()
    assert low[0] == 0.0 and high[0] == pytest.approx(values.max(), rel=0.02)
    with pytest.raises(ValueError, match="num_bits"):
        MSEObserver(num_bits=1)
    with pytest.raises(ValueError, match="'mse'"):
        create_observer("kl")
    with pytest.raises(TypeError, match="bias_correction"):
        PostTrainingQuantization(bias_correction=1)
