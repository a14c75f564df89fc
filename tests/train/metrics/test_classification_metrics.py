"""Accuracy, Precision, Recall, Fbeta/F1, top-k accuracy and ConfusionMatrix against numpy references
written from the documented formulas (explicit counting), and the seeds' docstring examples."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(3)
SCORES = RNG.random((30, 4))
LABELS = RNG.integers(0, 4, 30)
SCORES3 = RNG.random((5, 3, 6))            # (N, C, L): classification over positions
LABELS3 = RNG.integers(0, 3, (5, 6))
ML_PRED = (RNG.random((12, 5)) > 0.5).astype(np.float32)
ML_TRUE = (RNG.random((12, 5)) > 0.5).astype(np.float32)
DOC_X = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
DOC_Y = np.array([1, 0, 1])


def counts(pred, true, classes):
    """Per-class true positives, predicted positives and actual positives, by counting."""
    tp = np.array([np.sum((pred == c) & (true == c)) for c in range(classes)], float)
    predicted = np.array([np.sum(pred == c) for c in range(classes)], float)
    actual = np.array([np.sum(true == c) for c in range(classes)], float)
    return tp, predicted, actual


def in_batches(metric, x, y, size=8, **eval_kwargs):
    metric.clear()
    for start in range(0, len(x), size):
        metric.update(Tensor(x[start:start + size]), Tensor(y[start:start + size]))
    return metric.eval(**eval_kwargs)


def test_accuracy_classification():
    assert in_batches(nn.Accuracy(), SCORES, LABELS) == pytest.approx(np.mean(SCORES.argmax(1) == LABELS))
    assert in_batches(nn.Accuracy(), SCORES, np.eye(4)[LABELS]) == pytest.approx(np.mean(SCORES.argmax(1) == LABELS))
    assert in_batches(nn.Accuracy(), SCORES3, LABELS3) == pytest.approx(np.mean(SCORES3.argmax(1) == LABELS3))
    metric = nn.Accuracy('classification')
    metric.clear()
    metric.update(Tensor(DOC_X, ms.float32), Tensor(DOC_Y, ms.float32))
    assert metric.eval() == pytest.approx(2 / 3)


def test_accuracy_multilabel_counts_rows_that_match_entirely():
    expected = np.mean((ML_PRED == ML_TRUE).all(axis=1))
    assert in_batches(nn.Accuracy('multilabel'), ML_PRED, ML_TRUE) == pytest.approx(expected)


def test_accuracy_errors():
    metric = nn.Accuracy()
    with pytest.raises(RuntimeError, match="samples is 0"):
        metric.eval()
    with pytest.raises(ValueError, match="2 inputs"):
        metric.update(SCORES)
    with pytest.raises(ValueError, match="dimension"):
        metric.update(SCORES, LABELS.reshape(-1, 1, 1))
    metric.update(SCORES, LABELS)
    with pytest.raises(ValueError, match="class number"):
        metric.update(SCORES[:, :3], LABELS)
    with pytest.raises(ValueError, match="0 or 1"):
        nn.Accuracy('multilabel').update(SCORES, ML_TRUE[:, :4].repeat(3, 0)[:30])


def test_precision_recall_classification_per_class():
    tp, predicted, actual = counts(SCORES.argmax(1), LABELS, 4)
    np.testing.assert_allclose(in_batches(nn.Precision(), SCORES, LABELS), tp / predicted)
    np.testing.assert_allclose(in_batches(nn.Recall(), SCORES, LABELS), tp / actual)
    assert in_batches(nn.Precision(), SCORES, LABELS, average=True) == pytest.approx(np.mean(tp / predicted))
    assert in_batches(nn.Recall(), SCORES, np.eye(4)[LABELS], average=True) == pytest.approx(np.mean(tp / actual))
    tp3, predicted3, _ = counts(SCORES3.argmax(1), LABELS3, 3)
    np.testing.assert_allclose(in_batches(nn.Precision(), SCORES3, LABELS3), tp3 / predicted3)


def test_precision_recall_docstring_examples():
    np.testing.assert_allclose(in_batches(nn.Precision('classification'), DOC_X, DOC_Y), [0.5, 1.0])
    np.testing.assert_allclose(in_batches(nn.Recall('classification'), DOC_X, DOC_Y), [1.0, 0.5])


def test_precision_recall_multilabel_give_one_value_per_sample():
    tp = (ML_PRED * ML_TRUE).sum(axis=1)
    with np.errstate(invalid='ignore', divide='ignore'):
        precision = np.nan_to_num(tp / ML_PRED.sum(axis=1))
        recall = np.nan_to_num(tp / ML_TRUE.sum(axis=1))
    result = in_batches(nn.Precision('multilabel'), ML_PRED, ML_TRUE, size=5)
    assert result.shape == (12,)
    np.testing.assert_allclose(result, precision, atol=1e-12)
    np.testing.assert_allclose(in_batches(nn.Recall('multilabel'), ML_PRED, ML_TRUE), recall, atol=1e-12)
    assert in_batches(nn.Recall('multilabel'), ML_PRED, ML_TRUE, average=True) == pytest.approx(recall.mean())


def test_precision_recall_errors():
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.Precision().eval()
    metric = nn.Recall()
    metric.update(SCORES, LABELS)
    with pytest.raises(TypeError, match="average"):
        metric.eval(average=1)
    with pytest.raises(ValueError, match="classes"):
        nn.Precision().update(SCORES[:, :2], np.array([0, 3] * 15))


@pytest.mark.parametrize("beta", [0.5, 1, 2.0])
def test_fbeta_matches_formula(beta):
    tp, predicted, actual = counts(SCORES.argmax(1), LABELS, 4)
    fn, fp = actual - tp, predicted - tp
    expected = (1 + beta ** 2) * tp / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp)
    np.testing.assert_allclose(in_batches(nn.Fbeta(beta), SCORES, LABELS), expected)
    assert in_batches(nn.Fbeta(beta), SCORES, LABELS, average=True) == pytest.approx(expected.mean())


def test_f1_and_fbeta_docstring_examples_and_errors():
    np.testing.assert_allclose(in_batches(nn.Fbeta(1), DOC_X, DOC_Y), [2 / 3, 2 / 3])
    np.testing.assert_allclose(in_batches(nn.F1(), DOC_X, DOC_Y), [2 / 3, 2 / 3])
    tp, predicted, actual = counts(SCORES.argmax(1), LABELS, 4)
    np.testing.assert_allclose(in_batches(nn.F1(), SCORES, np.eye(4)[LABELS]), 2 * tp / (predicted + actual))
    with pytest.raises(ValueError, match="beta"):
        nn.Fbeta(0)
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.F1().eval()
    metric = nn.F1()
    metric.update(DOC_X, DOC_Y)
    with pytest.raises(TypeError, match="average"):
        metric.eval(average="yes")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_top_k_matches_counting(k):
    hits = [LABELS[i] in np.argsort(-SCORES[i], kind='stable')[:k] for i in range(len(LABELS))]
    assert in_batches(nn.TopKCategoricalAccuracy(k), SCORES, LABELS) == pytest.approx(np.mean(hits))


def test_top_k_docstring_examples_ties_and_errors():
    x = np.array([[0.2, 0.5, 0.3, 0.6, 0.2], [0.1, 0.35, 0.5, 0.2, 0.], [0.9, 0.6, 0.2, 0.01, 0.3]], np.float32)
    y = np.array([2, 0, 1], np.float32)
    assert in_batches(nn.TopKCategoricalAccuracy(3), x, y) == pytest.approx(2 / 3)
    assert in_batches(nn.Top1CategoricalAccuracy(), x, y) == 0.0
    assert in_batches(nn.Top5CategoricalAccuracy(), x, y) == 1.0
    assert in_batches(nn.Top1CategoricalAccuracy(), x, np.eye(5)[[3, 2, 0]]) == 1.0
    # equal scores: the earlier class wins
    assert in_batches(nn.Top1CategoricalAccuracy(), np.array([[0.5, 0.5, 0.1]]), np.array([0])) == 1.0
    assert in_batches(nn.Top1CategoricalAccuracy(), np.array([[0.5, 0.5, 0.1]]), np.array([1])) == 0.0
    with pytest.raises(TypeError, match="'k'"):
        nn.TopKCategoricalAccuracy(2.0)
    with pytest.raises(ValueError, match="'k'"):
        nn.TopKCategoricalAccuracy(0)
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.Top5CategoricalAccuracy().eval()


def confusion_reference(pred, true, classes):
    matrix = np.zeros((classes, classes))
    for p, t in zip(pred.reshape(-1), true.reshape(-1)):
        matrix[int(t), int(p)] += 1
    return matrix


def test_confusion_matrix_counts_and_normalisations():
    matrix = confusion_reference(SCORES.argmax(1), LABELS, 4)
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(4), SCORES, LABELS), matrix)
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(4, 'target'), SCORES, LABELS),
                               matrix / matrix.sum(1, keepdims=True))
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(4, 'prediction'), SCORES, LABELS),
                               matrix / matrix.sum(0, keepdims=True))
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(4, 'all'), SCORES, LABELS), matrix / matrix.sum())
    # a class never seen normalises to zeros rather than NaN
    result = in_batches(nn.ConfusionMatrix(3, 'target'), np.array([0, 1, 1]), np.array([0, 1, 0]))
    np.testing.assert_allclose(result, [[0.5, 0.5, 0], [0, 1, 0], [0, 0, 0]])


def test_confusion_matrix_threshold_docstring_and_errors():
    probabilities = RNG.random(20)
    truth = RNG.integers(0, 2, 20)
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(2, threshold=0.3), probabilities, truth),
                               confusion_reference((probabilities >= 0.3).astype(int), truth, 2))
    np.testing.assert_allclose(in_batches(nn.ConfusionMatrix(num_classes=2, normalize='no_norm', threshold=0.5),
                                          np.array([1, 0, 1, 0]), np.array([1, 0, 0, 1])), [[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(TypeError, match="num_classes"):
        nn.ConfusionMatrix(2.0)
    with pytest.raises(ValueError, match="normalize"):
        nn.ConfusionMatrix(2, normalize='rows')
    with pytest.raises(TypeError, match="threshold"):
        nn.ConfusionMatrix(2, threshold=1)
    with pytest.raises(RuntimeError, match="update"):
        nn.ConfusionMatrix(2).eval()
    with pytest.raises(ValueError, match="dimension"):
        nn.ConfusionMatrix(2).update(SCORES3, LABELS)
