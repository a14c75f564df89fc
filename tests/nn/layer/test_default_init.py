"""Default initializers of Dense and the convolutions follow MindSpore 2.x: weight HeUniform(a=sqrt(5)) over
fan_in, i.e. U(-b, b) with b = sqrt(2 / (1 + 5)) * sqrt(3 / fan_in) = 1 / sqrt(fan_in); bias
U(-1/sqrt(fan_in), 1/sqrt(fan_in)). Checked against that formula: bounds, spread and mean."""
import math

import numpy as np
import pytest

from aotnn import nn

# (layer, fan_in written out by hand from MindSpore's weight layout)
CASES = [
    (lambda: nn.Dense(300, 200), 300),
    (lambda: nn.Conv1d(12, 128, 5, has_bias=True), 12 * 5),
    (lambda: nn.Conv2d(16, 64, 3, has_bias=True), 16 * 3 * 3),
    (lambda: nn.Conv2d(16, 256, 3, group=4, has_bias=True), 4 * 3 * 3),
    (lambda: nn.Conv3d(4, 64, 3, has_bias=True), 4 * 27),
    # transposed: the weight is (in, out/group, k...), fan_in is its dim 1 times the kernel
    (lambda: nn.Conv1dTranspose(128, 12, 5, has_bias=True), 12 * 5),
    (lambda: nn.Conv2dTranspose(128, 8, 3, has_bias=True), 8 * 9),
    (lambda: nn.Conv3dTranspose(64, 4, 3, has_bias=True), 4 * 27),
]


def _uniform_checks(values: np.ndarray, bound: float) -> None:
    assert np.abs(values).max() <= bound * (1 + 1e-6)
    # U(-b, b): std b/sqrt(3); with >= 5000 samples the estimate is within a few percent
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.06)
    assert abs(values.mean()) < 0.05 * bound
    assert np.abs(values).max() > 0.9 * bound   # really spread to the bound, not a narrower law


@pytest.mark.parametrize("make, fan_in", CASES)
def test_default_weight_is_he_uniform_sqrt5(make, fan_in):
    layer = make()
    assert layer.weight.size >= 5000
    _uniform_checks(layer.weight.asnumpy().ravel(), 1 / math.sqrt(fan_in))


def test_default_bias_is_uniform_over_fan_in():
    # many small layers: enough bias samples for the spread check
    dense = np.concatenate([nn.Dense(50, 200).bias.asnumpy() for _ in range(30)])
    _uniform_checks(dense, 1 / math.sqrt(50))
    conv = np.concatenate([nn.Conv2d(6, 100, 3, has_bias=True).bias.asnumpy() for _ in range(60)])
    _uniform_checks(conv, 1 / math.sqrt(6 * 9))
    transposed = np.concatenate([nn.Conv2dTranspose(100, 5, 2, has_bias=True).bias.asnumpy() for _ in range(1200)])
    _uniform_checks(transposed, 1 / math.sqrt(5 * 4))


def test_explicit_initializers_still_apply():
    assert np.all(nn.Dense(4, 3, weight_init="zeros", bias_init="ones").bias.asnumpy() == 1)
    normal = nn.Dense(200, 100, weight_init="normal").weight.asnumpy()
    assert normal.std() == pytest.approx(0.01, rel=0.05)   # 'normal': N(0, 0.01)
    conv = nn.Conv2d(3, 4, 3, has_bias=True, weight_init="ones")
    assert np.all(conv.weight.asnumpy() == 1)
    assert np.abs(conv.bias.asnumpy()).max() <= 1 / math.sqrt(27)
