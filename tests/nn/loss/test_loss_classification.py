"""nn.CrossEntropyLoss / nn.NLLLoss / ops.cross_entropy / ops.nll_loss /
ops.binary_cross_entropy_with_logits, nn.HuberLoss and nn.MarginRankingLoss against PyTorch CPU (MindSpore
2.10's CrossEntropyLoss and NLLLoss agree with PyTorch's to float32 rounding, weights, ignore_index and
label smoothing included)."""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(14)
X = RNG.standard_normal((4, 5, 3)).astype(np.float32)
T = np.array([[0, 1, 4], [2, -100, 3], [1, 1, 1], [4, 0, -100]], np.int64)
W = RNG.uniform(0.5, 2, 5).astype(np.float32)
P = RNG.uniform(0, 1, (4, 5, 3)).astype(np.float32)
P /= P.sum(1, keepdims=True)


def close(got, want):
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
def test_cross_entropy_class_indices_with_weight_and_ignore_index(reduction, label_smoothing):
    loss = nn.CrossEntropyLoss(Tensor(W), -100, reduction, label_smoothing)
    want = tnn.CrossEntropyLoss(torch.from_numpy(W), ignore_index=-100, reduction=reduction,
                                label_smoothing=label_smoothing)(torch.from_numpy(X), torch.from_numpy(T))
    close(loss(Tensor(X), Tensor(T)), want)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.3])
def test_cross_entropy_probability_targets(reduction, label_smoothing):
    loss = nn.CrossEntropyLoss(Tensor(W), reduction=reduction, label_smoothing=label_smoothing)
    want = tnn.CrossEntropyLoss(torch.from_numpy(W), reduction=reduction,
                                label_smoothing=label_smoothing)(torch.from_numpy(X), torch.from_numpy(P))
    close(loss(Tensor(X), Tensor(P)), want)


def test_cross_entropy_2d_int32_targets_no_weight_and_a_valid_ignore_index():
    x = X[:, :, 0]
    t = np.array([0, 3, 3, 1], np.int32)
    want = TF.cross_entropy(torch.from_numpy(x), torch.from_numpy(t.astype(np.int64)), ignore_index=3)
    close(ops.cross_entropy(Tensor(x), Tensor(t), ignore_index=3), want)
    close(nn.CrossEntropyLoss()(Tensor(x), Tensor(t)), TF.cross_entropy(torch.from_numpy(x),
                                                                          torch.from_numpy(t.astype(np.int64))))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_against_torch(reduction):
    log_probs = TF.log_softmax(torch.from_numpy(X), 1)
    want = tnn.NLLLoss(torch.from_numpy(W), ignore_index=-100, reduction=reduction)(log_probs, torch.from_numpy(T))
    close(nn.NLLLoss(Tensor(W), reduction=reduction)(Tensor(log_probs.numpy()), Tensor(T)), want)


def test_classification_loss_errors():
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError, match="weight"):
        nn.NLLLoss(weight=[1.0, 2.0])
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError, match="target must have shape"):
        nn.NLLLoss()(Tensor(X), Tensor(T[:, :2]))
    with pytest.raises(ValueError, match="weight must be a Tensor of shape"):
        ops.cross_entropy(Tensor(X), Tensor(T), Tensor(W[:3]))


def test_cross_entropy_trains_inside_a_compiled_cell():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(5, 5, weight_init="ones", bias_init="zeros")
            self.loss = nn.CrossEntropyLoss(label_smoothing=0.1)

        def construct(self, x, t):
            return self.loss(self.dense(x), t)

    x = X[:, :, 0]
    t = np.array([0, 3, 2, 1], np.int64)
    want = TF.cross_entropy(torch.from_numpy(x) @ torch.ones(5, 5), torch.from_numpy(t), label_smoothing=0.1)
    close(Net()(Tensor(x), Tensor(t)), want)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits_against_torch(reduction):
    x = RNG.standard_normal((3, 4)).astype(np.float32) * 4
    y = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    w = RNG.uniform(0.5, 2, (3, 4)).astype(np.float32)
    pos = RNG.uniform(0.5, 3, (4,)).astype(np.float32)
    want = TF.binary_cross_entropy_with_logits(torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(w),
                                               pos_weight=torch.from_numpy(pos), reduction=reduction)
    close(ops.binary_cross_entropy_with_logits(Tensor(x), Tensor(y), Tensor(w), Tensor(pos), reduction), want)


@pytest.mark.parametrize("reduction, delta", [("mean", 1.0), ("sum", 0.5), ("none", 2.0)])
def test_huber_loss_against_torch(reduction, delta):
    x = RNG.standard_normal((3, 4)).astype(np.float32) * 2
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    want = tnn.HuberLoss(reduction=reduction, delta=delta)(torch.from_numpy(x), torch.from_numpy(y))
    close(nn.HuberLoss(reduction, delta)(Tensor(x), Tensor(y)), want)
    with pytest.raises(ValueError, match="delta"):
        nn.HuberLoss(delta=0.0)


@pytest.mark.parametrize("reduction, margin", [("mean", 0.0), ("sum", 0.5), ("none", 1.0)])
def test_margin_ranking_loss_against_torch(reduction, margin):
    a, b = (RNG.standard_normal(6).astype(np.float32) for _ in range(2))
    y = np.sign(RNG.standard_normal(6)).astype(np.float32)
    want = tnn.MarginRankingLoss(margin, reduction=reduction)(*(torch.from_numpy(v) for v in (a, b, y)))
    close(nn.MarginRankingLoss(margin, reduction)(Tensor(a), Tensor(b), Tensor(y)), want)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_against_torch(reduction):
    x = RNG.uniform(0.05, 0.95, (3, 4)).astype(np.float32)
    y = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    w = RNG.uniform(0.5, 2, (3, 4)).astype(np.float32)
    want = TF.binary_cross_entropy(torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(w), reduction=reduction)
    close(ops.binary_cross_entropy(Tensor(x), Tensor(y), Tensor(w), reduction), want)


def test_binary_cross_entropy_clamps_log_at_1e_12():
    # MindSpore 2.10 gives 27.631021 = -log(1e-12) for a certain miss (PyTorch clamps at 100 instead)
    x = np.array([0.0, 1.0], np.float32)
    y = np.array([1.0, 0.0], np.float32)
    got = ops.binary_cross_entropy(Tensor(x), Tensor(y), reduction="none").asnumpy()
    np.testing.assert_allclose(got, [-np.log(1e-12)] * 2, rtol=1e-6)
