"""Metrics, MindSpore's ``train.metrics`` (also reachable as ``aotnn.nn.Accuracy`` etc., as in MindSpore 1.x).

Metrics run on the host with numpy over values the network already produced.
"""
from __future__ import annotations

from .accuracy import Accuracy
from .bleu_score import BleuScore
from .confusion_matrix import ConfusionMatrix, ConfusionMatrixMetric
from .cosine_similarity import CosineSimilarity
from .dice import Dice
from .error import MAE, MSE
from .fbeta import F1, Fbeta
from .loss import Loss
from .metric import EvaluationBase, Metric, rearrange_inputs
from .occlusion_sensitivity import OcclusionSensitivity
from .perplexity import Perplexity
from .precision_recall import Precision, Recall
from .roc import ROC, auc
from .surface_distance import HausdorffDistance, MeanSurfaceDistance, RootMeanSquareDistance
from .topk import Top1CategoricalAccuracy, Top5CategoricalAccuracy, TopKCategoricalAccuracy

__all__ = ['names', 'get_metric_fn', 'get_metrics', 'Metric', 'EvaluationBase', 'rearrange_inputs', 'Accuracy',
           'MAE', 'MSE', 'Precision', 'Recall', 'Fbeta', 'F1', 'TopKCategoricalAccuracy', 'Top1CategoricalAccuracy',
           'Top5CategoricalAccuracy', 'Loss', 'Perplexity', 'ConfusionMatrix', 'ConfusionMatrixMetric', 'ROC', 'auc',
           'BleuScore', 'CosineSimilarity', 'Dice', 'HausdorffDistance', 'MeanSurfaceDistance',
           'RootMeanSquareDistance', 'OcclusionSensitivity']

__factory__ = {
    'accuracy': Accuracy,
    'acc': Accuracy,
    'precision': Precision,
    'recall': Recall,
    'F1': F1,
    'dice': Dice,
    'roc': ROC,
    'auc': auc,
    'bleu_score': BleuScore,
    'cosine_similarity': CosineSimilarity,
    'occlusion_sensitivity': OcclusionSensitivity,
    'topk': TopKCategoricalAccuracy,
    'hausdorff_distance': HausdorffDistance,
    'top_1_accuracy': Top1CategoricalAccuracy,
    'top_5_accuracy': Top5CategoricalAccuracy,
    'mae': MAE,
    'mse': MSE,
    'loss': Loss,
    'mean_surface_distance': MeanSurfaceDistance,
    'root_mean_square_distance': RootMeanSquareDistance,
    'perplexity': Perplexity,
    'confusion_matrix': ConfusionMatrix,
    'confusion_matrix_metric': ConfusionMatrixMetric,
}


def names() -> list[str]:
    """The names :func:`get_metric_fn` accepts, sorted.

    Returns:
        list[str].
    """
    return sorted(__factory__)


def get_metric_fn(name: str, *args, **kwargs):
    """The metric called ``name``, built with ``args`` and ``kwargs``.

    Args:
        name (str): one of :func:`names`.
        args: positional arguments of the metric.
        kwargs: keyword arguments of the metric.

    Returns:
        Metric, a new instance (or the ``auc`` result for 'auc').

    Raises:
        KeyError: an unknown name.

    Examples:
        >>> metric = get_metric_fn('precision', eval_type='classification')
    """
    if name not in __factory__:
        raise KeyError(f"For 'get_metric_fn', unsupported metric {name!r}; supported: {names()}.")
    return __factory__[name](*args, **kwargs)


def get_metrics(metrics):
    """Metrics for ``Model``: a dict name -> Metric, from a dict (checked) or a set of names.

    Args:
        metrics (Union[dict, set, None]): ``{'name': Metric}``, ``{'accuracy', 'loss'}`` or None.

    Returns:
        dict or None.

    Raises:
        TypeError: another type, or a dict with non-str keys or non-Metric values.
        KeyError: an unknown name in a set.
    """
    if metrics is None:
        return None
    if isinstance(metrics, dict):
        for key, value in metrics.items():
            if not isinstance(key, str) or not isinstance(value, Metric):
                raise TypeError(f"For 'get_metrics', if 'metrics' is dict, the key in 'metrics' must be string and "
                                f"value in 'metrics' must be Metric, but got key:{type(key)}, value:{type(value)}.")
        return metrics
    if isinstance(metrics, set):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'get_metrics', the argument 'metrics' must be None, dict or set, but got {metrics!r}")
