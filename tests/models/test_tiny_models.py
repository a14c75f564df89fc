"""MLPerf Tiny's DS-CNN and ResNet-8 against PyTorch written from the layers' formulas (same weights)."""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from aotnn import Tensor, models

from . import tiny_weights


def randomize(net, seed: int):
    """``tiny_weights.randomize``, returning the parameters as torch tensors by name."""
    tiny_weights.randomize(net, seed)
    return {name: torch.tensor(param.asnumpy()) for name, param in net.parameters_and_names()}


def conv_same(x, weight, bias, stride=1, groups=1):
    """TensorFlow's / MindSpore's 'same' padding: the odd pixel goes to the bottom and right."""
    pads = []
    for size, kernel in zip(reversed(x.shape[2:]), reversed(weight.shape[2:])):
        total = max((math.ceil(size / stride) - 1) * stride + kernel - size, 0)
        pads += [total // 2, total - total // 2]
    return F.conv2d(F.pad(x, pads), weight, bias, stride=stride, groups=groups)


def batch_norm(x, p, prefix):
    return F.batch_norm(x, p[prefix + ".moving_mean"], p[prefix + ".moving_variance"], p[prefix + ".gamma"],
                        p[prefix + ".beta"], eps=1e-5)


def ds_cnn_reference(p, x):
    def block(h, prefix, stride=1, groups=1):
        h = conv_same(h, p[prefix + ".0.weight"], p[prefix + ".0.bias"], stride, groups)
        return F.relu(batch_norm(h, p, prefix + ".1"))
    h = block(x, "stem", stride=2)
    for i in range(8):
        h = block(h, f"blocks.{i}", groups=64 if i % 2 == 0 else 1)
    assert h.shape[2:] == (25, 5)
    return F.linear(h.mean(dim=(2, 3)), p["dense.weight"], p["dense.bias"])


def resnet8_reference(p, x):
    def stack(h, prefix, stride):
        out = F.relu(batch_norm(conv_same(h, p[prefix + ".conv1.weight"], p[prefix + ".conv1.bias"], stride), p,
                                prefix + ".bn1"))
        out = batch_norm(conv_same(out, p[prefix + ".conv2.weight"], p[prefix + ".conv2.bias"]), p, prefix + ".bn2")
        if prefix + ".shortcut.weight" in p:
            h = conv_same(h, p[prefix + ".shortcut.weight"], p[prefix + ".shortcut.bias"], stride)
        return F.relu(out + h)
    h = F.relu(batch_norm(conv_same(x, p["conv1.weight"], p["conv1.bias"]), p, "bn1"))
    h = stack(stack(stack(h, "stack1", 1), "stack2", 2), "stack3", 2)
    assert h.shape[1:] == (64, 8, 8)
    return F.linear(h.mean(dim=(2, 3)), p["dense.weight"], p["dense.bias"])


def check(net, reference, shape, seed):
    params = randomize(net, seed)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    actual = net(Tensor(x)).asnumpy()
    with torch.no_grad():
        expected = reference(params, torch.from_numpy(x)).numpy()
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * float(np.abs(expected).max()))


def test_ds_cnn_matches_pytorch():
    net = models.ds_cnn()
    assert sum(p.size for p in net.trainable_params()) == 23_756  # 24,908 with the BatchNorm statistics, as MLPerf Tiny counts
    check(net, ds_cnn_reference, (2, 1, 49, 10), 0)


def test_resnet8_matches_pytorch():
    net = models.resnet8()
    assert sum(p.size for p in net.trainable_params()) == 78_186  # MLPerf Tiny's ResNet-8: 78k parameters
    check(net, resnet8_reference, (2, 3, 32, 32), 1)
