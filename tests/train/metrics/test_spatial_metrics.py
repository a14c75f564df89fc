"""HausdorffDistance, MeanSurfaceDistance, RootMeanSquareDistance (against scipy.ndimage's erosion and
distance transforms, the docstring examples and hand-worked cases) and OcclusionSensitivity (against
a numpy model)."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import Tensor, nn

RNG = np.random.default_rng(41)
DOC_X = np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]])
DOC_Y = np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]])
MAP_P = RNG.integers(0, 3, (12, 14))
MAP_Y = RNG.integers(0, 3, (12, 14))
VOL_P = RNG.integers(0, 2, (6, 7, 8))
VOL_Y = RNG.integers(0, 2, (6, 7, 8))
METRICS = ['euclidean', 'chessboard', 'taxicab']


def scipy_distances(from_mask, to_mask, metric):
    """Distances from the surface of ``from_mask`` to the surface of ``to_mask`` with scipy.ndimage."""
    ndimage = pytest.importorskip("scipy.ndimage")
    from_edges = ndimage.binary_erosion(from_mask) ^ from_mask
    to_edges = ndimage.binary_erosion(to_mask) ^ to_mask
    if metric == 'euclidean':
        dist = ndimage.distance_transform_edt(~to_edges)
    else:
        dist = ndimage.distance_transform_cdt(~to_edges, metric=metric)
    return dist[from_edges]


def evaluate(metric, *inputs):
    metric.clear()
    metric.update(*inputs)
    return metric.eval()


def test_docstring_examples():
    assert evaluate(nn.HausdorffDistance(), Tensor(DOC_X), Tensor(DOC_Y), 0) == pytest.approx(1.4142135623730951)
    assert evaluate(nn.MeanSurfaceDistance(symmetric=False, distance_metric="euclidean"), Tensor(DOC_X),
                    Tensor(DOC_Y), 0) == pytest.approx(0.8047378541243649)
    assert evaluate(nn.RootMeanSquareDistance(symmetric=False, distance_metric="euclidean"), Tensor(DOC_X),
                    Tensor(DOC_Y), 0) == pytest.approx(1.0000000000000002)
    assert evaluate(nn.HausdorffDistance('chessboard'), DOC_X, DOC_Y, 0) == 1
    assert evaluate(nn.HausdorffDistance('taxicab'), DOC_X, DOC_Y, 0) == 2


def test_hand_worked_squares():
    # a 3x3 square inside a 5x5 one, both centred in a 9x9 image: every surface pixel of the small
    # square is 1 step (axis-aligned) from the large square's surface, corners too in chessboard terms
    outer, inner = np.zeros((9, 9), int), np.zeros((9, 9), int)
    outer[2:7, 2:7] = 1
    inner[3:6, 3:6] = 1
    assert evaluate(nn.HausdorffDistance('chessboard', directed=True), inner, outer, 1) == 1
    assert evaluate(nn.HausdorffDistance('taxicab', directed=True), inner, outer, 1) == 1
    assert evaluate(nn.MeanSurfaceDistance(distance_metric='euclidean'), inner, outer, 1) == pytest.approx(1.0)
    # outer -> inner: the corners of the 5x5 square are sqrt(2) from the 3x3 square's corners
    assert evaluate(nn.HausdorffDistance(directed=True), outer, inner, 1) == pytest.approx(np.sqrt(2))
    assert evaluate(nn.RootMeanSquareDistance(symmetric=True), inner, outer, 1) == pytest.approx(
        np.sqrt(np.mean([1.0, (12 * 1 + 4 * 2) / 16])))


@pytest.mark.parametrize("metric", METRICS)
def test_hausdorff_matches_scipy(metric):
    for p, y, label in ((MAP_P, MAP_Y, 1), (VOL_P, VOL_Y, 1)):
        forward = scipy_distances(p == label, y == label, metric)
        backward = scipy_distances(y == label, p == label, metric)
        assert evaluate(nn.HausdorffDistance(metric), p, y, label) == pytest.approx(max(forward.max(), backward.max()))
        assert evaluate(nn.HausdorffDistance(metric, directed=True, crop=False), p, y, label) == pytest.approx(
            forward.max())
        assert evaluate(nn.HausdorffDistance(metric, percentile=80.0), p, y, label) == pytest.approx(
            max(np.percentile(forward, 80), np.percentile(backward, 80)))


@pytest.mark.parametrize("metric", METRICS)
def test_mean_and_rms_surface_distance_match_scipy(metric):
    for p, y, label in ((MAP_P, MAP_Y, 2), (VOL_P, VOL_Y, 0)):
        forward = scipy_distances(p == label, y == label, metric)
        backward = scipy_distances(y == label, p == label, metric)
        assert evaluate(nn.MeanSurfaceDistance(False, metric), p, y, label) == pytest.approx(forward.mean())
        assert evaluate(nn.MeanSurfaceDistance(True, metric), p, y, label) == pytest.approx(
            (forward.mean() + backward.mean()) / 2)
        # without symmetric, MindSpore returns the mean squared distance (no root)
        assert evaluate(nn.RootMeanSquareDistance(False, metric), p, y, label) == pytest.approx((forward ** 2).mean())
        assert evaluate(nn.RootMeanSquareDistance(True, metric), p, y, label) == pytest.approx(
            np.sqrt(((forward ** 2).mean() + (backward ** 2).mean()) / 2))


def test_crop_squeezes_a_one_row_box_as_mindspore():
    # both masks lie on one row: the cropped box is squeezed to 1-D, where only the ends are surface
    pred, true = np.zeros((5, 6), int), np.zeros((5, 6), int)
    pred[2, 1:5] = 1
    true[2, 2:4] = 1
    assert evaluate(nn.HausdorffDistance(), pred, true, 1) == pytest.approx(1.0)
    assert evaluate(nn.HausdorffDistance(crop=False), pred, true, 1) == pytest.approx(1.0)
    pred[2, 0] = 1
    assert evaluate(nn.HausdorffDistance(), pred, true, 1) == pytest.approx(2.0)


def test_empty_surfaces_give_infinity_and_boolean_masks_pass_through():
    empty = np.zeros((4, 4), bool)
    full = np.zeros((4, 4), bool)
    full[1:3, 1:3] = True
    assert evaluate(nn.HausdorffDistance(crop=False), empty, full, 1) == np.inf
    assert evaluate(nn.MeanSurfaceDistance(), full, empty, 1) == np.inf
    assert evaluate(nn.RootMeanSquareDistance(), empty, full, 1) == np.inf


def test_surface_metric_errors():
    for cls in (nn.HausdorffDistance, nn.MeanSurfaceDistance, nn.RootMeanSquareDistance):
        metric = cls()
        with pytest.raises(RuntimeError, match="update"):
            metric.eval()
        with pytest.raises(ValueError, match="3 inputs"):
            metric.update(DOC_X, DOC_Y)
        with pytest.raises(TypeError, match="label index"):
            metric.update(DOC_X, DOC_Y, "0")
        with pytest.raises(ValueError, match="label index"):
            metric.update(DOC_X, DOC_Y, 7)
        with pytest.raises(ValueError, match="same shape"):
            metric.update(DOC_X, DOC_Y[:2], 0)
    with pytest.raises(ValueError, match="distance_metric"):
        nn.HausdorffDistance(distance_metric='cosine')
    with pytest.raises(TypeError, match="percentile"):
        nn.HausdorffDistance(percentile=50)
    with pytest.raises(TypeError, match="symmetric"):
        nn.MeanSurfaceDistance(symmetric=1)
    metric = nn.HausdorffDistance(percentile=150.0)
    metric.update(DOC_X, DOC_Y, 0)
    with pytest.raises(ValueError, match="percentile"):
        metric.eval()


# -- OcclusionSensitivity -------------------------------------------------------------------------------

class DenseNet(nn.Cell):
    """The docstring example's model."""

    def __init__(self, weight, bias):
        super().__init__()
        self.dense = nn.Dense(weight.shape[1], weight.shape[0], weight_init=Tensor(weight), bias_init=Tensor(bias))

    def construct(self, x):
        return self.dense(x.reshape(x.shape[0], -1))


def occlusion_reference(weight, bias, image, label, margin, pad_val, box=None):
    """Occlude [i - margin, i + margin) around every position (all axes after the batch) and record the
    drop of the label's score, with the model written in numpy."""
    def score(x):
        return (x.reshape(1, -1) @ weight.T + bias)[0, label]

    shape = image.shape[1:]
    low = np.zeros(len(shape), int) if box is None else np.array(box[::2])
    high = np.array(shape) - 1 if box is None else np.array(box[1::2])
    out = np.zeros(tuple(high - low + 1))
    for offset in np.ndindex(out.shape):
        index = np.array(offset) + low
        occluded = image.copy()
        occluded[(0,) + tuple(slice(max(0, i - margin), min(n, i + margin)) for i, n in zip(index, shape))] = pad_val
        out[offset] = score(image) - score(occluded)
    return np.squeeze(out)


def test_occlusion_sensitivity_docstring_example():
    weight = np.array([[0.1, 0.8, 0.1, 0.1], [1, 1, 1, 1]], np.float32)
    bias = np.array([0.3, 0.6], np.float32)
    metric = nn.OcclusionSensitivity()
    metric.clear()
    metric.update(DenseNet(weight, bias), np.array([[0.1, 0.2, 0.3, 0.4]], np.float32), np.array(1).astype(np.int32))
    np.testing.assert_allclose(metric.eval(), [0.29999995, 0.6, 1.0, 0.9], rtol=1e-6)


def test_occlusion_sensitivity_matches_numpy_model():
    image = RNG.random((1, 2, 3, 4)).astype(np.float32)
    weight = RNG.standard_normal((3, 24)).astype(np.float32)
    bias = RNG.standard_normal(3).astype(np.float32)
    model = DenseNet(weight, bias)
    result = evaluate(nn.OcclusionSensitivity(pad_val=0.5, margin=1, n_batch=7), model, Tensor(image), 2)
    assert result.shape == (2, 3, 4)
    np.testing.assert_allclose(result, occlusion_reference(weight, bias, image, 2, 1, 0.5), rtol=1e-4, atol=1e-5)
    box = [0, 0, 1, 2, -1, -1]  # channel 0, rows 1-2, every column (-1: the last index)
    result = evaluate(nn.OcclusionSensitivity(margin=2, b_box=box), model, image, np.array([1], np.int32))
    np.testing.assert_allclose(result, occlusion_reference(weight, bias, image, 1, 2, 0.0, [0, 0, 1, 2, 0, 3]),
                               rtol=1e-4, atol=1e-5)


def test_occlusion_sensitivity_errors():
    model = DenseNet(np.ones((2, 4), np.float32), np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="pad_val"):
        nn.OcclusionSensitivity(pad_val=0)
    with pytest.raises(TypeError, match="b_box"):
        nn.OcclusionSensitivity(b_box=(0, 1))
    metric = nn.OcclusionSensitivity()
    with pytest.raises(RuntimeError, match="update"):
        metric.eval()
    with pytest.raises(ValueError, match="3 inputs"):
        metric.update(model, np.ones((1, 4), np.float32))
    with pytest.raises(TypeError, match="Cell"):
        metric.update(lambda x: x, np.ones((1, 4), np.float32), 0)
    with pytest.raises(RuntimeError, match="index 0"):
        metric.update(model, np.ones((2, 4), np.float32), np.array([0, 1]))
    with pytest.raises(ValueError, match="bounding box"):
        nn.OcclusionSensitivity(b_box=[0, 1]).update(model, np.ones((1, 2, 2), np.float32), 0)
