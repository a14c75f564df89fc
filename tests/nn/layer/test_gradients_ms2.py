"""Gradients through the MindSpore 2.x additions (losses, padding, nearest upsampling, GLU, gathers and
scatters, sort/topk values, channel shuffles) against PyTorch autograd."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(20)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _grad(fn, x):
    return ops.grad(fn)(Tensor(x)).asnumpy()


def _torch_grad(fn, x):
    t = torch.from_numpy(x.copy()).requires_grad_()
    fn(t).backward()
    return t.grad.numpy()


def test_cross_entropy_and_nll_gradients():
    x = rand(4, 5)
    target = np.array([0, 3, -100, 1], np.int64)
    weight = RNG.uniform(0.5, 2, 5).astype(np.float32)
    ours = _grad(lambda v: nn.CrossEntropyLoss(Tensor(weight), label_smoothing=0.1)(v, Tensor(target)), x)
    theirs = _torch_grad(lambda v: TF.cross_entropy(v, torch.from_numpy(target), torch.from_numpy(weight),
                                                    label_smoothing=0.1), x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)
    probs = RNG.dirichlet(np.ones(5), 4).astype(np.float32)
    ours = _grad(lambda v: ops.cross_entropy(v, Tensor(probs)), x)
    theirs = _torch_grad(lambda v: TF.cross_entropy(v, torch.from_numpy(probs)), x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


def test_distribution_and_margin_loss_gradients():
    x = rand(3, 4)
    y = RNG.dirichlet(np.ones(4), 3).astype(np.float32)
    ours = _grad(lambda v: nn.KLDivLoss("batchmean")(v, Tensor(y)), x)
    theirs = _torch_grad(lambda v: TF.kl_div(v, torch.from_numpy(y), reduction="batchmean"), x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    target = rand(3, 4)
    ours = _grad(lambda v: nn.HuberLoss(delta=0.5)(v, Tensor(target)), x)
    theirs = _torch_grad(lambda v: TF.huber_loss(v, torch.from_numpy(target), delta=0.5), x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ours, theirs", [
    (lambda: nn.ReflectionPad2d((1, 2, 2, 1)), lambda: tnn.ReflectionPad2d((1, 2, 2, 1))),
    (lambda: nn.ReplicationPad2d((2, 0, 1, 1)), lambda: tnn.ReplicationPad2d((2, 0, 1, 1))),
    (lambda: nn.Upsample(scale_factor=2.0), lambda: tnn.Upsample(scale_factor=2.0)),
    (lambda: nn.GLU(axis=1), lambda: tnn.GLU(dim=1)),
    (lambda: nn.PixelShuffle(2), lambda: tnn.PixelShuffle(2)),
    (lambda: nn.SeLU(), lambda: tnn.SELU()),
])
def test_layer_gradients_against_torch(ours, theirs):
    x = rand(1, 4, 3, 4)
    weights = rand(*theirs()(torch.from_numpy(x)).shape)
    layer, reference = ours(), theirs()
    got = _grad(lambda v: ops.reduce_sum(layer(v) * Tensor(weights)), x)
    want = _torch_grad(lambda v: (reference(v) * torch.from_numpy(weights)).sum(), x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_gather_scatter_and_topk_gradients():
    x = rand(3, 5)
    index = RNG.integers(0, 5, (3, 4)).astype(np.int64)
    weights = rand(3, 4)
    got = _grad(lambda v: ops.reduce_sum(ops.gather_elements(v, 1, Tensor(index)) * Tensor(weights)), x)
    want = _torch_grad(lambda v: (torch.gather(v, 1, torch.from_numpy(index)) * torch.from_numpy(weights)).sum(), x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    scatter_index = np.array([[0, 2], [4, 1], [3, 3]], np.int64)
    updates = rand(3, 2)
    weights5 = rand(3, 5)
    got = _grad(lambda v: ops.reduce_sum(
        ops.tensor_scatter_elements(v, Tensor(scatter_index), Tensor(updates), 1, "add") * Tensor(weights5)), x)
    want = _torch_grad(lambda v: (v.scatter_add(1, torch.from_numpy(scatter_index), torch.from_numpy(updates))
                                  * torch.from_numpy(weights5)).sum(), x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    top_weights = rand(3, 2)
    got = _grad(lambda v: ops.reduce_sum(ops.topk(v, 2)[0] * Tensor(top_weights)), x)
    want = _torch_grad(lambda v: (torch.topk(v, 2).values * torch.from_numpy(top_weights)).sum(), x)
    np.testing.assert_allclose(got, want, rtol=1e-6)
