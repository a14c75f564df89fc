"""MobileNetV2, the BERT-style encoder and the LSTM model against their PyTorch twins (same weights)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

from aotnn import Tensor, models

_TWINS = Path(__file__).resolve().parents[2] / "tools" / "bench_twins.py"


def _twins():
    spec = importlib.util.spec_from_file_location("bench_twins", _TWINS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


twins = _twins()


def randomize(net, seed):
    """Random statistics and biases (the initializers leave them trivial)."""
    rng = np.random.default_rng(seed)
    for name, param in net.parameters_and_names():
        if name.endswith("variance"):
            value = rng.uniform(0.5, 1.5, param.shape)
        elif name.endswith(("gamma", "moving_mean", "beta", "bias")):
            value = rng.normal(0.0, 0.2, param.shape) + (1.0 if name.endswith("gamma") else 0.0)
        else:
            continue
        param.set_data(value.astype(np.float32))
    return net


def check(net, twin, *inputs, tol=1e-4):
    net.set_train(False)
    twin = twins.copy_weights(net, twin)
    actual = net(*[Tensor(a) for a in inputs]).asnumpy()
    with torch.no_grad():
        expected = twin(*[torch.from_numpy(a) for a in inputs]).numpy()
    assert actual.shape == expected.shape
    scale = float(np.abs(expected).max())
    assert np.abs(actual - expected).max() <= tol * scale


def test_mobilenetv2_names_and_shapes():
    net = models.mobilenetv2(num_classes=10)
    names = [name for name, _ in net.parameters_and_names()]
    assert names[:5] == ["backbone.features.0.features.0.weight", "backbone.features.0.features.1.moving_mean",
                         "backbone.features.0.features.1.moving_variance", "backbone.features.0.features.1.gamma",
                         "backbone.features.0.features.1.beta"]
    assert names[-2:] == ["head.dense.weight", "head.dense.bias"]
    assert net.head.dense.weight.shape == (10, 1280)
    depthwise = net.backbone.features[2].conv[1].features[0]
    assert depthwise.weight.shape == (96, 1, 3, 3)


def test_mobilenetv2_matches_torch():
    net = randomize(models.mobilenetv2(num_classes=10), 1)
    x = np.random.default_rng(2).standard_normal((1, 3, 64, 64)).astype(np.float32)
    check(net, twins.MobileNetV2(num_classes=10), x)


def test_mobilenetv2_rejects_bad_stride():
    from aotnn.models.mobilenetv2 import InvertedResidual
    with pytest.raises(ValueError, match="stride"):
        InvertedResidual(16, 16, 3, 6)


def test_bert_encoder_matches_torch():
    net = randomize(models.BertEncoder(vocab_size=100, hidden_size=64, num_layers=2, num_heads=4,
                                       intermediate_size=128, max_position=32), 3)
    ids = np.random.default_rng(4).integers(0, 100, (2, 16)).astype(np.int64)
    check(net, twins.BertEncoder(vocab_size=100, hidden=64, layers=2, heads=4, intermediate=128, max_position=32), ids)


def test_bert_encoder_rejects_bad_heads():
    with pytest.raises(ValueError, match="num_heads"):
        models.BertEncoder(hidden_size=64, num_heads=5)


def test_lstm_model_matches_torch():
    net = models.LSTMModel(input_size=24, hidden_size=32)
    x = np.random.default_rng(5).standard_normal((6, 2, 24)).astype(np.float32)
    check(net, twins.LSTMModel(input_size=24, hidden_size=32), x)
    assert [name for name, _ in net.parameters_and_names()] == [
        "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0", "lstm.bias_hh_l0"]
