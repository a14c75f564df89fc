"""Post-training quantization: observers against numpy, calibrated ranges against a numpy float forward pass,
and the int8 network against a numpy int8 forward pass on the same grids (documented formulas)."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import MinMaxObserver, PercentileObserver, PostTrainingQuantization
from aotnn.compression.quant.export_int8 import Int8Layer, convert_to_int8

RNG = np.random.default_rng(7)
CALIBRATION = [RNG.standard_normal((8, 3, 12, 12)).astype(np.float32) for _ in range(4)]
HELD_OUT = RNG.standard_normal((16, 3, 12, 12)).astype(np.float32)
EPS = 1e-5


class SmallFloat(nn.Cell):
    """conv -> BatchNorm -> ReLU -> conv (stride 2, bias) -> ReLU6 -> max-pool -> dense -> ReLU -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn1 = nn.BatchNorm2d(8, eps=EPS)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 6, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        self.act2 = nn.ReLU6()
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(6 * 3 * 3, 20)
        self.act3 = nn.ReLU()
        self.fc2 = nn.Dense(20, 5)

    def construct(self, x):
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.pool(self.act2(self.conv2(x)))
        return self.fc2(self.act3(self.fc1(self.flatten(x))))


def _params(net: nn.Cell) -> dict[str, np.ndarray]:
    return {p.name: p.asnumpy().astype(np.float64) for p in net.get_parameters()}


@pytest.fixture(scope="module")
def float_net():
    aotnn.set_seed(0)
    net = SmallFloat()
    rng = np.random.default_rng(1)
    for param in net.get_parameters():
        shape = param.shape
        if param.name.endswith("weight"):
            value = rng.normal(0, 0.5, shape)
        elif param.name.endswith("moving_variance"):
            value = rng.uniform(0.5, 2.0, shape)
        elif param.name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        else:  # bias, beta, moving_mean
            value = rng.normal(0, 0.2, shape)
        param.set_data(Tensor(value.astype(np.float32)))
    net.set_train(False)
    return net


def _conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """Cross-correlation of NCHW ``x`` with OIHW ``w`` (numpy, exact for integers held in int64/float64)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.result_type(x, w))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


def _pool(x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


def _folded(p: dict) -> tuple[np.ndarray, np.ndarray]:
    factor = p["bn1.gamma"] / np.sqrt(p["bn1.moving_variance"] + EPS)
    return p["conv1.weight"] * factor[:, None, None, None], p["bn1.beta"] - factor * p["bn1.moving_mean"]


def _float_forward(p: dict, x: np.ndarray) -> dict[str, np.ndarray]:
    """Every tensor a calibration observer watches: the input and each activation's output."""
    w1, b1 = _folded(p)
    a1 = np.maximum(_conv(x.astype(np.float64), w1, 1, 1) + b1[None, :, None, None], 0)
    a2 = np.clip(_conv(a1, p["conv2.weight"], 2, 1) + p["conv2.bias"][None, :, None, None], 0, 6)
    flat = _pool(a2).reshape(len(x), -1)
    a3 = np.maximum(flat @ p["fc1.weight"].T + p["fc1.bias"], 0)
    return {"input": x, "act1": a1, "act2": a2, "act3": a3, "logits": a3 @ p["fc2.weight"].T + p["fc2.bias"]}


def _grid(low: float, high: float) -> tuple[float, int]:
    """uint8 grid of [low, high] widened to hold 0: scale (high - low) / 255, zero point round(-low / scale)."""
    low, high = min(low, 0.0), max(high, 0.0)
    scale = (high - low) / 255
    return scale, int(np.floor(-low / scale + 0.5))


def _int8_forward(p: dict, x: np.ndarray, grids: dict) -> np.ndarray:
    """The int8 network of the documented scheme: symmetric per-channel int8 weights (max|w| / 127), uint8
    activations, int32 accumulation, int32 bias, requantization rounding half to even."""
    def weight(w):
        scale = np.abs(w.reshape(len(w), -1)).max(axis=1) / 127
        return np.clip(np.round(w / scale.reshape(-1, *([1] * (w.ndim - 1)))), -127, 127).astype(np.int64), scale

    def requantize(acc, bias, s_in, s_w, out, low_high, axis_shape):
        s_out, z_out = grids[out]
        bias_q = np.round(bias / (s_in * s_w))
        y = np.round((acc + bias_q.reshape(axis_shape)) * (s_in * s_w / s_out).reshape(axis_shape)) + z_out
        return np.clip(y, *low_high(z_out, s_out)).astype(np.int64)

    relu = lambda z, s: (z, 255)  # noqa: E731
    relu6 = lambda z, s: (z, min(255, z + int(np.round(6 / s))))  # noqa: E731
    s_x, z_x = grids["input"]
    xq = np.clip(np.round(x / s_x) + z_x, 0, 255).astype(np.int64)
    w1, b1 = _folded(p)
    w1q, s_w1 = weight(w1)
    q1 = requantize(_conv(xq - z_x, w1q, 1, 1), b1, s_x, s_w1, "act1", relu, (1, -1, 1, 1))
    w2q, s_w2 = weight(p["conv2.weight"])
    s1, z1 = grids["act1"]
    q2 = requantize(_conv(q1 - z1, w2q, 2, 1), p["conv2.bias"], s1, s_w2, "act2", relu6, (1, -1, 1, 1))
    s2, z2 = grids["act2"]
    flat = _pool(q2).reshape(len(x), -1)
    w3q, s_w3 = weight(p["fc1.weight"])
    q3 = requantize((flat - z2) @ w3q.T, p["fc1.bias"], s2, s_w3, "act3", relu, (1, -1))
    s3, z3 = grids["act3"]
    w4q, s_w4 = weight(p["fc2.weight"])
    return ((q3 - z3) @ w4q.T) * (s3 * s_w4) + p["fc2.bias"]


def _calibration_values(float_net) -> dict[str, np.ndarray]:
    p = _params(float_net)
    passes = [_float_forward(p, x) for x in CALIBRATION]
    return {key: np.concatenate([values[key].ravel() for values in passes]) for key in ("input", "act1", "act2",
                                                                                          "act3")}


def _range(fake_quant) -> tuple[float, float]:
    return float(fake_quant.minq.asnumpy()[0]), float(fake_quant.maxq.asnumpy()[0])


def test_minmax_observer_matches_numpy():
    batches = [RNG.standard_normal((3, 4, 5)) for _ in range(3)]
    observer = MinMaxObserver()
    channels = MinMaxObserver(per_channel=True, channel_axis=1)
    for batch in batches:
        observer.update(batch)
        channels.update(batch)
    joined = np.concatenate(batches)
    low, high = observer.range()
    assert (low[0], high[0]) == (joined.min(), joined.max())
    low, high = channels.range()
    np.testing.assert_array_equal(low, joined.min(axis=(0, 2)))
    np.testing.assert_array_equal(high, joined.max(axis=(0, 2)))


@pytest.mark.parametrize("percentile", [99.0, 99.9, 100.0])
def test_percentile_observer_matches_numpy(percentile):
    batches = [RNG.standard_normal((2, 3, 50)).astype(np.float32) for _ in range(4)]
    observer = PercentileObserver(percentile)
    channels = PercentileObserver(percentile, per_channel=True, channel_axis=1)
    for batch in batches:
        observer.update(batch)
        channels.update(batch)
    joined = np.concatenate(batches).astype(np.float64)
    low, high = observer.range()
    np.testing.assert_allclose([low[0], high[0]], np.percentile(joined, [100 - percentile, percentile]), rtol=1e-12)
    per_channel = np.moveaxis(joined, 1, 0).reshape(3, -1)
    np.testing.assert_allclose(channels.range()[1], np.percentile(per_channel, percentile, axis=1), rtol=1e-12)
    if percentile < 100:
        assert high[0] < joined.max() and low[0] > joined.min()


def test_observer_errors_name_the_argument():
    with pytest.raises(ValueError, match="percentile"):
        PercentileObserver(40)
    with pytest.raises(RuntimeError, match="no calibration batch"):
        MinMaxObserver().range()
    with pytest.raises(ValueError, match="finite"):
        MinMaxObserver().update(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="activation_observer"):
        PostTrainingQuantization(activation_observer="kl")
    with pytest.raises(ValueError, match="per_channel"):
        PostTrainingQuantization(per_channel=(True, True))
    with pytest.raises(TypeError, match="calibration"):
        PostTrainingQuantization().quantize(SmallFloat(), ["not an array"])
    with pytest.raises(ValueError, match="calibration"):
        PostTrainingQuantization().quantize(SmallFloat(), [])
    with pytest.raises(TypeError, match="network"):
        PostTrainingQuantization().quantize(object(), CALIBRATION)


@pytest.mark.parametrize("observer, percentile", [("minmax", 100.0), ("percentile", 99.5)])
def test_calibrated_ranges_match_numpy(float_net, observer, percentile):
    """The fake-quantized network holds the ranges numpy finds on the float activations (min/max or
    percentiles, widened to hold 0) and the per-channel min/max of the BatchNorm-folded weights."""
    fake_quant_net = PostTrainingQuantization(observer, percentile).apply(float_net, CALIBRATION)
    values = _calibration_values(float_net)
    cells = {"input": fake_quant_net.conv1.fake_quant_input, "act1": fake_quant_net.act1.fake_quant_act,
             "act2": fake_quant_net.act2.fake_quant_act, "act3": fake_quant_net.act3.fake_quant_act}
    for key, cell in cells.items():
        low, high = np.percentile(values[key], [100 - percentile, percentile])
        np.testing.assert_allclose(_range(cell), [min(low, 0), max(high, 0)], rtol=1e-6, atol=1e-7, err_msg=key)
    w1, _ = _folded(_params(float_net))
    weight_observer = fake_quant_net.conv1.layer.fake_quant_weight
    np.testing.assert_allclose(weight_observer.maxq.asnumpy(), w1.reshape(8, -1).max(axis=1), rtol=1e-6)
    np.testing.assert_allclose(weight_observer.minq.asnumpy(), w1.reshape(8, -1).min(axis=1), rtol=1e-6)
    assert float_net.conv1.__class__.__name__ == "Conv2d"  # the float network is left as it was


@pytest.fixture(scope="module")
def int8_net(float_net):
    return PostTrainingQuantization().quantize(float_net, CALIBRATION)


def test_int8_network_matches_numpy_int8_reference(float_net, int8_net):
    layers = [cell for _, cell in int8_net.cells_and_names() if isinstance(cell, Int8Layer)]
    assert len(layers) == 4 and all(layer.weight.asnumpy().dtype == np.int8 for layer in layers)
    assert [layer.fused for layer in layers] == [True, True, True, False]
    assert [layer.integer_input for layer in layers] == [False, True, True, True]
    assert type(int8_net.conv1.fake_quant_input).__name__ == "_Passthrough"  # conv1 quantizes its input itself
    values = _calibration_values(float_net)
    grids = {key: _grid(float(v.min()), float(v.max())) for key, v in values.items()}
    p = _params(float_net)
    reference = _int8_forward(p, HELD_OUT.astype(np.float64), grids)
    out = int8_net(Tensor(HELD_OUT)).asnumpy()
    assert out.dtype == np.float32 and out.shape == (16, 5)
    # float32 multipliers against float64 ones: a rounding tie may land one step apart
    last_step = grids["act3"][0] * np.abs(p["fc2.weight"]).max() * 2
    assert np.abs(out - reference).max() <= last_step, (np.abs(out - reference).max(), last_step)
    assert np.mean(np.abs(out - reference) <= 1e-4 * np.abs(reference).max()) >= 0.9
    logits = _float_forward(p, HELD_OUT)["logits"]
    assert np.linalg.norm(out - logits) <= 0.05 * np.linalg.norm(logits)


def test_int8_network_batch_sizes_and_export(float_net, int8_net, tmp_path):
    """Other batch sizes than the calibration's run, and the network exports as a QAT one does."""
    import aotnn_runtime

    from aotnn.compression.quant import export_int8

    one = int8_net(Tensor(HELD_OUT[:1])).asnumpy()
    np.testing.assert_allclose(one, int8_net(Tensor(HELD_OUT)).asnumpy()[:1], rtol=1e-6, atol=1e-6)
    fake_quant_net = PostTrainingQuantization().apply(float_net, CALIBRATION)
    path = export_int8(fake_quant_net, Tensor(HELD_OUT[:2]), file_name=str(tmp_path / "small_int8"))
    out = np.asarray(aotnn_runtime.load(path).run(HELD_OUT[:2]))
    np.testing.assert_allclose(out.reshape(2, 5), int8_net(Tensor(HELD_OUT[:2])).asnumpy(), rtol=1e-5, atol=1e-5)


class Residual(nn.Cell):
    """SequentialCell stem (conv, BatchNorm, ReLU6), a residual block whose one ReLU cell is called twice
    (after its first convolution and after the addition), a downsampling convolution and a dense head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.SequentialCell([nn.Conv2d(3, 8, 3, pad_mode="same"), nn.BatchNorm2d(8), nn.ReLU6()])
        self.conv1 = nn.Conv2d(8, 8, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(8, 8, 1, has_bias=True)
        self.relu = nn.ReLU()
        self.down = nn.Conv2d(8, 4, 3, stride=2, pad_mode="same", has_bias=True)
        self.flatten = nn.Flatten()
        self.head = nn.Dense(4 * 6 * 6, 5)

    def construct(self, x):
        x = self.stem(x)
        x = self.relu(x + self.conv2(self.relu(self.conv1(x))))
        return self.head(self.flatten(self.down(x)))


def test_sequential_residual_network_keeps_order_and_accuracy():
    aotnn.set_seed(3)
    net = Residual()
    rng = np.random.default_rng(4)
    for param in net.get_parameters():
        if param.name.endswith("moving_variance"):
            param.set_data(Tensor(rng.uniform(0.5, 1.5, param.shape).astype(np.float32)))
        elif param.name.endswith(("moving_mean", "bias", "beta")):
            param.set_data(Tensor(rng.normal(0, 0.2, param.shape).astype(np.float32)))
    net.set_train(False)
    fake_quant_net = PostTrainingQuantization().apply(net, CALIBRATION[:2])
    stem = [type(cell).__name__ for cell in fake_quant_net.stem._cells.values()]
    assert stem == ["InputQuant", "_Folded", "ActQuant"]  # the SequentialCell still runs conv, BN, ReLU6
    relu_sites = [type(cell).__name__ for cell in fake_quant_net.relu._cells.values()]
    assert relu_sites == ["ActQuant", "ActQuant"]  # one range per call site
    reference = net(Tensor(HELD_OUT)).asnumpy()
    int8 = convert_to_int8(fake_quant_net, Tensor(CALIBRATION[0][:1]))(Tensor(HELD_OUT)).asnumpy()
    fake = fake_quant_net(Tensor(HELD_OUT)).asnumpy()
    for out in (int8, fake):
        assert np.linalg.norm(out - reference) <= 0.05 * np.linalg.norm(reference)
    assert np.mean(np.argmax(int8, 1) == np.argmax(reference, 1)) >= 0.85
    np.testing.assert_allclose(int8, fake, atol=0.02 * np.abs(reference).max())
