"""Reductions along the contiguous axis whose body is an element-wise expression of several inputs
(``schedules/defaults/inner_reduction.py``: ECAPA-TDNN's attentive statistics pooling), against numpy,
for an AVX2 and an AVX-512 target."""
import numpy as np
import pytest

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, rules_used
from schedules.defaults.inner_reduction import vector_factor


class WeightedStatistics(nn.Cell):
    """Weighted mean and variance along the last axis, a product summed over the last two axes and
    one summed over all."""

    def construct(self, x, w):
        mean = ops.sum(x * w, -1)
        variance = ops.sum(w * (x - ops.expand_dims(mean, -1)) ** 2, -1)
        return mean, variance, ops.sum(x * w - w, (1, 2)), ops.sum(x * x * w)


def _numpy(x, w):
    mean = (x * w).sum(-1)
    variance = (w * (x - mean[..., None]) ** 2).sum(-1)
    return mean, variance, (x * w - w).sum((1, 2)), (x * x * w).sum()


# 64: four AVX2 / AVX-512 vectors of partial sums; 50 and 13: no multiple of a vector divides them
@pytest.mark.parametrize("shape", [(2, 24, 64), (1, 40, 50), (3, 5, 13)])
def test_weighted_statistics_on_the_inner_reduction_rule(cpu_target, shape):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.random(shape).astype(np.float32)
    net = WeightedStatistics()
    got = net(Tensor(x), Tensor(w))
    for value, want in zip(got, _numpy(x.astype(np.float64), w.astype(np.float64))):
        assert_close(value, want)
    rules = rules_used(lambda a, b: net(a, b), [("x", shape, "float32"), ("w", shape, "float32")])
    assert len(rules) == 4 and set(rules.values()) == {"inner_reduction"}, rules


@pytest.mark.parametrize("size,lanes,want", [(200, 16, 40), (200, 8, 8), (64, 16, 64), (96, 16, 32),
                                             (13, 8, 13), (74, 8, 2), (37, 8, 1)])
def test_vector_factor(size, lanes, want):
    assert vector_factor(size, lanes) == want


class ScalarMean(nn.Cell):
    """A mean over everything: the sum is followed by a loopless divide in the same kernel."""

    def construct(self, x):
        return ops.mean(x)


@pytest.mark.parametrize("shape", [(4,), (4, 8), (3, 50)])
def test_scalar_mean_on_the_inner_reduction_rule(cpu_target, shape):
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    assert_close(ScalarMean()(Tensor(x)), x.astype(np.float64).mean())
    rules = rules_used(lambda a: ScalarMean()(a), [("x", shape, "float32")])
    assert set(rules.values()) == {"inner_reduction"}, rules
