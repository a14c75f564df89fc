"""convert_to_int8 / export_int8: int8 kernels reproduce the QAT network's fake-quant float outputs."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import create_quant_config
from aotnn.compression.quant.export_int8 import Int8Layer, convert_to_int8, export_int8, fake_quant_qparams

HAVE_CROSS = shutil.which("aarch64-linux-gnu-gcc") is not None and shutil.which("qemu-aarch64") is not None
RNG = np.random.default_rng(3)
X = RNG.random((4, 3, 12, 12), dtype=np.float32) * 2 - 0.5


class SmallQuant(nn.Cell):
    """input fake quant (optional) -> conv -> ReLU -> conv (pad, stride 2) -> ReLU6 -> dense -> dense."""

    def __init__(self, config, input_quant: bool, bn: str | None = None):
        super().__init__()
        self.input_quant = nn.FakeQuantWithMinMaxObserver(ema=False) if input_quant else None
        if bn is None:
            self.conv1 = nn.Conv2dQuant(3, 8, 3, pad_mode="same", has_bias=True, quant_config=config)
        else:
            self.conv1 = getattr(nn, bn)(3, 8, 3, pad_mode="same", quant_config=config)
        self.act1 = nn.ActQuant(nn.ReLU(), quant_config=config)
        self.conv2 = nn.Conv2dQuant(8, 6, 3, stride=2, pad_mode="pad", padding=1, group=2, has_bias=True,
                                    quant_config=config)
        self.act2 = nn.ActQuant(nn.ReLU6(), quant_config=config)
        self.pool = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.DenseQuant(6 * 3 * 3, 20, quant_config=config)
        self.act3 = nn.ActQuant(nn.ReLU(), quant_config=config)
        self.fc2 = nn.DenseQuant(20, 5, quant_config=config)

    def construct(self, x):
        if self.input_quant is not None:
            x = self.input_quant(x)
        x = self.act1(self.conv1(x))
        x = self.pool(self.act2(self.conv2(x)))
        x = self.act3(self.fc1(self.flatten(x)))
        return self.fc2(x)


def _calibrated(config, input_quant: bool, bn: str | None = None, seed: int = 0) -> nn.Cell:
    """A network with random weights whose observers have seen one batch (a training-mode call)."""
    aotnn.set_seed(seed)
    net = SmallQuant(config, input_quant, bn)
    rng = np.random.default_rng(seed)
    for param in net.trainable_params():
        if param.name.endswith("weight"):
            param.set_data(Tensor(rng.normal(0, 0.4, param.shape).astype(np.float32)))
        elif param.name.endswith("bias") or param.name.endswith("beta"):
            param.set_data(Tensor(rng.normal(0, 0.1, param.shape).astype(np.float32)))
    net.set_train(True)
    net(Tensor(X))
    net.set_train(False)
    return net


def _call_in_float(layer: Int8Layer, h: Tensor) -> np.ndarray:
    """The layer's output on float input ``h``, quantizing/dequantizing (numpy formulas) at integer ends."""
    if layer.integer_input:
        p = layer.in_qparams
        values = np.clip(np.round(h.asnumpy() / np.float32(p.scale[0])) + p.zero_point[0], p.qmin, p.qmax)
        h = Tensor(values.astype(p.dtype))
    out = layer(h).asnumpy()
    if layer.integer_output:
        p = layer.out_qparams
        assert out.dtype == np.dtype(p.dtype)
        out = ((out.astype(np.int32) - p.zero_point[0]) * np.float32(p.scale[0])).astype(np.float32)
    return out


def _check_close(net, converted, x, rel: float = 0.03, layer_share: float = 0.95):
    """Each converted layer, fed the QAT network's own input, equals the QAT layer's output on ``layer_share``
    of it and is within one quantization step elsewhere (two at a handful of rounding ties that chain);
    end to end the relative error is below ``rel`` and the predicted classes agree."""
    h = net.input_quant(Tensor(x)) if net.input_quant is not None else Tensor(x)
    stages = [("conv1", "act1", None), ("conv2", "act2", net.pool), ("fc1", "act3", None), ("fc2", None, None)]
    for layer, act, after in stages:
        if layer == "fc1":
            h = net.flatten(h)
        ref = getattr(net, layer)(h)
        if act is not None:
            ref = getattr(net, act)(ref)
        out = _call_in_float(getattr(converted, layer), h)
        if act is not None and getattr(converted, layer).in_qparams is not None:
            step = fake_quant_qparams(getattr(net, act).fake_quant_act).scale[0]
            diff = np.abs(out - ref.asnumpy())
            assert diff.max() <= step * 2.01, (layer, diff.max(), step)
            assert np.mean(diff <= step * 1.01) >= 0.995, (layer, np.mean(diff <= step * 1.01))
            assert np.mean(diff < step * 0.01) >= layer_share, (layer, np.mean(diff < step * 0.01))
        h = after(ref) if after is not None else ref
    ref = net(Tensor(x)).asnumpy()
    out = converted(Tensor(x)).asnumpy()
    assert out.shape == ref.shape and out.dtype == np.float32
    assert np.linalg.norm(out - ref) <= rel * np.linalg.norm(ref), np.linalg.norm(out - ref) / np.linalg.norm(ref)
    np.testing.assert_array_equal(np.argmax(out, 1), np.argmax(ref, 1))
    return ref, out


SYMMETRIC = dict(per_channel=(True, False), symmetric=(True, False))


@pytest.fixture(scope="module")
def symmetric_net():
    """Per-channel symmetric weights, an input fake quant: shared by the tests that only read it."""
    return _calibrated(create_quant_config(**SYMMETRIC), input_quant=True)


@pytest.fixture(scope="module")
def symmetric_int8(symmetric_net):
    return convert_to_int8(symmetric_net, Tensor(X))


@pytest.mark.parametrize("per_channel, symmetric", [(True, True), (False, False)])
def test_static_input_matches_fake_quant_network(per_channel, symmetric, symmetric_net, symmetric_int8):
    if symmetric:
        net, converted = symmetric_net, symmetric_int8
    else:
        config = create_quant_config(per_channel=(per_channel, False), symmetric=(symmetric, False))
        net = _calibrated(config, input_quant=True)
        converted = convert_to_int8(net, Tensor(X))
    layers = [c for _, c in converted.cells_and_names() if isinstance(c, Int8Layer)]
    assert len(layers) == 4 and all(layer.fused for layer in layers[:3]) and not layers[3].fused
    # 8-bit integers travel conv1 -> conv2 (through nothing), conv2 -> fc1 (max-pool, flatten), fc1 -> fc2
    assert [layer.integer_output for layer in layers] == [True, True, True, False]
    assert [layer.integer_input for layer in layers] == [False, True, True, True]
    zw = layers[0].w_zero_point
    if symmetric:  # zero point 0, or -1 where float32 puts the nudged zero at -0.5000001, as the fake quant does
        assert zw is None or set(np.unique(zw.asnumpy())) <= {-1, 0}
    else:
        assert zw is not None and np.abs(zw.asnumpy()).max() > 1
    assert layers[0].weight.asnumpy().dtype == np.int8
    _check_close(net, converted, X)


def test_dynamic_first_layer_and_original_untouched():
    config = create_quant_config(**SYMMETRIC)
    net = _calibrated(config, input_quant=False, seed=1)
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    converted = convert_to_int8(net, Tensor(X))
    first = next(c for _, c in converted.cells_and_names() if isinstance(c, Int8Layer))
    assert first.in_qparams is None  # no fake quant produced the network input: quantized per call
    _check_close(net, converted, X, rel=0.06)
    for p in net.get_parameters():
        np.testing.assert_array_equal(p.asnumpy(), before[p.name])
    assert isinstance(net.conv1, nn.Conv2dQuant)


@pytest.mark.parametrize("bn", ["Conv2dBnFoldQuant", "Conv2dBnFoldQuantOneConv"])
def test_batchnorm_folding_layers(bn):
    config = create_quant_config(**SYMMETRIC)
    net = _calibrated(config, input_quant=True, bn=bn, seed=2)
    # non-trivial statistics: as after training
    rng = np.random.default_rng(4)
    net.conv1.moving_mean.set_data(Tensor(rng.normal(0, 0.3, 8).astype(np.float32)))
    net.conv1.moving_variance.set_data(Tensor(rng.uniform(0.5, 2.0, 8).astype(np.float32)))
    net.conv1.gamma.set_data(Tensor(rng.uniform(0.5, 1.5, 8).astype(np.float32)))
    net.set_train(True)
    net(Tensor(X))  # observers see the folded weight
    net.set_train(False)
    converted = convert_to_int8(net, Tensor(X))
    _check_close(net, converted, X)


def test_without_example_inputs_uses_definition_order(symmetric_net, symmetric_int8):
    converted = convert_to_int8(symmetric_net)
    np.testing.assert_array_equal(converted(Tensor(X)).asnumpy(), symmetric_int8(Tensor(X)).asnumpy())


def test_rejects_non_quant_networks():
    with pytest.raises(TypeError, match="network"):
        convert_to_int8("lenet")
    with pytest.raises(ValueError, match="quantized layers"):
        convert_to_int8(nn.Dense(3, 4))
    with pytest.raises(ValueError, match="inputs"):
        export_int8(nn.Dense(3, 4), file_name="x")


def test_export_host_artifact_runs(tmp_path, symmetric_net, symmetric_int8):
    import aotnn_runtime

    path = export_int8(symmetric_net, Tensor(X[:1]), file_name=str(tmp_path / "small_int8"))
    module = aotnn_runtime.load(path)
    out = np.asarray(module.run(X[:1]))
    ref = symmetric_int8(Tensor(X[:1])).asnumpy()
    np.testing.assert_allclose(out.reshape(ref.shape), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not HAVE_CROSS, reason="needs Debian's gcc-aarch64-linux-gnu and qemu-user")
def test_aarch64_bundle_builds_and_matches_host(tmp_path, symmetric_net, symmetric_int8):
    x = X[:1].copy()
    path = export_int8(symmetric_net, Tensor(x), file_name=str(tmp_path / "small_arm"), target="aarch64")
    subprocess.run(["make", "-s", "-j2"], cwd=path, check=True, capture_output=True, text=True)
    x.tofile(os.path.join(path, "input0.bin"))
    done = subprocess.run(["qemu-aarch64", "./model", "input0.bin"], cwd=path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    out = np.fromfile(os.path.join(path, "output0.bin"), dtype=np.float32)
    ref = symmetric_int8(Tensor(x)).asnumpy().ravel()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


class BnActNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = nn.Conv2dBnAct(3, 8, 3, pad_mode="same", has_bn=True, activation="relu")
        self.flatten = nn.Flatten()
        self.fc = nn.DenseBnAct(8 * 12 * 12, 5, activation="relu")
        self.head = nn.DenseBnAct(5, 3)

    def construct(self, x):
        return self.head(self.fc(self.flatten(self.block(x))))


def test_quantization_aware_training_converter_then_int8():
    from aotnn.compression.quant.quantizer import QuantizationAwareTraining

    aotnn.set_seed(6)
    net = BnActNet()
    rng = np.random.default_rng(6)
    for param in net.trainable_params():
        if param.name.endswith("weight"):
            param.set_data(Tensor(rng.normal(0, 0.3, param.shape).astype(np.float32)))
    net.block.batchnorm.moving_mean.set_data(Tensor(rng.normal(0, 0.2, 8).astype(np.float32)))
    net.block.batchnorm.moving_variance.set_data(Tensor(rng.uniform(0.5, 2, 8).astype(np.float32)))
    float_weights = {name: cell.weight.asnumpy().copy()
                     for name, cell in (("block", net.block.conv), ("fc", net.fc.dense), ("head", net.head.dense))}
    qat = QuantizationAwareTraining(per_channel=[True, False], symmetric=[True, False]).quantize(net)
    assert qat is net
    assert isinstance(net.block.conv, nn.Conv2dBnFoldQuantOneConv) and not net.block.has_bn
    assert isinstance(net.block.activation, nn.ActQuant) and isinstance(net.fc.dense, nn.DenseQuant)
    assert isinstance(net.head.activation, nn.FakeQuantWithMinMaxObserver)  # no activation, after_fake
    np.testing.assert_array_equal(net.block.conv.moving_variance.asnumpy(),
                                  net.block.batchnorm.moving_variance.asnumpy())
    net.set_train(True)
    net(Tensor(X))  # observers see the data
    net.set_train(False)
    qat_out = net(Tensor(X)).asnumpy()
    np.testing.assert_array_equal(net.block.conv.weight.asnumpy(), float_weights["block"])
    np.testing.assert_array_equal(net.fc.dense.weight.asnumpy(), float_weights["fc"])
    np.testing.assert_array_equal(net.head.dense.weight.asnumpy(), float_weights["head"])
    converted = convert_to_int8(net, Tensor(X))
    assert sum(isinstance(c, Int8Layer) for _, c in converted.cells_and_names()) == 3
    out = converted(Tensor(X)).asnumpy()
    assert np.linalg.norm(out - qat_out) <= 0.05 * np.linalg.norm(qat_out)
    with pytest.raises(TypeError, match="network"):
        QuantizationAwareTraining().quantize(3)
    with pytest.raises(ValueError, match="optimize_option"):
        QuantizationAwareTraining(optimize_option="LEARNED_SCALE")


class ResidualQuant(nn.Cell):
    """conv1 -> ActQuant feeds both conv2 and a float addition after conv2's ActQuant."""

    def __init__(self, config):
        super().__init__()
        self.input_quant = nn.FakeQuantWithMinMaxObserver(ema=False)
        self.conv1 = nn.Conv2dQuant(3, 6, 3, pad_mode="same", has_bias=True, quant_config=config)
        self.act1 = nn.ActQuant(nn.ReLU(), quant_config=config)
        self.conv2 = nn.Conv2dQuant(6, 6, 3, pad_mode="same", has_bias=True, quant_config=config)
        self.act2 = nn.ActQuant(nn.ReLU(), quant_config=config)
        self.flatten = nn.Flatten()
        self.fc = nn.DenseQuant(6 * 12 * 12, 4, quant_config=config)

    def construct(self, x):
        x1 = self.act1(self.conv1(self.input_quant(x)))
        x2 = self.act2(self.conv2(x1))
        return self.fc(self.flatten(x1 + x2))


def test_tensor_with_a_float_consumer_stays_float():
    aotnn.set_seed(7)
    net = ResidualQuant(create_quant_config(**SYMMETRIC))
    rng = np.random.default_rng(7)
    for param in net.trainable_params():
        if param.name.endswith("weight"):
            param.set_data(Tensor(rng.normal(0, 0.3, param.shape).astype(np.float32)))
    net.set_train(True)
    net(Tensor(X))
    net.set_train(False)
    converted = convert_to_int8(net, Tensor(X))
    assert not converted.conv1.integer_output and not converted.conv2.integer_input
    out, ref = converted(Tensor(X)).asnumpy(), net(Tensor(X)).asnumpy()
    assert out.dtype == np.float32
    assert np.linalg.norm(out - ref) <= 0.05 * np.linalg.norm(ref)
