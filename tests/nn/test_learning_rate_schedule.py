"""LearningRateSchedule cells against their documented formulas (float64 numpy), for scalar and
optimizer-style (1,) int32 steps."""
from __future__ import annotations

import math

import numpy as np
import pytest

import aotnn as ms
from aotnn import Tensor, nn

STEPS = [0, 1, 2, 5, 9]


def rates(schedule, steps=STEPS, shape=()):
    """The schedule's rate at each step; each call returns a float32 tensor of the step's shape."""
    out = []
    for step in steps:
        lr = schedule(Tensor(np.full(shape, step, np.int32)))
        assert lr.dtype == ms.float32 and lr.shape == shape
        out.append(float(lr.asnumpy().reshape(-1)[0]))
    return np.array(out)


def formula_cases():
    s = np.array(STEPS, np.float64)
    lr, rate, n = 0.1, 0.9, 4
    return {
        "exponential": (nn.ExponentialDecayLR(lr, rate, n), lr * rate ** (s / n)),
        "exponential_stair": (nn.ExponentialDecayLR(lr, rate, n, True), lr * rate ** np.floor(s / n)),
        "natural_exp": (nn.NaturalExpDecayLR(lr, rate, n), lr * np.exp(-rate * s)),
        "natural_exp_stair": (nn.NaturalExpDecayLR(lr, rate, n, True), lr * np.exp(-rate * np.floor(s / n) * n)),
        "inverse": (nn.InverseDecayLR(lr, rate, n), lr / (1 + rate * s / n)),
        "inverse_stair": (nn.InverseDecayLR(lr, rate, n, True), lr / (1 + rate * np.floor(s / n))),
        "cosine": (nn.CosineDecayLR(0.01, lr, n),
                   0.01 + 0.5 * (lr - 0.01) * (1 + np.cos(np.pi * np.minimum(s, n) / n))),
        "polynomial": (nn.PolynomialDecayLR(lr, 0.01, n, 0.5), (lr - 0.01) * (1 - np.minimum(s, n) / n) ** 0.5 + 0.01),
        "polynomial_update": (nn.PolynomialDecayLR(lr, 0.01, n, 2.0, True),
                              (lr - 0.01) * (1 - s / (n * np.maximum(np.ceil(s / n), 1))) ** 2.0 + 0.01),
        "warmup": (nn.WarmUpLR(lr, 2), lr * np.minimum(s, 2) / 2),
    }


@pytest.mark.parametrize("name", list(formula_cases()))
def test_schedule_matches_formula(name):
    schedule, expected = formula_cases()[name]
    np.testing.assert_allclose(rates(schedule), expected, rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(rates(schedule, STEPS[-2:], (1,)), expected[-2:], rtol=2e-6, atol=1e-9)


def test_docstring_example_values():
    step = Tensor(2, ms.int32)
    assert math.isclose(float(nn.CosineDecayLR(0.01, 0.1, 4)(step)), 0.055, rel_tol=1e-6)
    assert math.isclose(float(nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5)(step)), 0.07363961, rel_tol=1e-6)
    assert math.isclose(float(nn.WarmUpLR(0.1, 2)(step)), 0.1, rel_tol=1e-6)
    assert math.isclose(float(nn.ExponentialDecayLR(0.1, 0.9, 4)(step)), 0.1 * 0.9 ** 0.5, rel_tol=1e-6)
    # a Python int step works too
    assert math.isclose(float(nn.InverseDecayLR(0.1, 0.9, 4, True)(5)), 0.1 / 1.9, rel_tol=1e-6)


def test_base_class_requires_construct():
    assert issubclass(nn.CosineDecayLR, nn.LearningRateSchedule)
    with pytest.raises(NotImplementedError):
        nn.LearningRateSchedule().construct(Tensor(1, ms.int32))


def test_invalid_arguments():
    with pytest.raises(TypeError, match="learning_rate"):
        nn.ExponentialDecayLR(1, 0.9, 4)
    with pytest.raises(ValueError, match="decay_steps"):
        nn.NaturalExpDecayLR(0.1, 0.9, 0)
    with pytest.raises(TypeError, match="decay_steps"):
        nn.InverseDecayLR(0.1, 0.9, 4.0)
    with pytest.raises(ValueError, match="decay_rate"):
        nn.ExponentialDecayLR(0.1, -0.9, 4)
    with pytest.raises(TypeError, match="is_stair"):
        nn.ExponentialDecayLR(0.1, 0.9, 4, 1)
    with pytest.raises(TypeError, match="min_lr"):
        nn.CosineDecayLR(0, 0.1, 4)
    with pytest.raises(ValueError, match="max_lr"):
        nn.CosineDecayLR(0.1, 0.1, 4)
    with pytest.raises(ValueError, match="min_lr"):
        nn.CosineDecayLR(-0.1, 0.1, 4)
    with pytest.raises(TypeError, match="power"):
        nn.PolynomialDecayLR(0.1, 0.01, 4, 1)
    with pytest.raises(TypeError, match="end_learning_rate"):
        nn.PolynomialDecayLR(0.1, 0, 4, 0.5)
    with pytest.raises(TypeError, match="update_decay_steps"):
        nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5, 0)
    with pytest.raises(TypeError, match="learning_rate"):
        nn.WarmUpLR(1, 2)
    with pytest.raises(ValueError, match="warmup_steps"):
        nn.WarmUpLR(0.1, 0)
