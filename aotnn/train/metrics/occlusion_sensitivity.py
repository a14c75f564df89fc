"""OcclusionSensitivity."""
from __future__ import annotations

import numpy as np

from ...common.tensor import Tensor
from .metric import Metric, check_input_count, check_type, rearrange_inputs

__all__ = ['OcclusionSensitivity']


def _bounding_box(b_box, image_shape: np.ndarray):
    """``b_box`` ``[min0, max0, min1, max1, ...]`` (inclusive; negative max means the last index) as arrays."""
    if b_box is None:
        return None, None
    if len(b_box) != 2 * len(image_shape):
        raise ValueError(f"For 'OcclusionSensitivity', the bounding box must hold a lower and an upper bound for "
                         f"every dimension except the batch: {2 * len(image_shape)} values, but got {len(b_box)}.")
    low, high = np.array(b_box[::2]), np.array(b_box[1::2])
    low[low < 0] = 0
    high[high < 0] = image_shape[high < 0] - 1
    if np.any(high >= image_shape):
        raise ValueError("For 'OcclusionSensitivity', maximum bounding box must be smaller than image size for all "
                         "values.")
    if np.any(low > high):
        raise ValueError("For 'OcclusionSensitivity', minimum bounding box must be smaller than maximum bounding box "
                         "for all values.")
    return low, high


class OcclusionSensitivity(Metric):
    """Occlusion sensitivity: how much the model's score for the label drops when a patch of the
    input around each position is replaced by ``pad_val``. Large values mark the regions the
    decision depends on.

    ``update(model, x, label)`` calls ``model`` (a Cell) on ``x`` (one sample, batch size 1) and
    on one occluded copy per position (every axis after the batch, channels included), in
    batches of ``n_batch``. ``eval`` returns ``baseline - occluded_score`` per position.

    Args:
        pad_val (float): value written over the occluded patch. Default: 0.0.
        margin (Union[int, list[int]]): half-size of the patch (per axis with a list). Default: 2.
        n_batch (int): occluded copies per model call. Default: 128.
        b_box (list[int], optional): ``[min0, max0, min1, max1, ...]`` limits of the positions
            (inclusive, axes after the batch). Default: None (every position).

    Raises:
        TypeError: arguments of the wrong type.

    Examples:
        >>> class DenseNet(nn.Cell):
        ...     def __init__(self):
        ...         super(DenseNet, self).__init__()
        ...         w = np.array([[0.1, 0.8, 0.1, 0.1],[1, 1, 1, 1]]).astype(np.float32)
        ...         b = np.array([0.3, 0.6]).astype(np.float32)
        ...         self.dense = nn.Dense(4, 2, weight_init=Tensor(w), bias_init=Tensor(b))
        ...
        ...     def construct(self, x):
        ...         return self.dense(x)
        >>> model = DenseNet()
        >>> test_data = np.array([[0.1, 0.2, 0.3, 0.4]]).astype(np.float32)
        >>> label = np.array(1).astype(np.int32)
        >>> metric = nn.OcclusionSensitivity()
        >>> metric.update(model, test_data, label)
        >>> metric.eval()
        [0.29999995 0.6 1. 0.9]
    """

    def __init__(self, pad_val: float = 0.0, margin=2, n_batch: int = 128, b_box=None):
        super().__init__()
        name = 'OcclusionSensitivity'
        self.pad_val = check_type(pad_val, 'pad_val', (float,), name)
        self.margin = check_type(margin, 'margin', (int, list), name)
        self.n_batch = check_type(n_batch, 'n_batch', (int,), name)
        if self.n_batch < 1:
            raise ValueError(f"For '{name}', the 'n_batch' must be at least 1, but got {n_batch}.")
        self.b_box = b_box if b_box is None else check_type(b_box, 'b_box', (list,), name)
        self.clear()

    def clear(self) -> None:
        """Forget the last map."""
        self._baseline = 0
        self._sensitivity_im = 0
        self._is_update = False

    def _margins(self, rank: int) -> np.ndarray:
        if isinstance(self.margin, int):
            return np.full(rank, self.margin)
        if len(self.margin) != rank:
            raise ValueError(f"For 'OcclusionSensitivity', a list 'margin' needs one value per axis after the batch "
                             f"({rank}), but got {len(self.margin)}.")
        return np.array(self.margin)

    @rearrange_inputs
    def update(self, *inputs) -> None:
        """Compute the map: ``update(model, x, label)``.

        Raises:
            ValueError: not 3 inputs; a bad ``b_box``.
            TypeError: ``model`` is not a Cell.
            RuntimeError: ``x``'s batch is not 1, or the label count is not 1.
        """
        from ...nn.cell import Cell
        check_input_count(inputs, 3, 'OcclusionSensitivity', 'classification model, predicted value, label')
        model = inputs[0]
        if not isinstance(model, Cell):
            raise TypeError(f"For 'OcclusionSensitivity.update', the model (inputs[0]) must be a Cell, "
                            f"but got {type(model).__name__}.")
        image = self._convert_data(inputs[1])
        label = inputs[2]
        label = np.asarray(label) if isinstance(label, (int, np.integer)) else self._convert_data(label)
        if image.shape[0] > 1:
            raise RuntimeError(f"For 'OcclusionSensitivity.update', the shape at index 0 of the predicted value "
                               f"(input[1]) must be 1, but got {image.shape[0]}.")
        if label.size != image.shape[0]:
            raise RuntimeError(f"For 'OcclusionSensitivity.update', the number of the label (input[2]) must be same "
                               f"as the batches, but got {label.size} labels and {image.shape[0]} batches.")
        label = int(label.reshape(-1)[0])
        image_shape = np.array(image.shape[1:])
        low, high = _bounding_box(self.b_box, image_shape)
        margins = self._margins(len(image_shape))
        self._baseline = float(model(Tensor(image)).asnumpy()[0, label])

        out_shape = tuple(image_shape if low is None else high - low + 1)
        positions = int(np.prod(out_shape))
        scores = []
        for start in range(0, positions, self.n_batch):
            batch = []
            for flat in range(start, min(start + self.n_batch, positions)):
                index = np.array(np.unravel_index(flat, out_shape))
                if low is not None:
                    index = index + low
                lo = np.maximum(index - margins, 0)
                hi = np.minimum(index + margins, image_shape)
                occluded = image.copy()
                occluded[(...,) + tuple(slice(a, b) for a, b in zip(lo, hi))] = self.pad_val
                batch.append(occluded)
            scores.append(model(Tensor(np.concatenate(batch))).asnumpy()[:, label])
        self._sensitivity_im = np.concatenate(scores).reshape(out_shape)
        self._is_update = True

    def eval(self) -> np.ndarray:
        """The sensitivity map ``baseline - occluded score``, squeezed.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        self._check_updated()
        return self._baseline - np.squeeze(self._sensitivity_im)
