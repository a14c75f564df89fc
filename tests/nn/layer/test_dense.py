"""Dense and DenseBnAct against PyTorch's functional ops with the same weights."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn, ops


def _t(array):
    return torch.tensor(np.asarray(array, np.float32))


def _random(shape, seed):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def test_dense_2d_matches_torch():
    weight, bias = _random((4, 3), 0), _random((4,), 1)
    net = nn.Dense(3, 4, weight_init=Tensor(weight), bias_init=Tensor(bias))
    x = _random((2, 3), 2)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), F.linear(_t(x), _t(weight), _t(bias)).numpy(), rtol=1e-5,
                               atol=1e-6)
    assert [p.name for p in net.get_parameters()] == ["weight", "bias"]


@pytest.mark.parametrize("activation,reference", [
    ("relu", F.relu),
    (nn.Sigmoid(), torch.sigmoid),
    (ops.ReLU(), F.relu),
    ("softmax", lambda y: F.softmax(y, dim=-1)),
])
def test_dense_3d_input_and_activations(activation, reference):
    weight = _random((5, 3), 3)
    net = nn.Dense(3, 5, weight_init=Tensor(weight), has_bias=False, activation=activation)
    assert net.bias is None
    x = _random((2, 4, 3), 4)
    out = net(Tensor(x))
    assert out.shape == (2, 4, 5)
    np.testing.assert_allclose(out.asnumpy(), reference(F.linear(_t(x), _t(weight))).numpy(), rtol=1e-5, atol=1e-6)


def test_dense_float16_and_1d_input():
    weight, bias = _random((4, 3), 5), _random((4,), 6)
    net = nn.Dense(3, 4, weight_init=Tensor(weight), bias_init=Tensor(bias)).to_float(aotnn.float16)
    x = _random((3, 3), 7)
    out = net(Tensor(x.astype(np.float16)))
    assert out.dtype == aotnn.float16
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), F.linear(_t(x), _t(weight), _t(bias)).numpy(),
                               atol=2e-2)
    single = nn.Dense(3, 4, weight_init=Tensor(weight), bias_init=Tensor(bias))(Tensor(x[0]))
    assert single.shape == (4,)
    np.testing.assert_allclose(single.asnumpy(), F.linear(_t(x[0]), _t(weight), _t(bias)).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_dense_documented_example():
    x = Tensor(np.array([[180, 234, 154], [244, 48, 247]]), aotnn.float32)
    net = nn.Dense(3, 4)
    assert net(x).shape == (2, 4)


@pytest.mark.parametrize("make,error", [
    (lambda: nn.Dense(3.0, 4), TypeError),
    (lambda: nn.Dense(3, 0), ValueError),
    (lambda: nn.Dense(3, 4, has_bias="yes"), TypeError),
    (lambda: nn.Dense(3, 4, activation=3), TypeError),
    (lambda: nn.Dense(3, 4, weight_init=Tensor(np.zeros((3, 4), np.float32))), ValueError),
    (lambda: nn.Dense(3, 4, bias_init=Tensor(np.zeros((3,), np.float32))), ValueError),
    (lambda: nn.DenseBnAct(3, 4, has_bn=1), TypeError),
    (lambda: nn.DenseBnAct(3, 4, after_fake=None), TypeError),
    (lambda: nn.DenseBnAct(3, 4, activation=1.5), TypeError),
    (lambda: nn.DenseBnAct(3, 4, has_bn=True, momentum=1.5), ValueError),
    (lambda: nn.DenseBnAct("3", 4), TypeError),
])
def test_invalid_arguments(make, error):
    with pytest.raises(error):
        make()


def test_dense_bn_act_without_bn():
    weight, bias = _random((4, 3), 8), _random((4,), 9)
    net = nn.DenseBnAct(3, 4, weight_init=Tensor(weight), bias_init=Tensor(bias), activation="leakyrelu", alpha=0.1)
    assert [p.name for p in net.get_parameters()] == ["dense.weight", "dense.bias"]
    x = _random((5, 3), 10)
    want = F.leaky_relu(F.linear(_t(x), _t(weight), _t(bias)), 0.1).numpy()
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    plain = nn.DenseBnAct(3, 4, weight_init=Tensor(weight), has_bias=False)
    np.testing.assert_allclose(plain(Tensor(x)).asnumpy(), F.linear(_t(x), _t(weight)).numpy(), rtol=1e-5, atol=1e-6)


def test_dense_bn_act_with_bn_in_inference_and_training():
    weight, bias = _random((4, 3), 11), _random((4,), 12)
    net = nn.DenseBnAct(3, 4, weight_init=Tensor(weight), bias_init=Tensor(bias), has_bn=True, momentum=0.8,
                        eps=1e-3, activation="relu")
    names = [p.name for p in net.get_parameters()]
    assert names[:2] == ["dense.weight", "dense.bias"] and all(n.startswith("batchnorm.") for n in names[2:])
    mean, var = _random((4,), 13), np.abs(_random((4,), 14)) + 0.5
    net.batchnorm.moving_mean.set_data(mean)
    net.batchnorm.moving_variance.set_data(var)
    x = _random((6, 3), 15)
    dense = F.linear(_t(x), _t(weight), _t(bias))
    want = F.relu(F.batch_norm(dense, _t(mean), _t(var), eps=1e-3)).numpy()
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)

    net.set_train()
    running_mean, running_var = _t(mean), _t(var)
    want = F.relu(F.batch_norm(dense, running_mean, running_var, training=True, momentum=0.2, eps=1e-3)).numpy()
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.batchnorm.moving_mean.asnumpy(), running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.batchnorm.moving_variance.asnumpy(), running_var.numpy(), rtol=1e-5, atol=1e-6)


def test_dense_bn_act_documented_example():
    net = nn.DenseBnAct(3, 4)
    x = Tensor(np.random.randint(0, 255, [2, 3]), aotnn.float32)
    assert net(x).shape == (2, 4)
