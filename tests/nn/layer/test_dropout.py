"""Dropout: identity in inference, Bernoulli masks scaled by 1/keep_prob in training, seeded by set_seed."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn


def test_identity_until_set_train():
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    net = nn.Dropout(keep_prob=0.5)
    assert not net.training
    np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), x)
    net.set_train(False)
    np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), x)


@pytest.mark.parametrize("kwargs,keep", [(dict(keep_prob=0.8), 0.8), (dict(p=0.3), 0.7), ({}, 0.5), (dict(p=0), 1.0)])
def test_training_keeps_the_right_fraction_and_scales(kwargs, keep):
    aotnn.set_seed(0)
    x = np.full((64, 125), 2.0, np.float32)  # 8000 samples
    net = nn.Dropout(**kwargs)
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    kept = out != 0
    # values are either dropped or scaled by 1 / keep
    np.testing.assert_allclose(out[kept], 2.0 / keep, rtol=1e-6)
    # binomial fraction: 5 standard deviations
    tolerance = 5 * np.sqrt(keep * (1 - keep) / x.size) + 1e-9
    assert abs(kept.mean() - keep) <= tolerance
    assert abs(out.mean() - 2.0) <= 2.0 * tolerance / keep


def test_masks_change_per_call_and_replay_under_set_seed():
    x = Tensor(np.ones((3, 50), np.float32))
    net = nn.Dropout(p=0.5).set_train()
    aotnn.set_seed(7)
    first, second = net(x).asnumpy(), net(x).asnumpy()
    aotnn.set_seed(7)
    again_first, again_second = net(x).asnumpy(), net(x).asnumpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(first, again_first)
    np.testing.assert_array_equal(second, again_second)


def test_float16_and_inside_a_network():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(keep_prob=0.25)

        def construct(self, x):
            return self.drop(x) * 2

    aotnn.set_seed(1)
    net = Net()
    x = np.ones((40, 50), np.float16)
    np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), x * 2)  # set_train not called yet
    out = net.set_train()(Tensor(x)).asnumpy()
    assert out.dtype == np.float16
    assert set(np.unique(out).tolist()) <= {0.0, 8.0}
    assert abs((out != 0).mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / x.size)


def test_documented_example_and_repr():
    x = Tensor(np.ones([2, 2, 3]), aotnn.float32)
    net = nn.Dropout(keep_prob=0.8)
    net.set_train()
    assert net(x).shape == (2, 2, 3)
    assert repr(net) == "Dropout(keep_prob=0.8)"
    assert repr(nn.Dropout(p=0.2)) == "Dropout(p=0.2)"


@pytest.mark.parametrize("kwargs,error", [
    (dict(keep_prob=0.5, p=0.5), ValueError),
    (dict(keep_prob=1), TypeError),
    (dict(keep_prob=0.0), ValueError),
    (dict(keep_prob=1.5), ValueError),
    (dict(p="0.5"), TypeError),
    (dict(p=1.0), ValueError),
    (dict(p=-0.1), ValueError),
])
def test_invalid_arguments(kwargs, error):
    with pytest.raises(error):
        nn.Dropout(**kwargs)


def test_invalid_inputs():
    net = nn.Dropout(p=0.5)
    with pytest.raises(TypeError, match="float16 or float32"):
        net(Tensor(np.ones((2, 2), np.int32)))
    with pytest.raises(ValueError, match="rank"):
        net(Tensor(np.float32(1.0)))
