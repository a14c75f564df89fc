"""tools/ptq_layer_error.py: per-site relative errors against the same quantities computed in numpy from
forward hooks on the float and the fake-quantized networks."""
import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import PostTrainingQuantization
from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def ptq_layer_error():
    yield from loaded_script("ptq_layer_error")


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="same")
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(4 * 5 * 5, 6)
        self.fc2 = nn.Dense(6, 3)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(self.flatten(self.relu(self.conv(x))))))


def _relu_outputs(net, x):
    outputs = []
    handle = net.relu.register_forward_hook(lambda cell, args, out: outputs.append(out.asnumpy().astype(np.float64)))
    try:
        logits = net(Tensor(x)).asnumpy()
    finally:
        handle.remove()
    return outputs, logits


def test_site_errors_match_numpy(ptq_layer_error):
    aotnn.set_seed(2)
    net = _Net()
    net.set_train(False)
    rng = np.random.default_rng(9)
    fake_quant_net = PostTrainingQuantization().apply(net, [rng.standard_normal((4, 2, 5, 5)).astype(np.float32)])
    x = rng.standard_normal((6, 2, 5, 5)).astype(np.float32)
    sites, float_logits, fake_logits = ptq_layer_error.site_errors(net, fake_quant_net, ["relu"], x, chunk=3)
    float_acts, reference_float = _relu_outputs(net, x)
    fake_acts, reference_fake = _relu_outputs(fake_quant_net, x)
    assert [site for site, _ in sites] == ["relu#0", "relu#1"]
    for (_, error), f, q in zip(sites, float_acts, fake_acts):
        assert error == pytest.approx(np.linalg.norm(q - f) / np.linalg.norm(f), rel=1e-3, abs=1e-6)
    assert 0 < sites[0][1] < 0.1  # 8-bit grids: a small, non-zero error
    np.testing.assert_allclose(float_logits, reference_float, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(fake_logits, reference_fake, rtol=1e-4, atol=1e-4)


def test_perturbed_errors_are_float_against_noisy_inputs(ptq_layer_error):
    aotnn.set_seed(2)
    net = _Net()
    net.set_train(False)
    x = np.random.default_rng(4).standard_normal((6, 2, 5, 5)).astype(np.float32)
    sites, clean, noisy_logits = ptq_layer_error.perturbed_errors(net, ["relu"], x, 0.01, chunk=3)
    rms = np.sqrt(np.mean(x.astype(np.float64) ** 2))
    noisy = (x + 0.01 * rms * np.random.default_rng(1).standard_normal(x.shape)).astype(np.float32)
    float_acts, reference_clean = _relu_outputs(net, x)
    noisy_acts, reference_noisy = _relu_outputs(net, noisy)
    for (_, error), f, q in zip(sites, float_acts, noisy_acts):
        assert error == pytest.approx(np.linalg.norm(q - f) / np.linalg.norm(f), rel=1e-3, abs=1e-6)
    np.testing.assert_allclose(clean, reference_clean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(noisy_logits, reference_noisy, rtol=1e-4, atol=1e-5)
