"""KLDivLoss (nn / ops.KLDivLoss / ops.kl_div), PoissonNLLLoss, GaussianNLLLoss, MAELoss, HingeEmbeddingLoss
and MultiLabelSoftMarginLoss against PyTorch CPU (MindSpore 2.10 gives PyTorch's values for these, zero
labels of KLDivLoss included)."""
import numpy as np
import pytest
import torch
import torch.nn as tnn

from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(16)


def close(got, want):
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div_against_torch_with_zero_labels(reduction):
    logits = np.log(RNG.dirichlet(np.ones(4), 3)).astype(np.float32)
    labels = RNG.dirichlet(np.ones(4), 3).astype(np.float32)
    labels[0, 1] = 0.0
    want = tnn.KLDivLoss(reduction=reduction)(torch.from_numpy(logits), torch.from_numpy(labels))
    close(nn.KLDivLoss(reduction)(Tensor(logits), Tensor(labels)), want)
    close(ops.KLDivLoss(reduction)(Tensor(logits), Tensor(labels)), want)
    with pytest.raises(ValueError, match="reduction"):
        nn.KLDivLoss("avg")


@pytest.mark.parametrize("log_input, full, reduction", [(True, False, "mean"), (True, True, "none"),
                                                        (False, True, "sum"), (False, False, "none")])
def test_poisson_nll_loss_against_torch(log_input, full, reduction):
    x = RNG.uniform(0.1, 2, (3, 4)).astype(np.float32)
    y = RNG.integers(0, 5, (3, 4)).astype(np.float32)
    want = tnn.PoissonNLLLoss(log_input=log_input, full=full, reduction=reduction)(torch.from_numpy(x),
                                                                                  torch.from_numpy(y))
    close(nn.PoissonNLLLoss(log_input, full, reduction=reduction)(Tensor(x), Tensor(y)), want)


@pytest.mark.parametrize("full, reduction, var_shape", [(False, "mean", (3, 4)), (True, "none", (3, 4)),
                                                        (True, "sum", (3, 1))])
def test_gaussian_nll_loss_against_torch(full, reduction, var_shape):
    x, y = (RNG.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    var = RNG.uniform(1e-8, 2, var_shape).astype(np.float32)
    want = tnn.GaussianNLLLoss(full=full, reduction=reduction)(*(torch.from_numpy(v) for v in (x, y, var)))
    close(nn.GaussianNLLLoss(full=full, reduction=reduction)(Tensor(x), Tensor(y), Tensor(var)), want)


def test_mae_and_hinge_embedding_against_torch():
    x, y = (RNG.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    close(nn.MAELoss()(Tensor(x), Tensor(y)), tnn.L1Loss()(torch.from_numpy(x), torch.from_numpy(y)))
    labels = np.sign(RNG.standard_normal((3, 4))).astype(np.float32)
    for reduction, margin in (("mean", 1.0), ("none", 0.5), ("sum", 2.0)):
        want = tnn.HingeEmbeddingLoss(margin, reduction=reduction)(torch.from_numpy(x), torch.from_numpy(labels))
        close(nn.HingeEmbeddingLoss(margin, reduction)(Tensor(x), Tensor(labels)), want)


@pytest.mark.parametrize("weighted, reduction", [(False, "mean"), (True, "none"), (True, "sum")])
def test_multilabel_soft_margin_against_torch(weighted, reduction):
    x = (RNG.standard_normal((3, 5)) * 3).astype(np.float32)
    y = RNG.integers(0, 2, (3, 5)).astype(np.float32)
    w = RNG.uniform(0.5, 2, 5).astype(np.float32)
    want = tnn.MultiLabelSoftMarginLoss(torch.from_numpy(w) if weighted else None,
                                        reduction=reduction)(torch.from_numpy(x), torch.from_numpy(y))
    close(nn.MultiLabelSoftMarginLoss(Tensor(w) if weighted else None, reduction)(Tensor(x), Tensor(y)), want)
