"""SoftmaxCrossEntropyWithLogits and SoftmaxCrossEntropyExpand against torch's cross_entropy, and
FocalLoss against a numpy implementation of its formula."""
from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops
from .loss_reference import close, numeric_gradient, t

RNG = np.random.default_rng(21)
LOGITS = (RNG.standard_normal((6, 5)) * 3).astype(np.float32)
SPARSE = RNG.integers(0, 5, 6).astype(np.int32)
SOFT = RNG.random((6, 5)).astype(np.float32)
SOFT /= SOFT.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_softmax_cross_entropy_matches_torch(reduction):
    expected_dense = F.cross_entropy(t(LOGITS), t(SOFT), reduction=reduction)
    close(nn.SoftmaxCrossEntropyWithLogits(False, reduction)(Tensor(LOGITS), Tensor(SOFT)), expected_dense, rtol=2e-5)
    expected_sparse = F.cross_entropy(t(LOGITS), t(SPARSE.astype(np.int64)), reduction=reduction)
    close(nn.SoftmaxCrossEntropyWithLogits(True, reduction)(Tensor(LOGITS), Tensor(SPARSE)), expected_sparse,
          rtol=2e-5)
    close(nn.SoftmaxCrossEntropyWithLogits(True, reduction)(Tensor(LOGITS), Tensor(SPARSE.astype(np.int64))),
          expected_sparse, rtol=2e-5)


def test_softmax_cross_entropy_defaults_and_docstring_examples():
    loss = nn.SoftmaxCrossEntropyWithLogits()
    assert (loss.sparse, loss.reduction) == (False, 'none')
    logits = Tensor(np.array([[3, 5, 6, 9, 12, 33, 42, 12, 32, 72]]), ms.float32)
    close(nn.SoftmaxCrossEntropyWithLogits(sparse=True)(logits, Tensor(np.array([1], np.int32))),
          np.array([67.0], np.float32), rtol=1e-6)
    onehot = np.zeros((1, 10), np.float32)
    onehot[0, 6] = 1
    close(nn.SoftmaxCrossEntropyWithLogits(sparse=False)(logits, Tensor(onehot)), np.array([30.0], np.float32),
          rtol=1e-6)


def test_softmax_cross_entropy_early_mindspore_keywords():
    # MindSpore 0.x/1.0 scripts: SoftmaxCrossEntropyWithLogits(is_grad=False, sparse=True, reduction='mean')
    loss = nn.SoftmaxCrossEntropyWithLogits(is_grad=False, sparse=True, reduction='mean')
    close(loss(Tensor(LOGITS), Tensor(SPARSE)), F.cross_entropy(t(LOGITS), t(SPARSE.astype(np.int64))), rtol=2e-5)
    assert nn.SoftmaxCrossEntropyWithLogits(reduction=None).reduction == 'none'


def test_softmax_cross_entropy_float16_and_large_logits():
    out = nn.SoftmaxCrossEntropyWithLogits(True, 'mean')(Tensor(LOGITS.astype(np.float16)), Tensor(SPARSE))
    assert out.dtype == ms.float16
    close(out, F.cross_entropy(t(LOGITS), t(SPARSE.astype(np.int64))), rtol=3e-3)
    big = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 1.0]], np.float32)
    labels = np.array([2, 1], np.int32)
    close(nn.SoftmaxCrossEntropyWithLogits(True)(Tensor(big), Tensor(labels)),
          F.cross_entropy(t(big), t(labels.astype(np.int64)), reduction='none'), rtol=1e-6)


def test_softmax_cross_entropy_errors():
    with pytest.raises(TypeError, match="sparse"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=1)
    with pytest.raises(TypeError, match="int32 or int64"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(Tensor(LOGITS), Tensor(SPARSE.astype(np.float32)))
    with pytest.raises(ValueError, match="shape"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(Tensor(LOGITS), Tensor(SPARSE[:3]))
    with pytest.raises(TypeError, match="dtype"):
        nn.SoftmaxCrossEntropyWithLogits()(Tensor(LOGITS.astype(np.int32)), Tensor(SOFT))
    with pytest.raises(ValueError, match="shape"):
        nn.SoftmaxCrossEntropyWithLogits()(Tensor(LOGITS), Tensor(SOFT[:, :4]))


def test_softmax_cross_entropy_expand_matches_torch():
    close(nn.SoftmaxCrossEntropyExpand(sparse=True)(Tensor(LOGITS), Tensor(SPARSE)),
          F.cross_entropy(t(LOGITS), t(SPARSE.astype(np.int64))), rtol=2e-5)
    close(nn.SoftmaxCrossEntropyExpand()(Tensor(LOGITS), Tensor(SOFT)), F.cross_entropy(t(LOGITS), t(SOFT)), rtol=2e-5)
    # the seed's example: uniform logits over 512 classes cost log(512)
    out = nn.SoftmaxCrossEntropyExpand(sparse=True)(Tensor(np.ones([64, 512]), dtype=ms.float32),
                                                    Tensor(np.ones([64]), dtype=ms.int32))
    close(out, np.float32(np.log(512)), rtol=1e-6)
    with pytest.raises(TypeError, match="sparse"):
        nn.SoftmaxCrossEntropyExpand(sparse="yes")


def test_cross_entropy_gradients_match_torch():
    x = t(LOGITS, grad=True)
    F.cross_entropy(x, t(SPARSE.astype(np.int64))).backward()
    close(ops.grad(nn.SoftmaxCrossEntropyWithLogits(True, 'mean'))(Tensor(LOGITS), Tensor(SPARSE)), x.grad,
          rtol=1e-4, atol=1e-6)
    x = t(LOGITS, grad=True)
    F.cross_entropy(x, t(SOFT)).backward()
    close(ops.grad(nn.SoftmaxCrossEntropyExpand())(Tensor(LOGITS), Tensor(SOFT)), x.grad, rtol=1e-4, atol=1e-6)


# -- FocalLoss ---------------------------------------------------------------------------------------

def focal_reference(logits, labels, gamma=2.0, weight=None, reduction='mean'):
    """The documented formula, FL = -(1 - p_t)^gamma * log(p_t), with the class weight on log(p_t);
    probabilities from a softmax over axis 1, the loss averaged over the positions of each sample."""
    n, c = logits.shape[:2]
    z = logits.reshape(n, c, -1).astype(np.float64)
    log_p = z - z.max(axis=1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(axis=1, keepdims=True))
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    if labels.shape[1] == 1:
        idx = labels.reshape(n, 1, -1).astype(np.int64) % c
        lp = np.take_along_axis(log_p, idx, axis=1)[:, 0]
        loss = (-(1 - np.exp(lp)) ** gamma * w[idx[:, 0]] * lp).mean(axis=1)
    else:
        y = labels.reshape(n, c, -1).astype(np.float64)
        loss = (-(1 - np.exp(log_p)) ** gamma * y * w[None, :, None] * log_p).mean(axis=-1)
    return {'mean': loss.mean(), 'sum': loss.sum(), 'none': loss}[reduction]


LOGITS4 = RNG.standard_normal((2, 3, 2, 3)).astype(np.float32)
INDEX4 = RNG.integers(0, 3, (2, 1, 2, 3)).astype(np.int32)
ONEHOT2 = np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 5)]
LOGITS2 = RNG.standard_normal((5, 4)).astype(np.float32) * 2


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_focal_loss_matches_formula(reduction):
    weight = np.array([1.0, 2.0, 0.5], np.float32)
    close(nn.FocalLoss(Tensor(weight), 2.0, reduction)(Tensor(LOGITS4), Tensor(INDEX4)),
          focal_reference(LOGITS4, INDEX4, 2.0, weight, reduction), rtol=1e-5, atol=1e-7)
    close(nn.FocalLoss(gamma=1.5, reduction=reduction)(Tensor(LOGITS2), Tensor(ONEHOT2)),
          focal_reference(LOGITS2, ONEHOT2, 1.5, None, reduction), rtol=1e-5, atol=1e-7)


def test_focal_loss_docstring_example_index_labels_3d_and_negative_labels():
    logits = Tensor([[0.8, 1.4], [0.5, 0.9], [1.2, 0.9]], ms.float32)
    labels = Tensor([[1], [1], [0]], ms.int32)
    close(nn.FocalLoss(weight=Tensor([1, 2]), gamma=2.0, reduction='mean')(logits, labels), np.float32(0.12516622),
          rtol=1e-5)
    x3 = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    y3 = RNG.integers(-4, 4, (2, 1, 5)).astype(np.int64)  # labels in [-C, C)
    close(nn.FocalLoss(gamma=0.0, reduction='none')(Tensor(x3), Tensor(y3)),
          focal_reference(x3, y3, 0.0, None, 'none'), rtol=1e-5)


def test_focal_loss_float16():
    out = nn.FocalLoss()(Tensor(LOGITS2.astype(np.float16)), Tensor(ONEHOT2.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, focal_reference(LOGITS2, ONEHOT2), rtol=5e-3, atol=1e-4)


def test_focal_loss_errors():
    with pytest.raises(TypeError, match="gamma"):
        nn.FocalLoss(gamma=2)
    with pytest.raises(TypeError, match="weight"):
        nn.FocalLoss(weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="weight"):
        nn.FocalLoss(weight=Tensor(np.ones((2, 2), np.float32)))
    with pytest.raises(ValueError, match=r"\[2, 4\]"):
        nn.FocalLoss()(Tensor(np.ones(3, np.float32)), Tensor(np.ones(3, np.int32)))
    with pytest.raises(ValueError, match="equal"):
        nn.FocalLoss()(Tensor(LOGITS4), Tensor(INDEX4[:, :, 0]))
    with pytest.raises(ValueError, match="shape\\[1\\]"):
        nn.FocalLoss()(Tensor(LOGITS2), Tensor(np.ones((5, 3), np.float32)))
    with pytest.raises(ValueError, match="cannot be one"):
        nn.FocalLoss()(Tensor(LOGITS2[:, :1]), Tensor(np.ones((5, 1), np.int32)))
    with pytest.raises(TypeError, match="labels"):
        nn.FocalLoss()(Tensor(LOGITS2), Tensor(np.ones((5, 1), np.uint8)))


def test_focal_loss_gradient_matches_finite_differences():
    labels = Tensor(INDEX4)
    grad = ops.grad(nn.FocalLoss(gamma=2.0))(Tensor(LOGITS4), labels).asnumpy()
    numeric = numeric_gradient(lambda logits: focal_reference(logits, INDEX4), LOGITS4)
    np.testing.assert_allclose(grad, numeric, rtol=1e-3, atol=1e-5)
