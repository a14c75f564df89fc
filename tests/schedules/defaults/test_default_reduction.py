"""Pooling, channel means, softmax and layer norm under the default schedules, against PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, randomize, rules_used, t


class ConvPoolMean(nn.Cell):
    """Pooling and means on a channels-last feature map (after a convolution)."""

    def __init__(self, pool):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, pad_mode="pad", padding=1)
        self.pool = pool

    def construct(self, x):
        y = self.pool(self.conv(x))
        return y, ops.mean(y, (2, 3), True), ops.mean(y, (2, 3), False)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pools_and_means_after_conv(kind):
    pool = nn.MaxPool2d(3, 2, pad_mode="same") if kind == "max" else nn.AvgPool2d(2, 2)
    net = randomize(ConvPoolMean(pool), seed=1)
    x = np.random.default_rng(2).standard_normal((2, 3, 15, 15)).astype(np.float32)
    y = F.conv2d(t(x), t(net.conv.weight.asnumpy()), None, 1, 1)
    if kind == "max":
        y = F.max_pool2d(F.pad(y, (1, 1, 1, 1), value=-np.inf), 3, 2)  # 'same' for 15 -> 8: one pixel each side
    else:
        y = F.avg_pool2d(y, 2, 2)
    pooled, kept, flat = net(Tensor(x))
    assert_close(pooled, y)
    assert_close(kept, y.mean((2, 3), keepdim=True))
    assert_close(flat, y.mean((2, 3)))
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert "reduction" in rules.values(), rules


def test_pool_on_nchw_input():
    x = np.random.default_rng(3).standard_normal((1, 5, 9, 9)).astype(np.float32)
    assert_close(nn.MaxPool2d(2, 2)(Tensor(x)), F.max_pool2d(t(x), 2, 2))


@pytest.mark.parametrize("shape,axis", [((4, 33), -1), ((2, 3, 17), 1)])
def test_softmax(shape, axis):
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    assert_close(nn.Softmax(axis)(Tensor(x)), torch.softmax(t(x), axis))


def test_layer_norm_rows():
    net = randomize(nn.LayerNorm((24,), epsilon=1e-5), seed=5)
    x = np.random.default_rng(6).standard_normal((3, 7, 24)).astype(np.float32)
    want = F.layer_norm(t(x), (24,), t(net.gamma.asnumpy()), t(net.beta.asnumpy()), 1e-5)
    assert_close(net(Tensor(x)), want)


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_along_an_inner_axis_runs_on_the_rows_rule(axis):
    """Softmax along a non-last axis is moved to the last axis (TVM's own kernel re-reduces per
    output element: seconds for an attention-pooling map) and matches PyTorch."""
    x = np.random.default_rng(7).standard_normal((3, 96, 40)).astype(np.float32)
    assert_close(nn.Softmax(axis)(Tensor(x)), torch.softmax(t(x), axis))
    assert_close(nn.LogSoftmax(axis)(Tensor(x)), torch.log_softmax(t(x), axis))
    rules = rules_used(lambda v: nn.Softmax(axis)(v), [("x", x.shape, "float32")])
    # the rows rule reduces fast along the last axis only: the axis is moved there (a transpose)
    assert rules.get("softmax") == "rows" and any(name.startswith("transpose") for name in rules), rules
