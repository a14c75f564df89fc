"""CosineSimilarity."""
from __future__ import annotations

import numpy as np

from .metric import Metric, check_choice, check_type, rearrange_inputs

__all__ = ['CosineSimilarity']


class CosineSimilarity(Metric):
    """Pairwise similarity of the rows of a matrix.

    Args:
        similarity (str): 'cosine' (rows normalised first) or 'dot'. Default: 'cosine'.
        reduction (str): 'none' (the :math:`(N, N)` matrix), 'sum' or 'mean' (over each row).
            Default: 'none'.
        zero_diagonal (bool): set the diagonal (each row with itself) to 0. Default: True.

    Raises:
        TypeError: arguments of the wrong type.
        ValueError: ``similarity`` or ``reduction`` not one of the listed values.

    Examples:
        >>> test_data = np.array([[1, 3, 4, 7], [2, 4, 2, 5], [3, 1, 5, 8]])
        >>> metric = nn.CosineSimilarity()
        >>> metric.update(test_data)
        >>> metric.eval()
        [[0.         0.94025615 0.95162452]
         [0.94025615 0.         0.86146098]
         [0.95162452 0.86146098 0.        ]]
    """

    def __init__(self, similarity: str = 'cosine', reduction: str = 'none', zero_diagonal: bool = True):
        super().__init__()
        name = 'CosineSimilarity'
        self.similarity = check_choice(similarity, 'similarity', ('dot', 'cosine'), name)
        self.reduction = check_choice(reduction, 'reduction', ('none', 'sum', 'mean'), name)
        self.zero_diagonal = check_type(zero_diagonal, 'zero_diagonal', (bool,), name)
        self.clear()

    def clear(self) -> None:
        """Forget the last matrix."""
        self.sqr_mtx_res = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, inputs) -> None:
        """Compute the similarities of the rows of ``inputs`` :math:`(N, D)` (replaces earlier ones)."""
        data = self._convert_data(inputs).astype(np.float64)
        if self.similarity == 'cosine':
            data = data / np.linalg.norm(data, ord=2, axis=1, keepdims=True)
        self.sqr_mtx_res = data @ data.T
        self._is_update = True

    def eval(self) -> np.ndarray:
        """The similarity matrix, or its per-row sum or mean.

        Raises:
            RuntimeError: ``update`` was never called.
        """
        self._check_updated()
        result = np.array(self.sqr_mtx_res, copy=True)
        if self.zero_diagonal:
            np.fill_diagonal(result, 0)
        if self.reduction == 'mean':
            return result.mean(axis=-1)
        if self.reduction == 'sum':
            return result.sum(axis=-1)
        return result
