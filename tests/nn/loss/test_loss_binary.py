"""BCELoss, BCEWithLogitsLoss and SoftMarginLoss against PyTorch's functional losses."""
from __future__ import annotations

import numpy as np
import pytest
import torch.nn.functional as F

import aotnn as ms
from aotnn import Parameter, Tensor, nn, ops
from .loss_reference import close, t

RNG = np.random.default_rng(8)
P2 = RNG.uniform(0.05, 0.95, (4, 3)).astype(np.float32)          # configuration 1: (N, C)
Y2 = RNG.uniform(0, 1, (4, 3)).astype(np.float32)
P4 = RNG.uniform(0.05, 0.95, (2, 3, 2, 2)).astype(np.float32)    # configuration 2: (N, C, H, W)
Y4 = (RNG.random((2, 3, 2, 2)) > 0.5).astype(np.float32)
W2 = RNG.uniform(0.5, 2, (4, 3)).astype(np.float32)
X2 = (RNG.standard_normal((4, 3)) * 3).astype(np.float32)
X4 = (RNG.standard_normal((2, 3, 2, 2)) * 3).astype(np.float32)
SIGNS4 = np.where(RNG.random((2, 3, 2, 2)) > 0.5, 1.0, -1.0).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_matches_torch(reduction):
    close(nn.BCELoss(reduction=reduction)(Tensor(P4), Tensor(Y4)),
          F.binary_cross_entropy(t(P4), t(Y4), reduction=reduction), rtol=2e-5)
    close(nn.BCELoss(Tensor(W2), reduction)(Tensor(P2), Tensor(Y2)),
          F.binary_cross_entropy(t(P2), t(Y2), weight=t(W2), reduction=reduction), rtol=2e-5)


def test_bce_docstring_example_and_clamped_logs():
    weight = Tensor(np.array([[1.0, 2.0, 3.0], [4.0, 3.3, 2.2]]), ms.float32)
    logits = Tensor(np.array([[0.1, 0.2, 0.3], [0.5, 0.7, 0.9]]), ms.float32)
    labels = Tensor(np.array([[0, 1, 0], [0, 0, 1]]), ms.float32)
    close(nn.BCELoss(weight=weight, reduction='mean')(logits, labels), np.float32(1.8952923), rtol=1e-6)
    # MindSpore clamps the logarithms' arguments at 1e-12: a certain wrong answer costs -log(1e-12)
    x = np.array([0.0, 1.0, 0.5, 1e-30], np.float32)
    y = np.array([1.0, 0.0, 1.0, 1.0], np.float32)
    expected = -(y * np.log(np.maximum(x, 1e-12)) + (1 - y) * np.log(np.maximum(1 - x, 1e-12)))
    close(nn.BCELoss(reduction='none')(Tensor(x), Tensor(y)), expected, rtol=1e-6)


def test_bce_float16_and_errors():
    out = nn.BCELoss()(Tensor(P2.astype(np.float16)), Tensor(Y2.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, F.binary_cross_entropy(t(P2), t(Y2)), rtol=3e-3)
    with pytest.raises(TypeError, match="weight"):
        nn.BCELoss(weight=[1.0, 2.0])
    with pytest.raises(TypeError, match="dtype"):
        nn.BCELoss()(Tensor(np.ones(3, np.int32)), Tensor(np.ones(3, np.int32)))
    with pytest.raises(ValueError, match="shape"):
        nn.BCELoss()(Tensor(P2), Tensor(Y2[:2]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_torch(reduction):
    pos_weight = RNG.uniform(0.5, 3, (3,)).astype(np.float32)
    close(nn.BCEWithLogitsLoss(reduction)(Tensor(X4), Tensor(Y4)),
          F.binary_cross_entropy_with_logits(t(X4), t(Y4), reduction=reduction), rtol=2e-5, atol=1e-6)
    close(nn.BCEWithLogitsLoss(reduction, Tensor(W2), Tensor(pos_weight))(Tensor(X2), Tensor(Y2)),
          F.binary_cross_entropy_with_logits(t(X2), t(Y2), weight=t(W2), pos_weight=t(pos_weight),
                                             reduction=reduction), rtol=2e-5, atol=1e-6)


def test_bce_with_logits_is_stable_for_large_logits():
    x = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    y = np.array([1.0, 0.0, 0.5, 1.0, 0.0], np.float32)
    close(nn.BCEWithLogitsLoss('none')(Tensor(x), Tensor(y)),
          F.binary_cross_entropy_with_logits(t(x), t(y), reduction='none'), rtol=1e-6)


def test_bce_with_logits_docstring_float16_and_errors():
    logits = Tensor(np.array([[-0.8, 1.2, 0.7], [-0.1, -0.4, 0.7]]).astype(np.float32))
    labels = Tensor(np.array([[0.3, 0.8, 1.2], [-0.6, 0.1, 2.2]]).astype(np.float32))
    close(nn.BCEWithLogitsLoss()(logits, labels), np.float32(0.3463612), rtol=1e-6)
    out = nn.BCEWithLogitsLoss()(Tensor(X2.astype(np.float16)), Tensor(Y2.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, F.binary_cross_entropy_with_logits(t(X2), t(Y2)), rtol=3e-3)
    with pytest.raises(TypeError, match="Parameter"):
        nn.BCEWithLogitsLoss(weight=Parameter(Tensor(W2), name='w'))
    with pytest.raises(TypeError, match="pos_weight"):
        nn.BCEWithLogitsLoss(pos_weight=Parameter(Tensor(np.ones(3, np.float32)), name='pw'))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_soft_margin_matches_torch(reduction):
    close(nn.SoftMarginLoss(reduction)(Tensor(X4), Tensor(SIGNS4)),
          F.soft_margin_loss(t(X4), t(SIGNS4), reduction=reduction), rtol=2e-5, atol=1e-6)
    signs = np.where(Y2 > 0.5, 1.0, -1.0).astype(np.float32)
    close(nn.SoftMarginLoss(reduction)(Tensor(X2), Tensor(signs)),
          F.soft_margin_loss(t(X2), t(signs), reduction=reduction), rtol=2e-5, atol=1e-6)


def test_soft_margin_docstring_float16_and_errors():
    logits = Tensor(np.array([[0.3, 0.7], [0.5, 0.5]]), ms.float32)
    labels = Tensor(np.array([[-1, 1], [1, -1]]), ms.float32)
    close(nn.SoftMarginLoss()(logits, labels), np.float32(0.6764238), rtol=1e-6)
    out = nn.SoftMarginLoss()(Tensor(X4.astype(np.float16)), Tensor(SIGNS4.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, F.soft_margin_loss(t(X4), t(SIGNS4)), rtol=3e-3)
    with pytest.raises(ValueError, match="shape"):
        nn.SoftMarginLoss()(Tensor(X2), Tensor(X2[:, :2]))


def test_binary_gradients_match_torch():
    x = t(P2, grad=True)
    F.binary_cross_entropy(x, t(Y2), weight=t(W2)).backward()
    close(ops.grad(nn.BCELoss(Tensor(W2)))(Tensor(P2), Tensor(Y2)), x.grad, rtol=1e-4, atol=1e-6)
    pos_weight = np.array([1.0, 2.0, 0.5], np.float32)
    x = t(X2, grad=True)
    F.binary_cross_entropy_with_logits(x, t(Y2), pos_weight=t(pos_weight)).backward()
    close(ops.grad(nn.BCEWithLogitsLoss(pos_weight=Tensor(pos_weight)))(Tensor(X2), Tensor(Y2)), x.grad,
          rtol=1e-4, atol=1e-6)
    x = t(X4, grad=True)
    F.soft_margin_loss(x, t(SIGNS4)).backward()
    close(ops.grad(nn.SoftMarginLoss())(Tensor(X4), Tensor(SIGNS4)), x.grad, rtol=1e-4, atol=1e-6)
