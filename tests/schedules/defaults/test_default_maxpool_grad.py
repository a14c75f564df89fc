"""Gradient of max pooling against PyTorch, ties included: windows that tile the input take the
broadcast-select rule of ``relay_frontend/gradients.py``; overlapping or padded ones TVM's
``max_pool2d_backward``, which the default schedules replace by two channels-last gather kernels
(``schedules/defaults/pool_grad.py``)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, rules_used, t

# (kernel, stride, pad_mode, input shape): windows that tile the input, overlap, or reach into padding
CASES = {
    "2x2_stride2_tiling": (2, 2, "valid", (2, 3, 8, 8)),
    "2x2_stride2_odd_size": (2, 2, "valid", (2, 3, 9, 9)),
    "3x3_stride2_same_overlapping": (3, 2, "same", (2, 3, 9, 9)),
    "2x2_stride1_overlapping": (2, 1, "valid", (1, 2, 5, 5)),
    "2x2_stride2_same_padded": (2, 2, "same", (1, 1, 7, 7)),
    "3x3_stride2_pad1_resnet_stem": (3, 2, 1, (2, 16, 10, 10)),
    "3x3_stride2_pad1_odd_channels": (3, 2, 1, (1, 5, 7, 9)),
    "3x3_stride1_pad1": (3, 1, 1, (1, 3, 6, 6)),
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
    xt = t(x).requires_grad_()
    if isinstance(mode, int):  # explicit padding on every side
        pool = nn.MaxPool2d(k, s, pad_mode="pad", padding=mode)
        (top, bottom), (left, right) = (mode, mode), (mode, mode)
    else:
        pool = nn.MaxPool2d(k, s, pad_mode=mode)
        (top, bottom), (left, right) = ((0, 0), (0, 0)) if mode == "valid" else (
            _same_pads(shape[2], k, s), _same_pads(shape[3], k, s))
    y = F.max_pool2d(F.pad(xt, (left, right, top, bottom), value=float("-inf")), k, s)
    r = rng.standard_normal(tuple(y.shape)).astype(np.float32)
    (y * t(r)).sum().backward()
    assert_close(ops.grad(Objective(pool, r), 0)(Tensor(x)), xt.grad)


def test_overlapping_pool_gradient_runs_on_gather_kernels(cpu_target):
    """ResNet's stem pool (3x3, stride 2, padding 1): its gradient is the argmax and gather kernels,
    each scheduled by the element-wise rule, and no legalized ``max_pool2d_backward`` is left."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 16, 10, 10)).astype(np.float32)
    r = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    grad_fn = ops.grad(Objective(nn.MaxPool2d(3, 2, pad_mode="pad", padding=1), r), 0)
    xt = t(x).requires_grad_()
    (F.max_pool2d(xt, 3, 2, 1) * t(r)).sum().backward()
    assert_close(grad_fn(Tensor(x)), xt.grad)
    rules = rules_used(lambda v: grad_fn(v), [("x", x.shape, "float32")])
    assert not [name for name in rules if "max_pool2d_backward" in name], rules
    gathers = [name for name in rules if "aotnn_pool_argmax" in name or "aotnn_pool_grad" in name]
    assert len(gathers) == 2 and all(rules[name] == "elementwise" for name in gathers), rules


def test_tiling_pool_gradient_runs_on_gather_kernels(cpu_target):
    """LeNet's 2x2/2 pool after a relu: the gradient rule's broadcast select is replaced by the same
    argmax and gather kernels (channels-last); ties go to the window's first maximum, as PyTorch's."""
    rng = np.random.default_rng(11)
    x = (rng.integers(-3, 4, (2, 6, 8, 12)) * 0.5 + 0.25).astype(np.float32)  # many tied maxima
    r = rng.standard_normal((2, 6, 4, 6)).astype(np.float32)
    net = nn.SequentialCell([nn.ReLU(), nn.MaxPool2d(2, 2)])
    grad_fn = ops.grad(Objective(net, r), 0)
    xt = t(x).requires_grad_()
    (F.max_pool2d(F.relu(xt), 2, 2) * t(r)).sum().backward()
    assert_close(grad_fn(Tensor(x)), xt.grad)
    rules = rules_used(lambda v: grad_fn(v), [("x", x.shape, "float32")])
    gathers = [name for name in rules if "aotnn_pool_argmax" in name or "aotnn_pool_grad" in name]
    assert len(gathers) == 2 and all(rules[name] == "elementwise" for name in gathers), rules
