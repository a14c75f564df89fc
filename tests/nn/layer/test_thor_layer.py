"""THOR layers: the plain layers' outputs, and the covariances THOR needs after a training step."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn


def _train_once(net, x, target, loss):
    """One compiled training step with a zero learning rate (the weights stay as they are)."""
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), 0.0))
    step.set_train()
    return float(step(x, target).asnumpy())


def _cov(rows):
    rows = rows.reshape(-1, rows.shape[-1]).astype(np.float64)
    return rows.T @ rows / rows.shape[0]


def test_dense_thor_seed_example():
    x = Tensor(np.array([[1, 2, 3], [3, 4, 5]]), aotnn.float32)
    net = nn.DenseThor(3, 4, weight_init="ones")
    np.testing.assert_allclose(net(x).asnumpy(), [[6] * 4, [12] * 4])
    assert net.thor and net.matrix_a.shape == (3, 3) and net.matrix_g.shape == (4, 4)
    assert not net.matrix_a.requires_grad
    np.testing.assert_allclose(net.matrix_a.asnumpy(), np.eye(3))


@pytest.mark.parametrize("shape, activation, has_bias", [((6, 3), "tanh", True), ((2, 4, 3), None, False)])
def test_dense_thor_statistics(shape, activation, has_bias):
    rng = np.random.default_rng(1)
    x = rng.normal(size=shape).astype(np.float32)
    y = rng.normal(size=shape[:-1] + (4,)).astype(np.float32)
    w = rng.normal(size=(4, 3)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    net = nn.DenseThor(3, 4, Tensor(w), Tensor(b), has_bias=has_bias, activation=activation)
    plain = nn.Dense(3, 4, Tensor(w), Tensor(b), has_bias=has_bias, activation=activation)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), plain(Tensor(x)).asnumpy(), rtol=1e-6, atol=1e-6)
    loss = _train_once(net, Tensor(x), Tensor(y), nn.MSELoss())
    wt = torch.tensor(w, requires_grad=True)
    z = torch.tensor(x).reshape(-1, 3) @ wt.T
    z.retain_grad()
    out = z + torch.tensor(b) if has_bias else z
    out = torch.tanh(out) if activation else out
    ref = ((out.reshape(y.shape) - torch.tensor(y)) ** 2).mean()
    ref.backward()
    np.testing.assert_allclose(loss, float(ref.detach()), rtol=1e-5)
    np.testing.assert_allclose(net.matrix_a.asnumpy(), _cov(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.matrix_g.asnumpy(), _cov(z.grad.numpy()), rtol=1e-4, atol=1e-8)


def test_dense_thor_float16_forward_and_flag_off():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(5, 3)).astype(np.float16)
    w = rng.normal(size=(2, 3)).astype(np.float32)
    net = nn.DenseThor(3, 2, Tensor(w)).to_float(aotnn.float16)
    out = net(Tensor(x)).asnumpy()
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, x.astype(np.float32) @ w.T, rtol=1e-2, atol=1e-2)
    net = nn.DenseThor(3, 2, Tensor(w))
    net.thor = False
    _train_once(net, Tensor(x.astype(np.float32)), Tensor(np.zeros((5, 2), np.float32)), nn.MSELoss())
    np.testing.assert_allclose(net.matrix_a.asnumpy(), np.eye(3))


@pytest.mark.parametrize("kwargs", [dict(stride=2, pad_mode="pad", padding=1, has_bias=True),
                                    dict(pad_mode="valid", dilation=2)])
def test_conv2d_thor_statistics(kwargs):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 7, 7)).astype(np.float32)
    w = rng.normal(0, 0.3, size=(4, 3, 3, 3)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    net = nn.Conv2dThor(3, 4, 3, weight_init=Tensor(w), bias_init=Tensor(b), **kwargs)
    stride, padding, dilation = kwargs.get("stride", 1), kwargs.get("padding", 0), kwargs.get("dilation", 1)
    wt = torch.tensor(w, requires_grad=True)
    z = F.conv2d(torch.tensor(x), wt, None, stride, padding, dilation)
    z.retain_grad()
    out = z + torch.tensor(b).reshape(1, -1, 1, 1) if kwargs.get("has_bias") else z
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), out.detach().numpy(), rtol=1e-4, atol=1e-5)
    y = rng.normal(size=out.shape).astype(np.float32)
    ref = ((out - torch.tensor(y)) ** 2).mean()
    ref.backward()
    loss = _train_once(net, Tensor(x), Tensor(y), nn.MSELoss())
    np.testing.assert_allclose(loss, float(ref.detach()), rtol=1e-5)
    patches = F.unfold(torch.tensor(x), 3, dilation, padding, stride).numpy()      # (N, C*k*k, L)
    np.testing.assert_allclose(net.matrix_a_cov.asnumpy(), _cov(patches.transpose(0, 2, 1)), rtol=1e-4, atol=1e-5)
    dout = z.grad.numpy().transpose(0, 2, 3, 1)
    np.testing.assert_allclose(net.matrix_g_cov.asnumpy(), _cov(dout), rtol=1e-4, atol=1e-9)
    assert net.matrix_a_cov.shape == (27, 27) and net.matrix_g_cov.shape == (4, 4)


def test_conv2d_thor_seed_example_shape():
    net = nn.Conv2dThor(12, 24, 4, has_bias=False, weight_init='normal')
    x = Tensor(np.ones([1, 12, 10, 6]), aotnn.float16)
    assert net(x).shape == (1, 24, 10, 6)


@pytest.mark.parametrize("cls, kwargs", [(nn.EmbeddingThor, {}), (nn.EmbeddingLookupThor, {}),
                                         (nn.EmbeddingLookupThor, dict(max_norm=0.5))])
def test_embedding_thor_statistics(cls, kwargs):
    rng = np.random.default_rng(4)
    table = rng.normal(size=(6, 3)).astype(np.float32)
    ids = np.array([[1, 0, 5], [1, 1, 2]], np.int32)
    y = rng.normal(size=(2, 3, 3)).astype(np.float32)
    init = "embedding_table" if cls is nn.EmbeddingThor else "param_init"
    net = cls(6, 3, **{init: Tensor(table)}, **kwargs)
    rows = table[ids]
    if "max_norm" in kwargs:
        norms = np.linalg.norm(rows, axis=-1, keepdims=True)
        rows = rows * np.minimum(1.0, kwargs["max_norm"] / np.maximum(norms, 1e-12))
    np.testing.assert_allclose(net(Tensor(ids)).asnumpy(), rows, rtol=1e-5, atol=1e-6)
    _train_once(net, Tensor(ids), Tensor(y), nn.MSELoss())
    np.testing.assert_allclose(net.matrix_a.asnumpy(), np.bincount(ids.ravel(), minlength=6))
    dout = 2 * (rows - y) / y.size
    np.testing.assert_allclose(net.matrix_g.asnumpy(), _cov(dout), rtol=1e-4, atol=1e-9)


def test_embedding_thor_seed_example():
    net = nn.EmbeddingThor(200, 16, True)
    assert net(Tensor(np.ones([8, 12]), aotnn.int32)).shape == (8, 12, 16)
    assert nn.EmbeddingLookupThor(4, 2)(Tensor(np.array([[1, 0], [3, 2]]), aotnn.int32)).shape == (2, 2, 2)


@pytest.mark.parametrize("build, error", [
    (lambda: nn.DenseThor(0, 3), ValueError),
    (lambda: nn.DenseThor(3.5, 2), TypeError),
    (lambda: nn.DenseThor(3, 2, has_bias=1), TypeError),
    (lambda: nn.DenseThor(3, 2, weight_init=Tensor(np.ones((3, 3), np.float32))), ValueError),
    (lambda: nn.Conv2dThor(3, 4, 3, group=2), ValueError),
    (lambda: nn.Conv2dThor(3, 4, 3, pad_mode="full"), ValueError),
    (lambda: nn.EmbeddingThor("a", 3), TypeError),
    (lambda: nn.EmbeddingThor(4, 3, padding_idx=4), ValueError),
    (lambda: nn.EmbeddingLookupThor(4, 2, target="GPU"), ValueError),
    (lambda: nn.EmbeddingLookupThor(4, 2, sparse=False), ValueError),
])
def test_thor_layers_invalid_arguments(build, error):
    with pytest.raises(error):
        build()
