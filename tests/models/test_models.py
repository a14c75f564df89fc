"""Model zoo networks against PyTorch functional re-implementations with the same weights."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, models


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array))


def assert_close_scaled(actual, expected, rtol=1e-4):
    """rtol=1e-4 with an absolute tolerance scaled to the output's magnitude."""
    assert actual.shape == expected.shape
    atol = rtol * float(np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# -- LeNet5 ----------------------------------------------------------------------------------------
def lenet_torch(p, x):
    h = F.max_pool2d(F.relu(F.conv2d(x, p["conv1.weight"])), 2, 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"])), 2, 2)
    h = h.flatten(1)
    h = F.relu(F.linear(h, p["fc1.weight"], p["fc1.bias"]))
    h = F.relu(F.linear(h, p["fc2.weight"], p["fc2.bias"]))
    return F.linear(h, p["fc3.weight"], p["fc3.bias"])


def test_lenet5_names():
    net = models.LeNet5()
    shapes = {name: p.shape for name, p in net.parameters_and_names()}
    assert shapes == {
        "conv1.weight": (6, 1, 5, 5), "conv2.weight": (16, 6, 5, 5),
        "fc1.weight": (120, 400), "fc1.bias": (120,), "fc2.weight": (84, 120), "fc2.bias": (84,),
        "fc3.weight": (10, 84), "fc3.bias": (10,),
    }
    assert [p.name for p in net.get_parameters()] == list(shapes)


def test_lenet5_matches_pytorch():
    rng = np.random.default_rng(5)
    net = models.LeNet5(num_class=10, num_channel=1)
    for param in net.get_parameters():
        fan_in = int(np.prod(param.shape[1:])) if len(param.shape) > 1 else 10
        param.set_data(rng.normal(0, 1 / math.sqrt(fan_in), param.shape).astype(np.float32))
    x = rng.random((2, 1, 32, 32), dtype=np.float32)
    out = net(Tensor(x))
    assert out.shape == (2, 10)
    params = {name: t(p.asnumpy()) for name, p in net.parameters_and_names()}
    ref = lenet_torch(params, t(x)).numpy()
    assert_close_scaled(out.asnumpy(), ref)


def test_lenet5_without_top():
    net = models.LeNet5(include_top=False)
    assert [n for n, _ in net.parameters_and_names()] == ["conv1.weight", "conv2.weight"]


# -- ResNet-18 ---------------------------------------------------------------------------------------
def bn_torch(x, p, prefix, eps=1e-5):
    return F.batch_norm(x, p[prefix + "moving_mean"], p[prefix + "moving_variance"], p[prefix + "gamma"],
                        p[prefix + "beta"], training=False, eps=eps)


def same_pool_torch(x, kernel=3, stride=2):
    """MindSpore's 'same' max pool: output ceil(n / stride), the odd pixel padded at the end."""
    def pads(n):
        needed = max(0, (math.ceil(n / stride) - 1) * stride + kernel - n)
        return needed // 2, needed - needed // 2
    top, bottom = pads(x.shape[2])
    left, right = pads(x.shape[3])
    return F.max_pool2d(F.pad(x, (left, right, top, bottom), value=-math.inf), kernel, stride)


def block_torch(x, p, prefix, stride):
    out = F.relu(bn_torch(F.conv2d(x, p[prefix + "conv1.weight"], stride=stride, padding=1), p, prefix + "bn1d."))
    out = bn_torch(F.conv2d(out, p[prefix + "conv2.weight"], padding=1), p, prefix + "bn2d.")
    identity = x
    if prefix + "down_sample_layer.0.weight" in p:
        identity = F.conv2d(x, p[prefix + "down_sample_layer.0.weight"], stride=stride)
        identity = bn_torch(identity, p, prefix + "down_sample_layer.1.")
    return F.relu(out + identity)


def resnet18_torch(p, x):
    h = F.relu(bn_torch(F.conv2d(x, p["conv1.weight"], stride=2, padding=3), p, "bn1."))
    h = same_pool_torch(h)
    for stage, stride in zip(range(1, 5), (1, 2, 2, 2)):
        for block in range(2):
            h = block_torch(h, p, f"layer{stage}.{block}.", stride if block == 0 else 1)
    h = h.mean(dim=(2, 3))
    return F.linear(h, p["end_point.weight"], p["end_point.bias"])


@pytest.fixture(scope="module")
def resnet_run():
    """One ResNet-18 forward (batch 1, 3x224x224) with randomised BatchNorm statistics."""
    rng = np.random.default_rng(18)
    net = models.resnet18()
    for name, param in net.parameters_and_names():
        shape = param.shape
        if name.endswith("moving_mean"):
            param.set_data(rng.normal(0, 0.1, shape).astype(np.float32))
        elif name.endswith("moving_variance"):
            param.set_data(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        elif name.endswith("gamma"):
            param.set_data(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        elif name.endswith("beta") or name.endswith("bias"):
            param.set_data(rng.normal(0, 0.1, shape).astype(np.float32))
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    out = net(Tensor(x))
    params = {name: t(p.asnumpy()) for name, p in net.parameters_and_names()}
    return net, x, out.asnumpy(), params


def test_resnet18_names(resnet_run):
    net = resnet_run[0]
    names = [n for n, _ in net.parameters_and_names()]
    assert names == [p.name for p in net.get_parameters()]
    assert names[:5] == ["conv1.weight", "bn1.moving_mean", "bn1.moving_variance", "bn1.gamma", "bn1.beta"]
    assert names[-2:] == ["end_point.weight", "end_point.bias"]
    shapes = dict(net.parameters_and_names())
    expected = {
        "conv1.weight": (64, 3, 7, 7),
        "layer1.0.conv1.weight": (64, 64, 3, 3),
        "layer1.0.bn1d.gamma": (64,),
        "layer1.1.bn2d.moving_variance": (64,),
        "layer2.0.conv1.weight": (128, 64, 3, 3),
        "layer2.0.down_sample_layer.0.weight": (128, 64, 1, 1),
        "layer2.0.down_sample_layer.1.moving_mean": (128,),
        "layer4.1.conv2.weight": (512, 512, 3, 3),
        "end_point.weight": (1000, 512),
        "end_point.bias": (1000,),
    }
    for name, shape in expected.items():
        assert shapes[name].shape == shape, name
    assert "layer1.0.down_sample_layer.0.weight" not in shapes
    trainable = sum(int(np.prod(p.shape)) for p in net.trainable_params())
    assert trainable == 11_689_512           # the same count as torchvision's resnet18
    assert all(n.endswith(("moving_mean", "moving_variance")) for n in (p.name for p in net.untrainable_params()))


def test_resnet18_matches_pytorch(resnet_run):
    _, x, out, params = resnet_run
    assert out.shape == (1, 1000)
    with torch.no_grad():
        ref = resnet18_torch(params, t(x)).numpy()
    assert float(np.abs(ref).std()) > 1e-3     # a non-trivial output
    assert_close_scaled(out, ref)
