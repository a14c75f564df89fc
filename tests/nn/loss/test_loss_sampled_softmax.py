"""SampledSoftmaxLoss: the deterministic part (given sampled_values) against a numpy implementation of
its formula, accidental-hit removal, and the uniform candidate sampling it draws with."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn as ms
from aotnn import Tensor, nn, ops
from .loss_reference import close, numeric_gradient

RNG = np.random.default_rng(44)
CLASSES, DIM = 9, 6
WEIGHTS = RNG.standard_normal((CLASSES, DIM)).astype(np.float32)
BIASES = RNG.standard_normal(CLASSES).astype(np.float32)
INPUTS = RNG.standard_normal((4, DIM)).astype(np.float32)
LABELS1 = np.array([[0], [3], [5], [3]], np.int32)
LABELS2 = np.array([[0, 1], [3, 8], [5, 2], [7, 3]], np.int64)


def sampled_reference(labels, sampled, true_expected, sampled_expected, remove_hits=True, reduction='none',
                      inputs=INPUTS):
    """Cross entropy over [true classes, sampled classes] with log expected counts subtracted, targets
    1/num_true on the true classes, and (optionally) sampled classes equal to a true one dropped."""
    x = inputs.astype(np.float64)
    w, b = WEIGHTS.astype(np.float64), BIASES.astype(np.float64)
    true_logits = np.einsum('nd,ntd->nt', x, w[labels]) + b[labels] - np.log(true_expected)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(sampled_expected)
    if remove_hits:
        hits = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = np.where(hits, -np.inf, sampled_logits)
    logits = np.concatenate([true_logits, sampled_logits], axis=1)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    softmax = e / e.sum(axis=1, keepdims=True)
    targets = np.concatenate([np.full(true_logits.shape, 1 / labels.shape[1]), np.zeros(sampled_logits.shape)], 1)
    loss = -(targets * np.log(softmax + 1e-20)).sum(axis=1)
    return {'none': loss, 'mean': loss.mean(), 'sum': loss.sum()}[reduction]


def fixed(sampled, num_true, batch=4):
    s = np.asarray(sampled, np.int32)
    true_expected = RNG.uniform(0.2, 0.9, (batch, num_true)).astype(np.float32)
    sampled_expected = RNG.uniform(0.2, 0.9, s.shape).astype(np.float32)
    return s, true_expected, sampled_expected


def run(loss, labels):
    return loss(Tensor(WEIGHTS), Tensor(BIASES), Tensor(labels), Tensor(INPUTS))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_given_samples_match_formula(reduction):
    sampled, true_exp, samp_exp = fixed([2, 4, 6, 7], 1)  # no accidental hit
    loss = nn.SampledSoftmaxLoss(4, CLASSES, sampled_values=[Tensor(sampled), Tensor(true_exp), Tensor(samp_exp)],
                                 reduction=reduction)
    close(run(loss, LABELS1), sampled_reference(LABELS1, sampled, true_exp, samp_exp, reduction=reduction),
          rtol=2e-5, atol=1e-5)


def test_two_true_classes_per_example():
    sampled, true_exp, samp_exp = fixed([4, 6], 2)
    loss = nn.SampledSoftmaxLoss(2, CLASSES, num_true=2, sampled_values=(Tensor(sampled), Tensor(true_exp),
                                                                         Tensor(samp_exp)))
    close(run(loss, LABELS2), sampled_reference(LABELS2, sampled, true_exp, samp_exp), rtol=2e-5, atol=1e-5)


def test_accidental_hits_are_removed_only_when_asked():
    sampled, true_exp, samp_exp = fixed([3, 1, 6, 5], 1)  # 3 and 5 are true classes of some rows
    values = (Tensor(sampled), Tensor(true_exp), Tensor(samp_exp))
    removed = run(nn.SampledSoftmaxLoss(4, CLASSES, sampled_values=values), LABELS1)
    kept = run(nn.SampledSoftmaxLoss(4, CLASSES, sampled_values=values, remove_accidental_hits=False), LABELS1)
    close(removed, sampled_reference(LABELS1, sampled, true_exp, samp_exp, remove_hits=True), rtol=2e-5, atol=1e-5)
    close(kept, sampled_reference(LABELS1, sampled, true_exp, samp_exp, remove_hits=False), rtol=2e-5, atol=1e-5)
    assert not np.allclose(removed.asnumpy(), kept.asnumpy())


def test_vanished_probability_costs_log_1e20_as_mindspore():
    # a true logit far below the sampled ones: softmax underflows, the loss is -log(1e-20) = 46.0517
    biases = BIASES.copy()
    biases[0] = -1e4
    loss = nn.SampledSoftmaxLoss(2, CLASSES, sampled_values=fixed([1, 2], 1))
    out = loss(Tensor(WEIGHTS), Tensor(biases), Tensor(LABELS1), Tensor(INPUTS)).asnumpy()
    np.testing.assert_allclose(out[0], -np.log(1e-20), rtol=1e-6)


def test_random_sampling_with_every_other_class_is_deterministic():
    # true classes {0, 3, 5}: removing accidental hits leaves exactly the 6 other classes to sample,
    # so the softmax runs over a known set whatever order they come in
    ms.set_seed(7)
    loss = nn.SampledSoftmaxLoss(6, CLASSES, reduction='mean')
    others = np.array([1, 2, 4, 6, 7, 8], np.int32)
    p = 6 / CLASSES
    expected = sampled_reference(LABELS1, others, np.full((4, 1), p), np.full(6, p), reduction='mean')
    for _ in range(2):
        close(run(loss, LABELS1), expected, rtol=2e-5, atol=1e-5)


def test_random_sampling_changes_between_calls():
    ms.set_seed(3)
    loss = nn.SampledSoftmaxLoss(3, CLASSES, remove_accidental_hits=False)
    outs = {tuple(np.round(run(loss, LABELS1).asnumpy(), 5)) for _ in range(6)}
    assert len(outs) > 1
    assert all(np.isfinite(o).all() for o in outs)


def test_uniform_candidate_sampler():
    ms.set_seed(11)
    true = Tensor(np.array([[1], [4], [4]], np.int32))
    draws = []
    for _ in range(5):
        sampled, true_exp, samp_exp = ops.uniform_candidate_sampler(true, 1, 5, True, 8, remove_accidental_hits=True)
        values = sampled.asnumpy()
        assert values.dtype == np.int32 and values.shape == (5,)
        assert len(set(values)) == 5 and values.min() >= 0 and values.max() < 8
        assert not {1, 4} & set(values.tolist())
        draws.append(tuple(values))
        close(true_exp, np.full((3, 1), 5 / 8, np.float32))
        close(samp_exp, np.full((5,), 5 / 8, np.float32))
    assert len(set(draws)) > 1
    sampled, _, _ = ops.UniformCandidateSampler(1, 6, False, 3)(Tensor(np.array([[0]], np.int64)))
    assert sampled.dtype == ms.int64 and sampled.asnumpy().max() < 3


def test_uniform_candidate_sampler_errors():
    true = Tensor(np.array([[1], [4]], np.int32))
    with pytest.raises(ValueError, match="range_max"):
        ops.uniform_candidate_sampler(true, 1, 9, True, 8)
    with pytest.raises(TypeError, match="true_classes"):
        ops.uniform_candidate_sampler(Tensor(np.ones((2, 1), np.float32)), 1, 2, True, 8)
    with pytest.raises(ValueError, match="shape"):
        ops.uniform_candidate_sampler(true, 2, 2, True, 8)
    with pytest.raises(TypeError, match="unique"):
        ops.uniform_candidate_sampler(true, 1, 2, 1, 8)


def test_sampled_softmax_argument_errors():
    with pytest.raises(ValueError, match="num_true"):
        nn.SampledSoftmaxLoss(2, 5, num_true=0)
    with pytest.raises(ValueError, match="seed"):
        nn.SampledSoftmaxLoss(2, 5, seed=-1)
    with pytest.raises(ValueError, match="num_sampled"):
        nn.SampledSoftmaxLoss(6, 5)
    with pytest.raises(ValueError, match="num_true"):
        nn.SampledSoftmaxLoss(2, 5, num_true=6)
    with pytest.raises(TypeError, match="sampled_values"):
        nn.SampledSoftmaxLoss(2, 5, sampled_values=Tensor(np.array([1, 2], np.int32)))
    with pytest.raises(ValueError, match="sampled_values"):
        nn.SampledSoftmaxLoss(2, 5, sampled_values=[1, 2])
    with pytest.raises(TypeError, match="labels"):
        run(nn.SampledSoftmaxLoss(2, CLASSES, sampled_values=fixed([1, 2], 1)), LABELS1.astype(np.float32))


def test_gradient_with_given_samples_matches_finite_differences():
    sampled, true_exp, samp_exp = fixed([3, 1, 6, 5], 1)
    loss = nn.SampledSoftmaxLoss(4, CLASSES, sampled_values=(Tensor(sampled), Tensor(true_exp), Tensor(samp_exp)),
                                 reduction='sum')
    grad = ops.grad(loss, 3)(Tensor(WEIGHTS), Tensor(BIASES), Tensor(LABELS1), Tensor(INPUTS)).asnumpy()
    numeric = numeric_gradient(
        lambda inputs: sampled_reference(LABELS1, sampled, true_exp, samp_exp, reduction='sum', inputs=inputs), INPUTS)
    np.testing.assert_allclose(grad, numeric, rtol=2e-3, atol=1e-4)


def test_random_sampling_inside_a_training_step():
    # the sampler runs inside the differentiated graph: fresh samples each step, the loss still trains
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Dense(3, DIM)
            self.weights = ms.Parameter(Tensor(WEIGHTS), name='weights')
            self.biases = ms.Parameter(Tensor(BIASES), name='biases')
            self.loss = nn.SampledSoftmaxLoss(4, CLASSES, reduction='mean')

        def construct(self, x, labels):
            return self.loss(self.weights, self.biases, labels, self.encoder(x))

    ms.set_seed(5)
    net = Net()
    step = nn.TrainOneStepCell(net, nn.SGD(net.trainable_params(), learning_rate=0.5))
    x = Tensor(RNG.standard_normal((4, 3)).astype(np.float32))
    losses = [float(step(x, Tensor(LABELS1))) for _ in range(12)]
    assert all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < np.mean(losses[:3])
    grad = ops.grad(nn.SampledSoftmaxLoss(3, CLASSES, reduction='sum'), 3)(
        Tensor(WEIGHTS), Tensor(BIASES), Tensor(LABELS1), Tensor(INPUTS))
    assert grad.shape == INPUTS.shape and np.isfinite(grad.asnumpy()).all()
