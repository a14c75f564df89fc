"""LossBase (get_loss, get_axis, reductions) and the distance losses L1Loss, MSELoss, RMSELoss,
SmoothL1Loss, against PyTorch's functional losses."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops
from .loss_reference import close, t

RNG = np.random.default_rng(5)
A = RNG.standard_normal((4, 5)).astype(np.float32)          # configuration 1: same shapes
B = RNG.standard_normal((4, 5)).astype(np.float32)
C3 = RNG.standard_normal((2, 3, 4)).astype(np.float32) * 2  # configuration 2: broadcast (3, 4) against (2, 3, 4)
D3 = RNG.standard_normal((3, 4)).astype(np.float32)


class AbsLoss(nn.LossBase):
    """The docstring example of LossBase.get_loss."""

    def __init__(self, reduction='mean', weights=1.0):
        super().__init__(reduction)
        self.weights = weights

    def construct(self, logits, labels):
        return self.get_loss(ops.abs(logits - labels), self.weights)


def test_get_loss_docstring_examples():
    logits = Tensor(np.array([1, 2, 3]), ms.float32)
    close(AbsLoss()(logits, Tensor(np.array([1, 2, 2]), ms.float32)), np.float32(1 / 3))  # prints 0.33333334
    logits = Tensor(np.array([[1, 2, 3], [1, 2, 3], [1, 2, 3]]), ms.float32)
    labels = Tensor(np.array([[1, 2, 2], [1, 2, 3], [1, 2, 3]]), ms.float32)
    close(AbsLoss()(logits, labels), np.float32(1 / 9))  # prints 0.11111111
    assert AbsLoss().get_axis(logits) == (0, 1)
    assert AbsLoss().get_axis(Tensor(np.ones(3, np.float32))) == (0,)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_get_loss_weights_and_reductions(reduction):
    weights = RNG.random((4, 1)).astype(np.float32)
    expected = np.abs(A - B) * weights
    expected = {"mean": expected.mean(), "sum": expected.sum(), "none": expected}[reduction]
    close(AbsLoss(reduction, Tensor(weights))(Tensor(A), Tensor(B)), expected, rtol=1e-5)
    close(AbsLoss(reduction, 2.0)(Tensor(A), Tensor(B)), {"mean": np.abs(A - B).mean() * 2,
                                                         "sum": np.abs(A - B).sum() * 2,
                                                         "none": np.abs(A - B) * 2}[reduction], rtol=1e-5)


def test_get_loss_float16_keeps_the_input_dtype():
    out = AbsLoss('sum')(Tensor(A.astype(np.float16)), Tensor(B.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, np.abs(A.astype(np.float16) - B.astype(np.float16)).astype(np.float32).sum(), rtol=2e-3)


@pytest.mark.parametrize("cls", [nn.LossBase, nn.L1Loss, nn.MSELoss, nn.SmoothL1Loss, nn.SoftMarginLoss, nn.BCELoss,
                                 nn.BCEWithLogitsLoss, nn.FocalLoss, nn.CosineEmbeddingLoss])
def test_invalid_reduction_raises_value_error(cls):
    with pytest.raises(ValueError, match="reduction"):
        cls(reduction='average')


def test_sparse_losses_invalid_reduction():
    with pytest.raises(ValueError, match="reduction"):
        nn.SoftmaxCrossEntropyWithLogits(reduction='bad')
    with pytest.raises(ValueError, match="reduction"):
        nn.SampledSoftmaxLoss(2, 5, reduction=None)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_and_mse_match_torch(reduction):
    for x, y in ((A, B), (D3, C3)):
        close(nn.L1Loss(reduction)(Tensor(x), Tensor(y)),
              F.l1_loss(*torch.broadcast_tensors(t(x), t(y)), reduction=reduction))
        close(nn.MSELoss(reduction)(Tensor(x), Tensor(y)),
              F.mse_loss(*torch.broadcast_tensors(t(x), t(y)), reduction=reduction), rtol=2e-5)


def test_l1_mse_rmse_docstring_examples():
    logits, labels = Tensor(np.array([1, 2, 3]), ms.float32), Tensor(np.array([1, 2, 2]), ms.float32)
    close(nn.L1Loss()(logits, labels), np.float32(1 / 3))
    close(nn.MSELoss()(logits, Tensor(np.array([1, 1, 1]), ms.float32)), np.float32(5 / 3))
    close(nn.RMSELoss()(logits, labels), np.float32(np.sqrt(1 / 3)))  # 0.57735026
    close(nn.RMSELoss()(logits, Tensor(np.array([[1, 1, 1], [1, 2, 2]]), ms.float32)), np.float32(1.0))
    close(nn.L1Loss('none')(logits, Tensor(np.array([[1, 1, 1], [1, 2, 2]]), ms.float32)),
          np.array([[0, 1, 2], [0, 0, 1]], np.float32))


def test_rmse_matches_torch():
    for x, y in ((A, B), (D3, C3)):
        close(nn.RMSELoss()(Tensor(x), Tensor(y)), torch.sqrt(F.mse_loss(*torch.broadcast_tensors(t(x), t(y)))))


def test_regression_losses_reject_bad_inputs():
    with pytest.raises(ValueError, match="broadcast"):
        nn.MSELoss()(Tensor(A), Tensor(D3))
    with pytest.raises(TypeError, match="Tensor"):
        nn.L1Loss()(A.tolist(), Tensor(B))
    with pytest.raises(TypeError, match="unsigned"):
        nn.RMSELoss()(Tensor(np.ones(3, np.uint8)), Tensor(np.ones(3, np.uint8)))


def test_mse_float16():
    out = nn.MSELoss()(Tensor(A.astype(np.float16)), Tensor(B.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, F.mse_loss(t(A), t(B)), rtol=3e-3, atol=1e-3)


@pytest.mark.parametrize("beta, reduction", [(1.0, "none"), (0.5, "mean"), (2.0, "sum")])
def test_smooth_l1_matches_torch(beta, reduction):
    x, y = C3, C3 + RNG.standard_normal(C3.shape).astype(np.float32) * 1.5
    close(nn.SmoothL1Loss(beta, reduction)(Tensor(x), Tensor(y)),
          F.smooth_l1_loss(t(x), t(y), reduction=reduction, beta=beta), rtol=2e-5)


def test_smooth_l1_defaults_docstring_and_float16():
    loss = nn.SmoothL1Loss()
    assert (loss.beta, loss.reduction) == (1.0, 'none')
    close(loss(Tensor(np.array([1, 2, 3]), ms.float32), Tensor(np.array([1, 2, 2]), ms.float32)),
          np.array([0, 0, 0.5], np.float32))
    out = loss(Tensor(A.astype(np.float16)), Tensor(B.astype(np.float16)))
    assert out.dtype == ms.float16
    close(out, F.smooth_l1_loss(t(A), t(B), reduction='none'), rtol=3e-3, atol=2e-3)


def test_smooth_l1_accepts_early_mindspore_sigma():
    x, y = C3, C3 * 0.5
    close(nn.SmoothL1Loss(sigma=2.0)(Tensor(x), Tensor(y)), F.smooth_l1_loss(t(x), t(y), reduction='none', beta=2.0),
          rtol=2e-5)


def test_smooth_l1_invalid_arguments():
    with pytest.raises(TypeError, match="beta"):
        nn.SmoothL1Loss(beta="1")
    with pytest.raises(ValueError, match="beta"):
        nn.SmoothL1Loss(beta=0.0)
    with pytest.raises(TypeError, match="dtype"):
        nn.SmoothL1Loss()(Tensor(np.ones(3, np.int32)), Tensor(np.ones(3, np.int32)))
    with pytest.raises(ValueError, match="shape"):
        nn.SmoothL1Loss()(Tensor(A), Tensor(A[:2]))


def test_regression_gradients_match_torch():
    x, y = t(A, grad=True), t(B)
    F.smooth_l1_loss(x, y, beta=0.5).backward()
    close(ops.grad(nn.SmoothL1Loss(0.5, 'mean'))(Tensor(A), Tensor(B)), x.grad, rtol=1e-5)
    x = t(A, grad=True)
    torch.sqrt(F.mse_loss(x, t(B))).backward()
    close(ops.grad(nn.RMSELoss())(Tensor(A), Tensor(B)), x.grad, rtol=1e-5)
