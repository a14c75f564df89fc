"""ConfusionMatrix and ConfusionMatrixMetric."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_choice, check_type, rearrange_inputs

__all__ = ['ConfusionMatrix', 'ConfusionMatrixMetric']


class ConfusionMatrix(Metric):
    """Confusion matrix: entry ``[i, j]`` counts samples of true class ``i`` predicted as ``j``.

    Args:
        num_classes (int): number of classes.
        normalize (str): 'no_norm' (counts), 'target' (rows sum to 1), 'prediction' (columns sum
            to 1) or 'all' (everything sums to 1). Default: 'no_norm'.
        threshold (float): binarises float predictions that have ``y``'s shape. Default: 0.5.

    Raises:
        TypeError: ``num_classes`` not an int, ``threshold`` not a float.
        ValueError: unknown ``normalize``.

    Examples:
        >>> x = Tensor(np.array([1, 0, 1, 0]))
        >>> y = Tensor(np.array([1, 0, 0, 1]))
        >>> metric = nn.ConfusionMatrix(num_classes=2, normalize='no_norm', threshold=0.5)
        >>> metric.update(x, y)
        >>> metric.eval()
        [[1. 1.]
         [1. 1.]]
    """

    def __init__(self, num_classes: int, normalize: str = 'no_norm', threshold: float = 0.5):
        super().__init__()
        self.num_classes = check_type(num_classes, 'num_classes', (int,), 'ConfusionMatrix')
        if normalize not in ('target', 'prediction', 'all', 'no_norm'):
            raise ValueError(f"For 'ConfusionMatrix', the argument 'normalize' must be in ['all', 'prediction', "
                             f"'target', 'no_norm'], but got {normalize!r}.")
        self.normalize = normalize
        self.threshold = check_type(threshold, 'threshold', (float,), 'ConfusionMatrix')
        self.clear()

    def clear(self) -> None:
        """Reset the counts."""
        self.confusion_matrix = np.zeros((self.num_classes, self.num_classes))
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)``; scores :math:`(N, C, ...)` are reduced by argmax over axis 1.

        Raises:
            ValueError: not 2 inputs; ``y_pred`` neither of ``y``'s rank nor one more.
        """
        y_pred, y = self._prediction_and_label(inputs, 'ConfusionMatrix')
        if y_pred.ndim not in (y.ndim, y.ndim + 1):
            raise ValueError(f"For 'ConfusionMatrix.update', predicted value (input[0]) and true value (input[1]) "
                             f"should have same dimensions, or the dimension of predicted value equals the dimension "
                             f"of true value add 1, but got {y_pred.ndim} and {y.ndim}.")
        if y_pred.ndim == y.ndim + 1:
            y_pred = np.argmax(y_pred, axis=1)
        elif y_pred.dtype.kind == 'f':
            y_pred = (y_pred >= self.threshold).astype(int)
        pairs = (y.reshape(-1) * self.num_classes + y_pred.reshape(-1)).astype(int)
        counts = np.bincount(pairs, minlength=self.num_classes ** 2)
        self.confusion_matrix += counts[:self.num_classes ** 2].reshape(self.num_classes, self.num_classes)
        self._is_update = True

    def eval(self) -> np.ndarray:
        """The (normalised) matrix; rows or columns of zeros normalise to zeros.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        self._check_updated()
        matrix = self.confusion_matrix.astype(float)
        if self.normalize == 'no_norm':
            return matrix
        total = {'target': matrix.sum(axis=1, keepdims=True), 'prediction': matrix.sum(axis=0, keepdims=True),
                 'all': matrix.sum()}[self.normalize]
        with np.errstate(divide='ignore', invalid='ignore'):
            result = matrix / total
        return np.nan_to_num(result, nan=0.0)


# Names a metric can be given, and the short name it computes.
_METRIC_NAMES = {
    'tpr': ('sensitivity', 'recall', 'hit_rate', 'true_positive_rate', 'tpr'),
    'tnr': ('specificity', 'selectivity', 'true_negative_rate', 'tnr'),
    'ppv': ('precision', 'positive_predictive_value', 'ppv'),
    'npv': ('negative_predictive_value', 'npv'),
    'fnr': ('miss_rate', 'false_negative_rate', 'fnr'),
    'fpr': ('fall_out', 'false_positive_rate', 'fpr'),
    'fdr': ('false_discovery_rate', 'fdr'),
    'for': ('false_omission_rate', 'for'),
    'pt': ('prevalence_threshold', 'pt'),
    'ts': ('threat_score', 'critical_success_index', 'ts', 'csi'),
    'acc': ('accuracy', 'acc'),
    'ba': ('balanced_accuracy', 'ba'),
    'f1': ('f1_score', 'f1'),
    'mcc': ('matthews_correlation_coefficient', 'mcc'),
    'fm': ('fowlkes_mallows_index', 'fm'),
    'bm': ('informedness', 'bookmaker_informedness', 'bm'),
    'mk': ('markedness', 'deltap', 'mk'),
}
_ALIASES = {alias: short for short, aliases in _METRIC_NAMES.items() for alias in aliases}
_DECREASES = ('none', 'mean', 'sum', 'mean_batch', 'sum_batch', 'mean_channel', 'sum_channel')


def _short_name(metric_name: str) -> str:
    short = _ALIASES.get(metric_name.replace(' ', '_').lower())
    if short is None:
        raise NotImplementedError(f"The metric {metric_name!r} is not implemented; known names: {sorted(_ALIASES)}.")
    return short


def _ratio(numerator, denominator):
    """``numerator / denominator``, NaN where the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, float), np.asarray(denominator, float))
    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _confusion_counts(y_pred: np.ndarray, y: np.ndarray, skip_channel: bool) -> np.ndarray:
    """Per (batch, channel) counts ``[tp, fp, tn, fn]`` of binarised ``(N, C, ...)`` inputs: shape (N, C, 4).

    ``skip_channel`` False drops channel 0 (the background) when there are several channels.
    """
    if not skip_channel:
        y = y[:, 1:] if y.shape[1] > 1 else y
        y_pred = y_pred[:, 1:] if y_pred.shape[1] > 1 else y_pred
    if y.shape != y_pred.shape:
        raise ValueError(f"For 'ConfusionMatrixMetric.update', 'y_pred' and 'y' must have one shape, "
                         f"but got {y_pred.shape} and {y.shape}.")
    batch, channels = y_pred.shape[:2]
    y_pred = y_pred.astype(float).reshape(batch, channels, -1)
    y = y.astype(float).reshape(batch, channels, -1)
    tp = ((y_pred + y) == 2).sum(axis=2).astype(float)
    tn = ((y_pred + y) == 0).sum(axis=2).astype(float)
    positives = y.sum(axis=2)
    fn = positives - tp
    fp = (y.shape[-1] - positives) - tn
    return np.stack([tp, fp, tn, fn], axis=-1)


def _metric_from_counts(short: str, counts: np.ndarray) -> np.ndarray:
    """The named metric from ``[..., 4]`` counts (NaN where undefined)."""
    if counts.ndim == 1:
        counts = counts[None]
    tp, fp, tn, fn = (counts[..., i] for i in range(4))
    p, n = tp + fn, fp + tn
    tpr, tnr = _ratio(tp, p), _ratio(tn, n)
    ppv, npv = _ratio(tp, tp + fp), _ratio(tn, tn + fn)
    if short == 'tpr':
        return tpr
    if short == 'tnr':
        return tnr
    if short == 'ppv':
        return ppv
    if short == 'npv':
        return npv
    if short == 'fnr':
        return _ratio(fn, p)
    if short == 'fpr':
        return _ratio(fp, n)
    if short == 'fdr':
        return _ratio(fp, fp + tp)
    if short == 'for':
        return _ratio(fn, fn + tn)
    if short == 'pt':
        return _ratio(np.sqrt(tpr * (1.0 - tnr)) + tnr - 1.0, tpr + tnr - 1.0)
    if short == 'ts':
        return _ratio(tp, tp + fn + fp)
    if short == 'acc':
        return _ratio(tp + tn, p + n)
    if short == 'ba':
        return (tpr + tnr) / 2.0
    if short == 'f1':
        return _ratio(2.0 * tp, 2.0 * tp + fn + fp)
    if short == 'mcc':
        return _ratio(tp * tn - fp * fn, np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    if short == 'fm':
        return np.sqrt(ppv * tpr)
    if short == 'bm':
        return tpr + tnr - 1.0
    return ppv + npv - 1.0  # 'mk'


def _reduce(chart: np.ndarray, decrease: str) -> tuple[np.ndarray, np.ndarray]:
    """Reduce a (batch, channel) chart ignoring NaNs: returns (value, count of values that were not NaN)."""
    valid = ~np.isnan(chart)
    chart = np.where(valid, chart, 0.0)
    valid = valid.astype(float)

    def mean(values, counts, axis):
        total = values.sum(axis=axis)
        count = counts.sum(axis=axis)
        return np.where(count > 0, total / np.maximum(count, 1), 0.0), count

    if decrease == 'mean':
        per_batch, count = mean(chart, valid, 1)
        present = (count > 0).astype(float)
        value, _ = mean(per_batch, present, 0)
        return value, present.sum(axis=0)
    if decrease == 'sum':
        return chart.sum(axis=(0, 1)), valid.sum(axis=(0, 1))
    if decrease == 'mean_batch':
        value, count = mean(chart, valid, 0)
        return value, count
    if decrease == 'sum_batch':
        return chart.sum(axis=0), valid.sum(axis=0)
    if decrease == 'mean_channel':
        value, count = mean(chart, valid, 1)
        return value, count
    if decrease == 'sum_channel':
        return chart.sum(axis=1), valid.sum(axis=1)
    return chart, valid


class ConfusionMatrixMetric(Metric):
    """A metric derived from the confusion matrix of binarised (one-hot) segmentation or
    classification outputs: sensitivity, specificity, precision, F1, MCC and others.

    Args:
        skip_channel (bool): keep channel 0; False drops it (the background). Default: True.
        metric_name (str): 'sensitivity', 'specificity', 'precision', 'negative predictive value',
            'miss rate', 'fall out', 'false discovery rate', 'false omission rate', 'prevalence
            threshold', 'threat score', 'accuracy', 'balanced accuracy', 'f1 score', 'matthews
            correlation coefficient', 'fowlkes mallows index', 'informedness', 'markedness' (or
            their short names). Default: 'sensitivity'.
        calculation_method (bool): True computes the metric per (sample, channel) and averages;
            False sums the counts over everything seen and computes the metric once. Default: False.
        decrease (str): how per-(sample, channel) values are reduced with ``calculation_method``:
            'none', 'mean', 'sum', 'mean_batch', 'sum_batch', 'mean_channel', 'sum_channel'.
            Default: 'mean'.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: unknown ``decrease``.
        NotImplementedError: unknown ``metric_name``.

    Examples:
        >>> metric = nn.ConfusionMatrixMetric(skip_channel=True, metric_name="tpr",
        ...                                   calculation_method=False, decrease="mean")
        >>> x = Tensor(np.array([[[0], [1]], [[1], [0]]]))
        >>> y = Tensor(np.array([[[0], [1]], [[0], [1]]]))
        >>> metric.update(x, y)
        >>> metric.eval()
        [0.5]
    """

    def __init__(self, skip_channel: bool = True, metric_name: str = 'sensitivity', calculation_method: bool = False,
                 decrease: str = 'mean'):
        super().__init__()
        name = 'ConfusionMatrixMetric'
        self.skip_channel = check_type(skip_channel, 'skip_channel', (bool,), name)
        self.calculation_method = check_type(calculation_method, 'calculation_method', (bool,), name)
        self.metric_name = check_type(metric_name, 'metric_name', (str,), name)
        self._short = _short_name(metric_name)
        self.decrease = check_choice(decrease, 'decrease', _DECREASES, name)
        self.clear()

    def clear(self) -> None:
        """Reset the sums."""
        self._total_num = 0.0
        self._class_num = 0
        self._counts = np.zeros(4)
        self._counted = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Add a batch: ``update(y_pred, y)``, binarised one-hot :math:`(N, C, ...)` arrays.

        Raises:
            ValueError: not 2 inputs; ``y`` not binary; ``y_pred`` with fewer than 2 dimensions;
                different shapes; a ``decrease`` that leaves several values with ``calculation_method``.
        """
        y_pred, y = self._prediction_and_label(inputs, 'ConfusionMatrixMetric')
        if not np.all(np.isin(y, (0, 1))):
            raise ValueError("For 'ConfusionMatrixMetric.update', the true value (input[1]) must be a binarized "
                             "ndarray.")
        if y_pred.ndim < 2:
            raise ValueError(f"For 'ConfusionMatrixMetric.update', the predicted value (input[0]) must have at least "
                             f"2 dimensions, but got {y_pred.ndim}.")
        counts = _confusion_counts(y_pred, y, self.skip_channel)
        # (N, C) and (N, C, 1) inputs hold one value per sample and channel: they always sum the counts
        spatial = not (y_pred.ndim == 2 or (y_pred.ndim == 3 and y_pred.shape[-1] == 1))
        if self.calculation_method and spatial:
            score, present = _reduce(_metric_from_counts(self._short, counts), self.decrease)
            score, present = np.asarray(score), np.asarray(present)
            if score.size != 1:
                raise ValueError(f"For 'ConfusionMatrixMetric', decrease={self.decrease!r} leaves {score.size} values; "
                                 f"use 'mean' or 'sum' with calculation_method=True.")
            present = int(present.reshape(-1)[0])
            self._total_num += float(score.reshape(-1)[0]) * present
            self._class_num += present
        else:
            self._counts += counts.reshape(-1, 4).sum(axis=0)
            self._counted = True

    def eval(self):
        """The metric: with ``calculation_method``, the average of the per-sample values; otherwise the
        metric of the counts summed over everything seen (a 1-element array).

        Raises:
            RuntimeError: ``update`` was never called.
        """
        if self._class_num:
            return self._total_num / self._class_num
        if self._counted:
            return _metric_from_counts(self._short, self._counts)
        raise RuntimeError("The 'ConfusionMatrixMetric' can not be calculated, because the number of samples is 0; "
                           "call update before eval.")
