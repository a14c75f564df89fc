"""MAE, MSE, Loss, Perplexity, CosineSimilarity, Dice and BleuScore against numpy references written from
their formulas, and the seeds' docstring examples."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(17)


def test_mae_mse_divide_by_rows_not_elements():
    pred, true = RNG.random((6, 3)), RNG.random((6, 3))
    for metric, error in ((nn.MAE(), np.abs(true - pred)), (nn.MSE(), (true - pred) ** 2)):
        metric.clear()
        metric.update(Tensor(pred[:4]), Tensor(true[:4]))
        metric.update(pred[4:], true[4:].tolist())
        assert metric.eval() == pytest.approx(error.sum() / 6)


def test_mae_mse_docstring_examples_and_errors():
    x = Tensor(np.array([0.1, 0.2, 0.6, 0.9]), ms.float32)
    mae = nn.MAE()
    mae.clear()
    mae.update(x, Tensor(np.array([0.1, 0.25, 0.7, 0.9]), ms.float32))
    assert mae.eval() == pytest.approx(0.0375, rel=1e-6)
    mse = nn.MSE()
    mse.update(x, Tensor(np.array([0.1, 0.25, 0.5, 0.9]), ms.float32))
    assert mse.eval() == pytest.approx(0.003125, rel=1e-5)
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.MAE().eval()
    with pytest.raises(ValueError, match="2 inputs"):
        nn.MSE().update(x)


def test_loss_averages_updates():
    metric = nn.Loss()
    metric.clear()
    metric.update(Tensor(np.array(0.2), ms.float32))
    assert metric.eval() == pytest.approx(0.20000000298023224, rel=1e-12)  # the seed's printed value
    metric.update(np.array([0.5, 1.5]))  # a 1-D loss counts as its mean
    assert metric.eval() == pytest.approx((0.2 + 1.0) / 2, rel=1e-6)
    with pytest.raises(ValueError, match="dimension"):
        metric.update(np.ones((2, 2)))
    with pytest.raises(ValueError, match="1 input"):
        metric.update(1.0, 2.0)
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.Loss().eval()


def test_perplexity():
    probs = RNG.random((10, 5))
    probs /= probs.sum(axis=1, keepdims=True)
    labels = RNG.integers(0, 5, 10)
    picked = probs[np.arange(10), labels]
    assert nn.Perplexity()(probs, labels) == pytest.approx(math.exp(-np.log(picked).mean()))
    kept = labels != 2
    assert nn.Perplexity(ignore_label=2)(probs, labels) == pytest.approx(math.exp(-np.log(picked[kept]).mean()))
    doc = nn.Perplexity(ignore_label=None)(Tensor(np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])),
                                           Tensor(np.array([1, 0, 1])))
    assert doc == pytest.approx(2.231443166940565)
    # probabilities are clamped at 1e-10 before the logarithm
    assert nn.Perplexity()(np.array([[0.0, 1.0]]), np.array([0])) == pytest.approx(1e10, rel=1e-6)
    with pytest.raises(TypeError, match="ignore_label"):
        nn.Perplexity(ignore_label=1.0)
    with pytest.raises(RuntimeError, match="shape"):
        nn.Perplexity().update(probs, labels[:5])
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.Perplexity().eval()


def test_cosine_similarity():
    data = RNG.standard_normal((4, 6))
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, 0)
    np.testing.assert_allclose(nn.CosineSimilarity()(data), cos)
    np.testing.assert_allclose(nn.CosineSimilarity(reduction='mean')(data), cos.mean(axis=1))
    dot = data @ data.T
    np.testing.assert_allclose(nn.CosineSimilarity('dot', 'sum', zero_diagonal=False)(Tensor(data)), dot.sum(axis=1))
    doc = nn.CosineSimilarity()(np.array([[1, 3, 4, 7], [2, 4, 2, 5], [3, 1, 5, 8]]))
    np.testing.assert_allclose(doc, [[0, 0.94025615, 0.95162452], [0.94025615, 0, 0.86146098],
                                     [0.95162452, 0.86146098, 0]], rtol=1e-7)
    metric = nn.CosineSimilarity(reduction='sum')
    metric.update(data)
    np.testing.assert_allclose(metric.eval(), metric.eval())  # eval does not change the state
    with pytest.raises(ValueError, match="similarity"):
        nn.CosineSimilarity(similarity='l2')
    with pytest.raises(ValueError, match="reduction"):
        nn.CosineSimilarity(reduction='max')
    with pytest.raises(TypeError, match="zero_diagonal"):
        nn.CosineSimilarity(zero_diagonal=1)
    with pytest.raises(RuntimeError, match="update"):
        nn.CosineSimilarity().eval()


def test_dice_metric_divides_batch_coefficients_by_samples():
    x = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
    y = np.array([[0, 1], [1, 0], [0, 1]])
    metric = nn.Dice(smooth=1e-5)
    metric.clear()
    metric.update(Tensor(x), Tensor(y))
    assert metric.eval() == pytest.approx(0.20467791371802546)  # the docstring's value
    a, b = RNG.random((2, 4, 4)), (RNG.random((2, 4, 4)) > 0.5).astype(float)
    metric.update(a, b)
    coefficient = lambda p, t: 2 * (p * t).sum() / ((p * p).sum() + (t * t).sum() + 1e-5)  # noqa: E731
    assert metric.eval() == pytest.approx((coefficient(x, y) + coefficient(a, b)) / 5)
    with pytest.raises(TypeError, match="smooth"):
        nn.Dice(smooth=1)
    with pytest.raises(ValueError, match="smooth"):
        nn.Dice(smooth=0.0)
    with pytest.raises(ValueError, match="shape"):
        metric.update(a, b[0])
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.Dice().eval()


def bleu_reference(candidates, references, max_n=4, smooth=False):
    """Corpus BLEU written out: clipped n-gram counts, geometric mean of precisions, brevity penalty."""
    matches, totals = np.zeros(max_n), np.zeros(max_n)
    c = r = 0
    for cand, refs in zip(candidates, references):
        c += len(cand)
        r += min((abs(len(ref) - len(cand)), len(ref)) for ref in refs)[1]
        for n in range(1, max_n + 1):
            grams = Counter(tuple(cand[i:i + n]) for i in range(len(cand) - n + 1))
            best = Counter()
            for ref in refs:
                for gram, count in Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1)).items():
                    best[gram] = max(best[gram], count)
            matches[n - 1] += sum(min(count, best[gram]) for gram, count in grams.items())
            totals[n - 1] += sum(grams.values())
    if matches.min() == 0:
        return 0.0
    precision = (matches + 1) / (totals + 1) if smooth else matches / totals
    penalty = 1.0 if c > r else math.exp(1 - r / c)
    return penalty * math.exp(np.log(precision).mean())


def test_bleu_score():
    candidates = [['i', 'have', 'a', 'pen', 'on', 'my', 'desk']]
    references = [[['i', 'have', 'a', 'pen', 'in', 'my', 'desk'], ['there', 'is', 'a', 'pen', 'on', 'the', 'desk']]]
    metric = nn.BleuScore()
    metric.clear()
    metric.update(candidates, references)
    assert metric.eval() == pytest.approx(0.5946035575013605)  # the docstring's value
    more_c = candidates + [['the', 'cat', 'sat', 'on', 'the', 'mat']]
    more_r = references + [[['the', 'cat', 'is', 'on', 'the', 'mat'], ['a', 'cat', 'sat', 'on', 'a', 'mat', 'today']]]
    for n, smooth in ((2, False), (3, True), (4, False)):
        assert nn.BleuScore(n, smooth)(more_c, more_r) == pytest.approx(bleu_reference(more_c, more_r, n, smooth))
    # a short candidate pays the brevity penalty
    short = ([['the', 'cat', 'sat']], [[['the', 'cat', 'sat', 'on', 'the', 'mat']]])
    assert nn.BleuScore(2)(*short) == pytest.approx(bleu_reference(*short, 2))
    assert nn.BleuScore()([['a', 'b']], [[['c', 'd']]]) == 0.0
    with pytest.raises(ValueError, match="n_gram"):
        nn.BleuScore(n_gram=5)
    with pytest.raises(TypeError, match="smooth"):
        nn.BleuScore(smooth=1)
    with pytest.raises(ValueError, match="equal in length"):
        nn.BleuScore().update(candidates, references * 2)
    with pytest.raises(RuntimeError, match="update"):
        nn.BleuScore().eval()
