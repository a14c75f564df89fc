"""Metric base API: clear/update/eval, indexes and rearrange_inputs, EvaluationBase, the factory, and the
names MindSpore 1.x scripts reach through ``nn``."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn as ms
import aotnn.train.metrics as metrics
from aotnn import Tensor, nn


class MyMAE(nn.Metric):
    """The docstring example of Metric: its ``update`` is not decorated, so indexes are ignored."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        self._abs_error_sum = 0
        self._samples_num = 0

    def update(self, *inputs):
        y_pred = inputs[0].asnumpy()
        y = inputs[1].asnumpy()
        self._abs_error_sum += np.abs(y - y_pred).sum()
        self._samples_num += y.shape[0]

    def eval(self):
        return self._abs_error_sum / self._samples_num


class MyIndexedMAE(MyMAE):
    """The same metric with ``update`` decorated: indexes pick its inputs."""

    @nn.rearrange_inputs
    def update(self, *inputs):
        super().update(*inputs)


def test_custom_metric_with_indexes_docstring_example():
    x = Tensor(np.array([[0.1, 0.2, 0.6, 0.9], [0.1, 0.2, 0.6, 0.9]]), ms.float32)
    y = Tensor(np.array([[0.1, 0.1, 0.1, 0.1], [0.1, 0.1, 0.1, 0.1]]), ms.float32)
    y2 = Tensor(np.array([[0.1, 0.25, 0.7, 0.9], [0.1, 0.25, 0.7, 0.9]]), ms.float32)
    metric = MyMAE().set_indexes([0, 2])
    assert metric.indexes == [0, 2]
    metric.clear()
    metric.update(x, y, y2)
    np.testing.assert_allclose(metric.eval(), 1.399999976158142, rtol=1e-6)  # the docstring's value: x against y
    indexed = MyIndexedMAE().set_indexes([0, 2])
    indexed.update(x, y, y2)
    np.testing.assert_allclose(indexed.eval(), 0.15, rtol=1e-6)  # x against y2


def test_rearrange_inputs_on_any_class():
    class Example:
        def __init__(self):
            self._indexes = None

        @property
        def indexes(self):
            return self._indexes

        @metrics.rearrange_inputs
        def update(self, *inputs):
            return tuple(inputs)

    example = Example()
    assert example.update(5, 9) == (5, 9)
    example._indexes = [1, 0]
    assert example.update(5, 9) == (9, 5)


def test_set_indexes_validation_and_call():
    metric = nn.Accuracy()
    with pytest.raises(ValueError, match="indexes"):
        metric.set_indexes((0, 1))
    with pytest.raises(ValueError, match="indexes"):
        metric.set_indexes([0, "1"])
    x = np.array([[0.2, 0.5], [0.3, 0.1], [0.9, 0.6]])
    # calling a metric clears, updates once and evaluates
    assert metric.set_indexes([1, 0])(np.array([1, 0, 1]), x) == pytest.approx(2 / 3)
    assert metric(np.array([1, 0, 0]), x) == 1.0


def test_metric_is_abstract_and_converts_inputs():
    with pytest.raises(TypeError):
        nn.Metric()
    with pytest.raises(TypeError, match="tensor, list or numpy"):
        nn.MAE().update((1, 2), (1, 2))
    mae = nn.MAE()
    mae.update([1.0, 2.0], Tensor(np.array([1.5, 2.0], np.float32)))
    assert mae.eval() == pytest.approx(0.25)


def test_evaluation_base():
    with pytest.raises(TypeError, match="eval_type"):
        nn.EvaluationBase('regression')
    base = nn.EvaluationBase('multilabel')
    for method, args in (("clear", ()), ("update", (1, 2)), ("eval", ())):
        with pytest.raises(NotImplementedError):
            getattr(base, method)(*args)
    with pytest.raises(TypeError, match="eval_type"):
        nn.Accuracy('binary')


def test_factory_names_and_exposure():
    assert metrics.names() == sorted(['accuracy', 'acc', 'precision', 'recall', 'F1', 'dice', 'roc', 'auc',
                                      'bleu_score',
                                      'cosine_similarity', 'occlusion_sensitivity', 'topk', 'hausdorff_distance',
                                      'top_1_accuracy', 'top_5_accuracy', 'mae', 'mse', 'loss', 'mean_surface_distance',
                                      'root_mean_square_distance', 'perplexity', 'confusion_matrix',
                                      'confusion_matrix_metric'])
    metric = nn.get_metric_fn('precision', eval_type='classification')
    assert isinstance(metric, nn.Precision)
    assert isinstance(nn.get_metric_fn('topk', 3), nn.TopKCategoricalAccuracy)
    with pytest.raises(KeyError, match="unsupported"):
        nn.get_metric_fn('bogus')
    assert nn.names() == metrics.names()
    for name in metrics.__all__:
        assert getattr(nn, name) is getattr(metrics, name)
        assert getattr(nn.metrics, name) is getattr(metrics, name)


def test_get_metrics():
    built = metrics.get_metrics({'acc', 'loss'})
    assert set(built) == {'acc', 'loss'} and isinstance(built['loss'], nn.Loss)
    given = {'top1': nn.Top1CategoricalAccuracy()}
    assert metrics.get_metrics(given) is given
    assert metrics.get_metrics(None) is None
    with pytest.raises(TypeError, match="Metric"):
        metrics.get_metrics({'acc': 3})
    with pytest.raises(TypeError, match="dict or set"):
        metrics.get_metrics(['acc'])
