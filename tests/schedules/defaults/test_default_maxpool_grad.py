"""Gradient of max pooling against PyTorch, ties included: windows that tile the input take the
broadcast-select rule of ``relay_frontend/gradients.py``, overlapping or padded ones TVM's."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, t

# (kernel, stride, pad_mode, input shape): windows that tile the input, overlap, or reach into padding
CASES = {
    "2x2_stride2_tiling": (2, 2, "valid", (2, 3, 8, 8)),
    "2x2_stride2_odd_size": (2, 2, "valid", (2, 3, 9, 9)),
    "3x3_stride2_same_overlapping": (3, 2, "same", (2, 3, 9, 9)),
    "2x2_stride1_overlapping": (2, 1, "valid", (1, 2, 5, 5)),
    "2x2_stride2_same_padded": (2, 2, "same", (1, 1, 7, 7)),
}


class Objective(nn.Cell):
    def __init__(self, pool, r):
        super().__init__()
        self.pool = pool
        self.r = Tensor(r)

    def construct(self, x):
        return (self.pool(x) * self.r).sum()


def _same_pads(size: int, kernel: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_max_pool2d_gradient_matches_torch(case):
    k, s, mode, shape = CASES[case]
    rng = np.random.default_rng(len(case))
    x = (rng.integers(-3, 4, shape) * 0.5 + 0.25).astype(np.float32)  # few levels: many tied maxima
    pool = nn.MaxPool2d(k, s, pad_mode=mode)
    xt = t(x).requires_grad_()
    (top, bottom), (left, right) = ((0, 0), (0, 0)) if mode == "valid" else (
        _same_pads(shape[2], k, s), _same_pads(shape[3], k, s))
    y = F.max_pool2d(F.pad(xt, (left, right, top, bottom), value=float("-inf")), k, s)
    r = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * t(r)).sum().backward()
    assert_close(ops.grad(Objective(pool, r), 0)(Tensor(x)), xt.grad)
