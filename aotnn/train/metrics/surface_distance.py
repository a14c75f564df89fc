"""Distances between segmentation surfaces: HausdorffDistance, MeanSurfaceDistance, RootMeanSquareDistance.

A surface (edge) is the set of foreground pixels with a background pixel, or the image border,
among their 2·ndim face neighbours. Distances from each edge pixel of one mask to the nearest edge
pixel of the other are exact (computed pairwise), in the Euclidean, chessboard (L-inf) or taxicab
(L1) metric.
"""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_choice, check_input_count, check_type, rearrange_inputs

__all__ = ['HausdorffDistance', 'MeanSurfaceDistance', 'RootMeanSquareDistance']

_METRICS = ('euclidean', 'chessboard', 'taxicab')
_CHUNK = 1 << 22  # pairwise distances computed this many at a time


def edges(mask: np.ndarray) -> np.ndarray:
    """Foreground pixels of boolean ``mask`` that touch the background or the border along an axis."""
    mask = np.asarray(mask, bool)
    if mask.ndim == 0:  # a single pixel (a crop squeezed to nothing) is its own surface
        return mask.reshape(1)
    padded = np.pad(mask, 1, constant_values=False)
    interior = mask.copy()
    centre = tuple(slice(1, -1) for _ in range(mask.ndim))
    for axis in range(mask.ndim):
        for shift in (-1, 1):
            window = list(centre)
            window[axis] = slice(1 + shift, padded.shape[axis] - 1 + shift)
            interior &= padded[tuple(window)]
    return mask & ~interior


def surface_distances(from_edges: np.ndarray, to_edges: np.ndarray, metric: str) -> np.ndarray:
    """For every pixel of ``from_edges``, the distance to the nearest pixel of ``to_edges``
    (empty when ``from_edges`` is empty, infinite when ``to_edges`` is)."""
    sources = np.argwhere(from_edges)
    if sources.shape[0] == 0:
        return np.array([])
    targets = np.argwhere(to_edges)
    if targets.shape[0] == 0:
        return np.full(sources.shape[0], np.inf)
    out = np.empty(sources.shape[0])
    step = max(1, _CHUNK // targets.shape[0])
    for start in range(0, sources.shape[0], step):
        diff = np.abs(sources[start:start + step, None, :] - targets[None, :, :]).astype(np.float64)
        if metric == 'euclidean':
            dist = np.sqrt((diff * diff).sum(axis=-1))
        elif metric == 'chessboard':
            dist = diff.max(axis=-1)
        else:
            dist = diff.sum(axis=-1)
        out[start:start + step] = dist.min(axis=1)
    return out


def _masks(owner: str, inputs: tuple, convert, label_error=TypeError) -> tuple[np.ndarray, np.ndarray]:
    """Check ``(y_pred, y, label_idx)`` and return the two boolean masks of ``label_idx``."""
    check_input_count(inputs, 3, owner, 'predicted value, true value, label index')
    y_pred, y = convert(inputs[0]), convert(inputs[1])
    label_idx = inputs[2]
    if isinstance(label_idx, bool) or not isinstance(label_idx, (int, float)):
        raise label_error(f"For '{owner}.update', the label index (input[2]) must be int or float, "
                          f"but got {type(label_idx).__name__}.")
    if label_idx not in y_pred and label_idx not in y:
        raise ValueError(f"For '{owner}.update', the label index (input[2]) must be in predicted value (input[0]) "
                         f"or true value (input[1]), but {label_idx} is not.")
    if y_pred.size == 0 or y_pred.shape != y.shape:
        raise ValueError(f"For '{owner}.update', predicted value (input[0]) and true value (input[1]) must be "
                         f"non-empty and have the same shape, but got {y_pred.shape} and {y.shape}.")
    y_pred = y_pred if y_pred.dtype == bool else y_pred == label_idx
    y = y if y.dtype == bool else y == label_idx
    return y_pred, y


class HausdorffDistance(Metric):
    """Hausdorff distance between the surfaces of a predicted and a true segmentation: the largest
    distance from a surface point of one to the nearest surface point of the other.

    Args:
        distance_metric (str): 'euclidean', 'chessboard' or 'taxicab'. Default: 'euclidean'.
        percentile (float, optional): a percentile (0-100) of the distances instead of their
            maximum. Default: None.
        directed (bool): only from the prediction to the truth. Default: False.
        crop (bool): crop both masks to the bounding box of their union first (squeezing size-1
            dimensions, as MindSpore does). Default: True.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: unknown ``distance_metric``.

    Examples:
        >>> x = Tensor(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]))
        >>> y = Tensor(np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]))
        >>> metric = nn.HausdorffDistance()
        >>> metric.update(x, y, 0)
        >>> metric.eval()
        1.4142135623730951
    """

    def __init__(self, distance_metric: str = 'euclidean', percentile: float | None = None, directed: bool = False,
                 crop: bool = True):
        super().__init__()
        name = 'HausdorffDistance'
        self.distance_metric = check_choice(distance_metric, 'distance_metric', _METRICS, name)
        self.percentile = percentile if percentile is None else check_type(percentile, 'percentile', (float,), name)
        self.directed = check_type(directed, 'directed', (bool,), name)
        self.crop = check_type(crop, 'crop', (bool,), name)
        self.clear()

    def clear(self) -> None:
        """Forget the masks."""
        self.y_pred_edges = 0
        self.y_edges = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Set the masks: ``update(y_pred, y, label_idx)``; pixels equal to ``label_idx`` are foreground.

        Raises:
            ValueError: not 3 inputs; ``label_idx`` in neither input; empty or differently shaped inputs.
            TypeError: ``label_idx`` not an int or float.
        """
        y_pred, y = _masks('HausdorffDistance', inputs, self._convert_data)
        if self.crop:
            union = y_pred | y
            if not union.any():
                self.y_pred_edges, self.y_edges = np.zeros_like(y_pred), np.zeros_like(y)
                self._is_update = True
                return
            box = tuple(slice(int(idx.min()), int(idx.max()) + 1) for idx in np.nonzero(union))
            y_pred, y = np.squeeze(y_pred[box]), np.squeeze(y[box])
        self.y_pred_edges, self.y_edges = edges(y_pred), edges(y)
        self._is_update = True

    def _directed(self, from_edges, to_edges) -> float:
        distances = surface_distances(from_edges, to_edges, self.distance_metric)
        if distances.size == 0:
            return np.inf
        if not self.percentile:
            return float(distances.max())
        if not 0 <= self.percentile <= 100:
            raise ValueError(f"For 'HausdorffDistance', the value of the argument 'percentile' must be [0, 100], "
                             f"but got {self.percentile}.")
        return float(np.percentile(distances, self.percentile))

    def eval(self) -> float:
        """The (directed or symmetric) Hausdorff distance; inf when a surface is empty.

        Raises:
            RuntimeError: ``update`` was never called.
            ValueError: ``percentile`` outside [0, 100].
        """
        self._check_updated()
        forward = self._directed(self.y_pred_edges, self.y_edges)
        if self.directed:
            return forward
        return max(forward, self._directed(self.y_edges, self.y_pred_edges))


class _SurfaceMetric(Metric):
    """Shared arguments and state of the mean and root-mean-square surface distances."""

    _name = ''

    def __init__(self, symmetric: bool = False, distance_metric: str = 'euclidean'):
        super().__init__()
        self.distance_metric = check_choice(distance_metric, 'distance_metric', _METRICS, self._name)
        self.symmetric = check_type(symmetric, 'symmetric', (bool,), self._name)
        self.clear()

    def clear(self) -> None:
        """Forget the masks."""
        self._y_pred_edges = 0
        self._y_edges = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Set the masks: ``update(y_pred, y, label_idx)``; pixels equal to ``label_idx`` are foreground.

        Raises:
            ValueError: not 3 inputs; ``label_idx`` in neither input; empty or differently shaped inputs.
            TypeError: ``label_idx`` not an int or float.
        """
        y_pred, y = _masks(self._name, inputs, self._convert_data)
        self._y_pred_edges, self._y_edges = edges(y_pred), edges(y)
        self._is_update = True

    def _distances(self) -> list[np.ndarray] | None:
        """The distances from the predicted surface to the true one (and back when ``symmetric``); None when a
        surface is empty.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        self._check_updated()
        directions = [(self._y_pred_edges, self._y_edges)]
        if self.symmetric:
            directions.append((self._y_edges, self._y_pred_edges))
        distances = []
        for from_edges, to_edges in directions:
            distances.append(surface_distances(from_edges, to_edges, self.distance_metric))
            if distances[-1].size == 0:
                return None
        return distances


class MeanSurfaceDistance(_SurfaceMetric):
    """Mean distance from the predicted surface to the true one (averaged with the reverse
    direction when ``symmetric``); inf when a surface is empty.

    Args:
        symmetric (bool): average both directions. Default: False.
        distance_metric (str): 'euclidean', 'chessboard' or 'taxicab'. Default: 'euclidean'.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: unknown ``distance_metric``.

    Examples:
        >>> x = Tensor(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]))
        >>> y = Tensor(np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]))
        >>> metric = nn.MeanSurfaceDistance(symmetric=False, distance_metric="euclidean")
        >>> metric.update(x, y, 0)
        >>> metric.eval()
        0.8047378541243649
    """

    _name = 'MeanSurfaceDistance'

    def eval(self) -> float:
        """The mean surface distance.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        distances = self._distances()
        if distances is None:
            return np.inf
        return float(np.mean([d.mean() for d in distances]))


class RootMeanSquareDistance(_SurfaceMetric):
    """Root-mean-square surface distance. With ``symmetric``, the square root of the mean of the two
    directions' mean squared distances; without, the mean squared distance from the predicted
    surface to the true one (no square root, as MindSpore computes it). inf when a surface is empty.

    Args:
        symmetric (bool): use both directions. Default: False.
        distance_metric (str): 'euclidean', 'chessboard' or 'taxicab'. Default: 'euclidean'.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: unknown ``distance_metric``.

    Examples:
        >>> x = Tensor(np.array([[3, 0, 1], [1, 3, 0], [1, 0, 2]]))
        >>> y = Tensor(np.array([[0, 2, 1], [1, 2, 1], [0, 0, 1]]))
        >>> metric = nn.RootMeanSquareDistance(symmetric=False, distance_metric="euclidean")
        >>> metric.update(x, y, 0)
        >>> metric.eval()
        1.0000000000000002
    """

    _name = 'RootMeanSquareDistance'

    def eval(self) -> float:
        """The root-mean-square surface distance.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        distances = self._distances()
        if distances is None:
            return np.inf
        mean_squares = [float((d ** 2).mean()) for d in distances]
        return float(np.sqrt(np.mean(mean_squares))) if self.symmetric else mean_squares[0]
