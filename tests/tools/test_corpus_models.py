"""tools/corpus_models.py: the corpus' own networks compute what their docstrings say, small
versions against PyTorch CPU built from the same weights."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))

import aotnn  # noqa: E402
from bench import randomize  # noqa: E402
from corpus_models import AudioConvNet, TextClassifier, UNet, torch_twin  # noqa: E402


def _params(net) -> dict[str, torch.Tensor]:
    return {name: torch.tensor(param.asnumpy()) for name, param in net.parameters_and_names()}


def _bn(y, p, prefix: str):
    """Batch norm in inference mode (MindSpore's eps 1e-5) from ``prefix``'s parameters."""
    return F.batch_norm(y, p[f"{prefix}.moving_mean"], p[f"{prefix}.moving_variance"], p[f"{prefix}.gamma"],
                        p[f"{prefix}.beta"], training=False, eps=1e-5)


def _block(x, p, prefix: str):
    """_ConvBlock: (3x3 "same" convolution, batch norm, ReLU) twice, layers 0-2 and 3-5."""
    for conv, bn in ((0, 1), (3, 4)):
        x = F.relu(_bn(F.conv2d(x, p[f"{prefix}.{conv}.weight"], padding=1), p, f"{prefix}.{bn}"))
    return x


def test_unet_against_pytorch():
    net = UNet(in_channels=3, num_classes=2, base=4)
    net.set_train(False)
    randomize(net)
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    p = _params(net)
    skips, y = [], torch.tensor(x)
    for level in range(5):
        y = _block(y if level == 0 else F.max_pool2d(y, 2), p, f"downs.{level}")
        skips.append(y)
    y = skips.pop()
    for step in range(4):
        up = F.conv_transpose2d(y, p[f"ups.{step}.weight"], p[f"ups.{step}.bias"], stride=2)
        y = _block(torch.cat([skips.pop(), up], 1), p, f"merges.{step}")
    expected = F.conv2d(y, p["head.weight"], p["head.bias"]).numpy()
    out = net(aotnn.Tensor(x)).asnumpy()
    assert out.shape == (1, 2, 32, 32)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_audio_conv_net_against_pytorch():
    net = AudioConvNet(features=8, channels=16, num_classes=3)
    net.set_train(False)
    randomize(net)
    x = np.random.default_rng(1).standard_normal((2, 30, 8)).astype(np.float32)
    p = _params(net)
    y = torch.tensor(x).permute(0, 2, 1)
    for index, (kernel, dilation) in enumerate(((5, 1), (3, 2), (3, 3), (1, 1))):
        weight = p[f"body.{3 * index}.weight"].reshape(16, -1, kernel)  # MindSpore's Conv1d weight: (out, in, 1, k)
        y = F.conv1d(y, weight, p[f"body.{3 * index}.bias"], dilation=dilation, padding=dilation * (kernel - 1) // 2)
        y = F.relu(_bn(y, p, f"body.{3 * index + 1}"))
    expected = F.linear(y.mean(2), p["dense.weight"], p["dense.bias"]).numpy()
    np.testing.assert_allclose(net(aotnn.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_text_classifier_against_pytorch(cell):
    net = TextClassifier(cell, vocab=50, embed=8, hidden=6, num_classes=3)
    net.set_train(False)
    ids = np.random.default_rng(2).integers(0, 50, (2, 5)).astype(np.int32)
    p = _params(net)
    rnn = (torch.nn.LSTM if cell == "lstm" else torch.nn.GRU)(8, 6, num_layers=2, batch_first=True, bidirectional=True)
    rnn.load_state_dict({name[len("rnn."):]: value for name, value in p.items() if name.startswith("rnn.")})
    with torch.no_grad():
        output, _ = rnn(F.embedding(torch.tensor(ids, dtype=torch.int64), p["embedding.embedding_table"]))
        expected = F.linear(output[:, -1, :], p["dense.weight"], p["dense.bias"]).numpy()
    np.testing.assert_allclose(net(aotnn.Tensor(ids)).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_text_classifier_refuses_an_unknown_cell():
    with pytest.raises(ValueError, match="cell: expected 'lstm' or 'gru', got 'rnn'"):
        TextClassifier("rnn")


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_torch_twin_computes_the_same(cell):
    """The twin onnxruntime runs for the text models (PyTorch's export) holds the Cell's weights."""
    net = TextClassifier(cell, vocab=50, embed=8, hidden=6, num_classes=3)
    net.set_train(False)
    ids = np.random.default_rng(3).integers(0, 50, (2, 5)).astype(np.int32)
    with torch.no_grad():
        twin = torch_twin(net)(torch.tensor(ids)).numpy()
    np.testing.assert_allclose(twin, net(aotnn.Tensor(ids)).asnumpy(), rtol=1e-4, atol=1e-5)
    assert torch_twin(AudioConvNet(features=8, channels=16)) is None
