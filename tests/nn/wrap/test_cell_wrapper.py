"""Compiled training steps: TrainOneStepCell against the same steps in PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn
from tests.train.training_cells import MeanSquare, PlainSGD


class SmallNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 6 * 6, 3)

    def construct(self, x):
        return self.fc(self.flatten(self.relu(self.bn(self.conv(x)))))


def _torch_step(params, x, t, lr, stats):
    p = {k: torch.tensor(v, requires_grad=k not in ("bn.moving_mean", "bn.moving_variance")) for k, v in params.items()}
    h = F.conv2d(torch.tensor(x), p["conv.weight"], p["conv.bias"], padding=1)
    mean = h.mean(dim=(0, 2, 3))
    var = h.var(dim=(0, 2, 3), unbiased=False)
    unbiased = h.var(dim=(0, 2, 3), unbiased=True)
    h = (h - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + 1e-5)
    h = h * p["bn.gamma"][None, :, None, None] + p["bn.beta"][None, :, None, None]
    y = F.linear(torch.relu(h).flatten(1), p["fc.weight"], p["fc.bias"])
    loss = ((y - torch.tensor(t)) ** 2).mean()
    loss.backward()
    new = {}
    for k, v in p.items():
        new[k] = (v - lr * v.grad).detach().numpy() if v.requires_grad else v.detach().numpy()
    new["bn.moving_mean"] = 0.9 * params["bn.moving_mean"] + 0.1 * mean.detach().numpy()
    new["bn.moving_variance"] = 0.9 * params["bn.moving_variance"] + 0.1 * unbiased.detach().numpy()
    return float(loss), new


def test_train_one_step_matches_torch_including_batchnorm_statistics():
    aotnn.set_seed(0)
    net = SmallNet()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, MeanSquare()), PlainSGD(net.trainable_params(), 0.1))
    step.set_train()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 2, 6, 6)).astype(np.float32)
    t = rng.standard_normal((4, 3)).astype(np.float32)
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    for _ in range(3):
        loss = step(Tensor(x), Tensor(t))
        expected_loss, params = _torch_step(params, x, t, 0.1, None)
        np.testing.assert_allclose(loss.asnumpy(), expected_loss, rtol=1e-4)
        for p in net.get_parameters():
            np.testing.assert_allclose(p.asnumpy(), params[p.name], rtol=1e-4, atol=1e-5, err_msg=p.name)


def test_with_loss_cell_adds_no_prefix_and_eval_cell():
    net = nn.Dense(2, 2)
    assert [p.name for p in nn.WithLossCell(net, MeanSquare()).get_parameters()] == ["weight", "bias"]
    x = np.ones((1, 2), np.float32)
    loss, out, label = nn.WithEvalCell(net, MeanSquare())(Tensor(x), Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), x @ net.weight.asnumpy().T + net.bias.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(loss.asnumpy(), ((out.asnumpy() - x) ** 2).mean(), rtol=1e-6)


def test_forward_value_and_grad_weights():
    net = nn.Dense(3, 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    value, grads = nn.ForwardValueAndGrad(net, net.trainable_params(), get_by_list=True)(Tensor(x))
    np.testing.assert_allclose(value.asnumpy(), x @ net.weight.asnumpy().T + net.bias.asnumpy(), rtol=1e-6)
    np.testing.assert_allclose(grads[0].asnumpy(), x.sum(axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(grads[1].asnumpy(), [2.0], rtol=1e-6)


def test_train_one_step_return_grad_gives_loss_and_named_gradients():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    net = nn.Dense(3, 2)
    w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt, return_grad=True)
    loss, grads = step(Tensor(x), Tensor(y))
    # hand-derived: L = mean((xW^T + b - y)^2); dL/dW = 2/N r^T x, dL/db = 2/N sum r
    residual = x @ w0.T + b0 - y
    np.testing.assert_allclose(float(loss.asnumpy()), np.mean(residual ** 2), rtol=1e-5)
    assert sorted(grads) == ["bias", "weight"]
    np.testing.assert_allclose(grads["weight"].asnumpy(), 2 / residual.size * residual.T @ x, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["bias"].asnumpy(), 2 / residual.size * residual.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.weight.asnumpy(), w0 - 0.1 * grads["weight"].asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="sens"):
        nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt, sens=0)
