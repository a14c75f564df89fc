"""ROC, auc and ConfusionMatrixMetric against numpy references written from their definitions, and the
seeds' docstring examples."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import Tensor, nn

RNG = np.random.default_rng(29)


def roc_reference(scores, target, positive):
    """Sweep every distinct score as a threshold (predict positive when score >= threshold),
    starting above the highest score."""
    thresholds = np.r_[scores.max() + 1, np.sort(np.unique(scores))[::-1]]
    pos = target == positive
    tpr = np.array([np.sum((scores >= th) & pos) for th in thresholds]) / pos.sum()
    fpr = np.array([np.sum((scores >= th) & ~pos) for th in thresholds]) / (~pos).sum()
    return fpr, tpr, thresholds


def check_curve(actual, expected):
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-12)


def test_binary_roc_matches_threshold_sweep():
    scores = np.round(RNG.random(25), 1)  # rounded: many ties
    target = RNG.integers(0, 2, 25)
    metric = nn.ROC()
    metric.update(Tensor(scores), Tensor(target))
    fpr, tpr, thresholds = metric.eval()
    check_curve((fpr, tpr, thresholds), roc_reference(scores, target, 1))
    assert thresholds[0] == scores.max() + 1  # the first threshold is the highest score plus 1
    check_curve(nn.ROC(pos_label=0)(scores, target), roc_reference(scores, target, 0))


def test_multiclass_roc_is_one_vs_rest_per_class_when_samples_equal_classes():
    scores = RNG.random((4, 4))
    target = np.array([2, 0, 3, 1])
    fprs, tprs, thresholds = nn.ROC(class_num=4)(scores, target)
    assert len(fprs) == len(tprs) == len(thresholds) == 4
    for c in range(4):
        check_curve((fprs[c], tprs[c], thresholds[c]), roc_reference(scores[:, c], target, c))


def test_roc_docstring_examples():
    fpr, tpr, thresholds = nn.ROC(pos_label=2)(Tensor(np.array([0.28, 0.55, 0.15, 0.05])),
                                               Tensor(np.array([0, 1, 2, 3])))
    check_curve((fpr, tpr, thresholds), ([0, 1 / 3, 2 / 3, 2 / 3, 1], [0, 0, 0, 1, 1], [1.55, 0.55, 0.28, 0.15, 0.05]))
    x = np.array([[0.28, 0.55, 0.15, 0.05], [0.10, 0.20, 0.05, 0.05], [0.20, 0.05, 0.15, 0.05],
                  [0.05, 0.05, 0.05, 0.75]])
    fpr, tpr, thresholds = nn.ROC(class_num=4)(Tensor(x), Tensor(np.array([0, 1, 2, 3])))
    check_curve(fpr, [[0, 0, 1 / 3, 2 / 3, 1], [0, 1 / 3, 1 / 3, 1], [0, 1 / 3, 1], [0, 0, 1]])
    check_curve(tpr, [[0, 1, 1, 1, 1], [0, 0, 1, 1], [0, 1, 1], [0, 1, 1]])
    check_curve(thresholds, [[1.28, 0.28, 0.2, 0.1, 0.05], [1.55, 0.55, 0.2, 0.05], [1.15, 0.15, 0.05],
                             [1.75, 0.75, 0.05]])


def test_roc_errors():
    with pytest.raises(TypeError, match="class_num"):
        nn.ROC(class_num=2.0)
    with pytest.raises(RuntimeError, match="update"):
        nn.ROC().eval()
    with pytest.raises(ValueError, match="class_num"):
        nn.ROC(class_num=3).update(RNG.random(4), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="pos_label"):
        nn.ROC(class_num=2, pos_label=1).update(RNG.random((4, 2)), np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="negative"):
        nn.ROC()(RNG.random(3), np.ones(3))
    with pytest.raises(ValueError, match="dimension"):
        nn.ROC()(RNG.random((3, 2, 2)), np.ones(3))


def test_auc():
    x = np.sort(RNG.random(12))
    y = RNG.random(12)
    expected = sum((x[i + 1] - x[i]) * (y[i + 1] + y[i]) / 2 for i in range(11))
    assert nn.auc(x, y) == pytest.approx(expected)
    assert nn.auc(x[::-1], y[::-1]) == pytest.approx(expected)  # decreasing x: the same area
    order = RNG.permutation(12)
    assert nn.auc(x[order], y[order], reorder=True) == pytest.approx(expected)
    assert nn.auc(x.reshape(-1, 1), y) == pytest.approx(expected)
    # the docstring example: the ROC of a 3x3 score map, area 0.5357142857142857
    fpr, tpr, _ = nn.ROC(pos_label=2)(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]),
                                      np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]))
    assert nn.auc(fpr, tpr) == pytest.approx(0.5357142857142857)
    with pytest.raises(TypeError, match="np.ndarray"):
        nn.auc([0, 1], [0, 1])
    with pytest.raises(ValueError, match="increasing or decreasing"):
        nn.auc(np.array([0.0, 1.0, 0.5]), np.array([0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="2 points"):
        nn.auc(np.array([0.5]), np.array([1.0]))
    with pytest.raises(ValueError, match="same number"):
        nn.auc(np.array([0.0, 1.0]), np.array([0.0, 1.0, 1.0]))


# -- ConfusionMatrixMetric ----------------------------------------------------------------------------

PRED = (RNG.random((3, 2, 5, 5)) > 0.5).astype(np.float32)
TRUE = (RNG.random((3, 2, 5, 5)) > 0.5).astype(np.float32)


def cell_counts(pred, true):
    """[tp, fp, tn, fn] of every (sample, channel), by counting."""
    p, t = pred.reshape(*pred.shape[:2], -1) > 0.5, true.reshape(*true.shape[:2], -1) > 0.5
    return np.stack([(p & t).sum(-1), (p & ~t).sum(-1), (~p & ~t).sum(-1), (~p & t).sum(-1)], -1).astype(float)


FORMULAS = {
    'sensitivity': lambda tp, fp, tn, fn: tp / (tp + fn),
    'specificity': lambda tp, fp, tn, fn: tn / (tn + fp),
    'precision': lambda tp, fp, tn, fn: tp / (tp + fp),
    'negative predictive value': lambda tp, fp, tn, fn: tn / (tn + fn),
    'miss rate': lambda tp, fp, tn, fn: fn / (fn + tp),
    'fall out': lambda tp, fp, tn, fn: fp / (fp + tn),
    'false discovery rate': lambda tp, fp, tn, fn: fp / (fp + tp),
    'false omission rate': lambda tp, fp, tn, fn: fn / (fn + tn),
    'threat score': lambda tp, fp, tn, fn: tp / (tp + fn + fp),
    'accuracy': lambda tp, fp, tn, fn: (tp + tn) / (tp + fp + tn + fn),
    'balanced accuracy': lambda tp, fp, tn, fn: (tp / (tp + fn) + tn / (tn + fp)) / 2,
    'f1 score': lambda tp, fp, tn, fn: 2 * tp / (2 * tp + fn + fp),
    'matthews correlation coefficient': lambda tp, fp, tn, fn: (tp * tn - fp * fn) / np.sqrt(
        (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)),
    'fowlkes mallows index': lambda tp, fp, tn, fn: np.sqrt(tp / (tp + fp) * tp / (tp + fn)),
    'informedness': lambda tp, fp, tn, fn: tp / (tp + fn) + tn / (tn + fp) - 1,
    'markedness': lambda tp, fp, tn, fn: tp / (tp + fp) + tn / (tn + fn) - 1,
    'prevalence threshold': lambda tp, fp, tn, fn: (np.sqrt(tp / (tp + fn) * (1 - tn / (tn + fp))) + tn / (tn + fp) - 1)
    / (tp / (tp + fn) + tn / (tn + fp) - 1),
}


@pytest.mark.parametrize("name", list(FORMULAS))
def test_confusion_matrix_metric_from_summed_counts(name):
    totals = cell_counts(PRED, TRUE).reshape(-1, 4).sum(axis=0)
    metric = nn.ConfusionMatrixMetric(metric_name=name)
    metric.update(Tensor(PRED[:2]), Tensor(TRUE[:2]))
    metric.update(PRED[2:], TRUE[2:])
    np.testing.assert_allclose(metric.eval(), [FORMULAS[name](*totals)], rtol=1e-12)


@pytest.mark.parametrize("name", ["sensitivity", "f1 score", "markedness"])
def test_confusion_matrix_metric_averaged_per_sample(name):
    values = FORMULAS[name](*np.moveaxis(cell_counts(PRED, TRUE), -1, 0))  # (batch, channel)
    metric = nn.ConfusionMatrixMetric(metric_name=name, calculation_method=True, decrease='mean')
    metric.update(PRED, TRUE)
    assert metric.eval() == pytest.approx(values.mean(axis=1).mean())
    # skip_channel=False drops channel 0 (the background)
    metric = nn.ConfusionMatrixMetric(skip_channel=False, metric_name=name, calculation_method=True)
    metric.update(PRED, TRUE)
    assert metric.eval() == pytest.approx(values[:, 1].mean())


def test_confusion_matrix_metric_docstring_and_errors():
    metric = nn.ConfusionMatrixMetric(skip_channel=True, metric_name="tpr", calculation_method=False, decrease="mean")
    metric.clear()
    metric.update(Tensor(np.array([[[0], [1]], [[1], [0]]])), Tensor(np.array([[[0], [1]], [[0], [1]]])))
    np.testing.assert_allclose(metric.eval(), [0.5])
    with pytest.raises(NotImplementedError):
        nn.ConfusionMatrixMetric(metric_name='auc')
    with pytest.raises(ValueError, match="decrease"):
        nn.ConfusionMatrixMetric(decrease='max')
    with pytest.raises(TypeError, match="skip_channel"):
        nn.ConfusionMatrixMetric(skip_channel=1)
    with pytest.raises(ValueError, match="binarized"):
        nn.ConfusionMatrixMetric().update(PRED, TRUE * 2)
    with pytest.raises(ValueError, match="2 dimensions"):
        nn.ConfusionMatrixMetric().update(PRED.reshape(-1), TRUE.reshape(-1))
    with pytest.raises(RuntimeError, match="samples is 0"):
        nn.ConfusionMatrixMetric().eval()
