"""The dynamic_lr functions against their documented formulas and the docstring examples' printed lists."""
from __future__ import annotations

import math

import numpy as np
import pytest

from aotnn import nn


def test_docstring_examples_print_the_documented_lists():
    assert nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01,
                                                                       0.01, 0.01]
    assert nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1) == [0.1, 0.1, 0.09000000000000001, 0.09000000000000001,
                                                          0.08100000000000002, 0.08100000000000002]
    assert nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True) == [0.1, 0.1, 0.1, 0.1, 0.016529888822158657,
                                                                0.016529888822158657]
    assert nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True) == [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333,
                                                            0.028571428571428574]
    assert nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2) == [0.1, 0.1, 0.05500000000000001, 0.05500000000000001, 0.01, 0.01]
    assert nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5) == [0.1, 0.1, 0.07363961030678928, 0.07363961030678928,
                                                               0.01, 0.01]
    assert nn.warmup_lr(0.1, 6, 2, 2) == [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]


def epochs(total, per_epoch):
    return np.arange(total) // per_epoch


@pytest.mark.parametrize("total, per_epoch, decay_epoch", [(13, 3, 2), (7, 1, 3)])
def test_decays_match_formulas(total, per_epoch, decay_epoch):
    e = epochs(total, per_epoch)
    lr, rate = 0.2, 0.7
    np.testing.assert_allclose(nn.exponential_decay_lr(lr, rate, total, per_epoch, decay_epoch),
                               lr * rate ** (e / decay_epoch), rtol=1e-12)
    np.testing.assert_allclose(nn.exponential_decay_lr(lr, rate, total, per_epoch, decay_epoch, True),
                               lr * rate ** np.floor(e / decay_epoch), rtol=1e-12)
    np.testing.assert_allclose(nn.natural_exp_decay_lr(lr, rate, total, per_epoch, decay_epoch),
                               lr * np.exp(-rate * e), rtol=1e-12)
    np.testing.assert_allclose(nn.natural_exp_decay_lr(lr, rate, total, per_epoch, decay_epoch, True),
                               lr * np.exp(-rate * (e // decay_epoch) * decay_epoch), rtol=1e-12)
    np.testing.assert_allclose(nn.inverse_decay_lr(lr, rate, total, per_epoch, decay_epoch),
                               lr / (1 + rate * e / decay_epoch), rtol=1e-12)
    np.testing.assert_allclose(nn.inverse_decay_lr(lr, rate, total, per_epoch, decay_epoch, True),
                               lr / (1 + rate * np.floor(e / decay_epoch)), rtol=1e-12)
    done = np.minimum(e, decay_epoch)
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, lr, total, per_epoch, decay_epoch),
                               0.01 + 0.5 * (lr - 0.01) * (1 + np.cos(np.pi * done / decay_epoch)), rtol=1e-12)
    np.testing.assert_allclose(nn.polynomial_decay_lr(lr, 0.01, total, per_epoch, decay_epoch, 2.0),
                               (lr - 0.01) * (1 - done / decay_epoch) ** 2.0 + 0.01, rtol=1e-12)
    period = decay_epoch * np.maximum(np.ceil(e / decay_epoch), 1)
    np.testing.assert_allclose(nn.polynomial_decay_lr(lr, 0.01, total, per_epoch, decay_epoch, 0.5, True),
                               (lr - 0.01) * (1 - e / period) ** 0.5 + 0.01, rtol=1e-12)
    np.testing.assert_allclose(nn.warmup_lr(lr, total, per_epoch, decay_epoch), lr * done / decay_epoch, rtol=1e-12)
    for fn in (nn.exponential_decay_lr, nn.natural_exp_decay_lr, nn.inverse_decay_lr):
        assert len(fn(lr, rate, total, per_epoch, decay_epoch)) == total


def test_piecewise_constant_with_repeated_milestones():
    assert nn.piecewise_constant_lr((2, 2, 5), [0.1, 0.2, 0.3]) == [0.1, 0.1, 0.3, 0.3, 0.3]


def test_invalid_arguments():
    with pytest.raises(TypeError, match="learning_rate"):
        nn.exponential_decay_lr(1, 0.9, 6, 2, 1)  # an int where a float is documented
    with pytest.raises(TypeError, match="learning_rate"):
        nn.exponential_decay_lr(True, 0.9, 6, 2, 1)
    with pytest.raises(ValueError, match="learning_rate"):
        nn.natural_exp_decay_lr(-0.1, 0.9, 6, 2, 1)
    with pytest.raises(ValueError, match="decay_rate"):
        nn.inverse_decay_lr(0.1, 0.0, 6, 2, 1)
    with pytest.raises(ValueError, match="total_step"):
        nn.exponential_decay_lr(0.1, 0.9, 0, 2, 1)
    with pytest.raises(TypeError, match="total_step"):
        nn.exponential_decay_lr(0.1, 0.9, 6.0, 2, 1)
    with pytest.raises(TypeError, match="step_per_epoch"):
        nn.inverse_decay_lr(0.1, 0.9, 6, True, 1)
    with pytest.raises(TypeError, match="is_stair"):
        nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1, 1)
    with pytest.raises(ValueError, match="size"):
        nn.piecewise_constant_lr([2, 5], [0.1, 0.05, 0.01])
    with pytest.raises(ValueError, match="milestone"):
        nn.piecewise_constant_lr([5, 2], [0.1, 0.05])
    with pytest.raises(ValueError, match="milestone"):
        nn.piecewise_constant_lr([0, 5], [0.1, 0.1])
    with pytest.raises(TypeError, match="learning_rates"):
        nn.piecewise_constant_lr([2, 5], [0.1, 1])
    with pytest.raises(TypeError, match="milestone"):
        nn.piecewise_constant_lr(5, [0.1])
    with pytest.raises(TypeError, match="min_lr"):
        nn.cosine_decay_lr(0, 0.1, 6, 2, 2)
    with pytest.raises(ValueError, match="min_lr"):
        nn.cosine_decay_lr(-0.1, 0.1, 6, 2, 2)
    with pytest.raises(ValueError, match="max_lr"):
        nn.cosine_decay_lr(0.2, 0.1, 6, 2, 2)
    with pytest.raises(TypeError, match="end_learning_rate"):
        nn.polynomial_decay_lr(0.1, 0, 6, 2, 2, 0.5)
    with pytest.raises(TypeError, match="power"):
        nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 1)
    with pytest.raises(TypeError, match="update_decay_epoch"):
        nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5, 1)
    with pytest.raises(TypeError, match="learning_rate"):
        nn.warmup_lr(0, 6, 2, 2)
    with pytest.raises(ValueError, match="warmup_epoch"):
        nn.warmup_lr(0.1, 6, 2, 0)
    assert nn.warmup_lr(0.0, 3, 1, 1) == [0.0, 0.0, 0.0]
    assert math.isclose(nn.cosine_decay_lr(0.0, 0.1, 3, 1, 2)[-1], 0.0, abs_tol=1e-18)
