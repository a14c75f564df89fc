"""NaN and infinities through max/min-based ops and transcendentals, against PyTorch (CPU).

TVM's code computes ``max(a, b)`` as ``a > b ? a : b``, which drops a NaN in ``a``: ReLU, clip,
maximum and every max/min reduction (pooling, ReduceMax) turned NaN inputs into finite outputs
(schedules/nan_propagation.py). argmax/argmin put the first NaN first, as PyTorch does
(relay_frontend/ops/reduce.py).
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops

NAN, INF = np.nan, np.inf


def special_rows() -> np.ndarray:
    """(6, 8) float32: NaN first / in the middle / last, +inf and -inf without NaN, NaN beside +-inf."""
    return np.array([
        [NAN, 1.5, -2.0, 0.0, 7.0, -0.5, 3.0, 2.0],
        [1.5, -2.0, 0.0, NAN, 7.0, -0.5, 3.0, 2.0],
        [1.5, -2.0, 0.0, 7.0, -0.5, 3.0, 2.0, NAN],
        [1.5, INF, 0.0, 7.0, -0.5, 3.0, 2.0, -1.0],
        [1.5, -INF, 0.0, 7.0, -0.5, 3.0, -2.0, -1.0],
        [INF, -INF, NAN, 7.0, -0.5, NAN, -2.0, -1.0],
    ], np.float32)


X = special_rows()
T = torch.tensor(X)


def same(actual, expected):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True)


ZEROS = np.zeros_like(X)

ELEMENTWISE = {
    "relu": (lambda x: ops.relu(x), F.relu),
    "ReLU": (lambda x: nn.ReLU()(x), F.relu),
    "relu6": (lambda x: ops.relu6(x), F.relu6),
    "hardtanh": (lambda x: ops.hardtanh(x, -1.0, 1.0), lambda t: F.hardtanh(t, -1.0, 1.0)),
    "clip": (lambda x: ops.clip(x, -1.0, 1.0), lambda t: torch.clamp(t, -1.0, 1.0)),
    "maximum_data_first": (lambda x: ops.maximum(x, Tensor(ZEROS)), lambda t: torch.maximum(t, torch.zeros_like(t))),
    "maximum_data_second": (lambda x: ops.maximum(Tensor(ZEROS), x), lambda t: torch.maximum(torch.zeros_like(t), t)),
    "minimum_data_first": (lambda x: ops.minimum(x, Tensor(ZEROS)), lambda t: torch.minimum(t, torch.zeros_like(t))),
    "minimum_data_second": (lambda x: ops.minimum(Tensor(ZEROS), x), lambda t: torch.minimum(torch.zeros_like(t), t)),
    "maximum_both_data": (lambda x: ops.maximum(x, Tensor(X[::-1].copy())),
                          lambda t: torch.maximum(t, torch.flip(t, [0]))),
    "hsigmoid": (lambda x: ops.hardsigmoid(x), F.hardsigmoid),
    "elu": (lambda x: ops.elu(x), F.elu),
    "exp": (lambda x: ops.exp(x), torch.exp),
    "tanh": (lambda x: ops.tanh(x), torch.tanh),
    "sigmoid": (lambda x: ops.sigmoid(x), torch.sigmoid),
    "erf": (lambda x: ops.erf(x), torch.erf),
    "silu": (lambda x: ops.silu(x), F.silu),
    "gelu_tanh": (lambda x: nn.GELU(approximate=True)(x), lambda t: F.gelu(t, approximate="tanh")),
    # PyTorch's vectorized float32 GELU answers NaN for +inf (its scalar and float64 code: +inf,
    # as MindSpore does): the reference is computed in float64
    "gelu": (lambda x: nn.GELU(approximate=False)(x), lambda t: F.gelu(t.double()).float()),
    "softmax": (lambda x: ops.softmax(x, -1), lambda t: F.softmax(t, -1)),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_ops_give_pytorchs_nan_and_inf(name):
    mine, reference = ELEMENTWISE[name]
    same(mine(Tensor(X)), reference(T))


@pytest.mark.parametrize("name, mine, reference", [
    ("amax", lambda x: ops.amax(x, 1), lambda t: torch.amax(t, 1)),
    ("amin", lambda x: ops.amin(x, 1), lambda t: torch.amin(t, 1)),
    ("ReduceMax", lambda x: ops.ReduceMax(keep_dims=True)(x, 1), lambda t: torch.amax(t, 1, keepdim=True)),
    ("ReduceMin_axis0", lambda x: ops.ReduceMin()(x, 0), lambda t: torch.amin(t, 0)),
    ("argmax", lambda x: ops.argmax(x, 1), lambda t: torch.argmax(t, 1)),
    ("argmin", lambda x: ops.argmin(x, 1), lambda t: torch.argmin(t, 1)),
    ("argmax_flat", lambda x: ops.argmax(x), lambda t: torch.argmax(t)),
    ("argmin_axis0", lambda x: ops.argmin(x, 0), lambda t: torch.argmin(t, 0)),
])
def test_reductions_put_nan_first(name, mine, reference):
    same(mine(Tensor(X)), reference(T))


def test_argmax_without_nan_is_unchanged():
    finite = np.array([[3.0, 1.0, 3.0, -INF], [INF, 2.0, INF, 0.0]], np.float32)
    same(ops.argmax(Tensor(finite), 1), torch.argmax(torch.tensor(finite), 1))
    same(ops.argmin(Tensor(finite), 1), torch.argmin(torch.tensor(finite), 1))


PLANES = X.reshape(1, 3, 4, 4)


def test_max_pool_propagates_nan():
    same(nn.MaxPool2d(2, 2)(Tensor(PLANES)), F.max_pool2d(torch.tensor(PLANES), 2, 2))
    same(nn.MaxPool2d(3, 1, pad_mode="same")(Tensor(PLANES)), F.max_pool2d(torch.tensor(PLANES), 3, 1, padding=1))


def test_max_pool_indices_point_at_the_nan():
    values, indices = ops.max_pool2d(Tensor(PLANES), 2, 2, return_indices=True)
    expected, expected_indices = F.max_pool2d(torch.tensor(PLANES), 2, 2, return_indices=True)
    same(values, expected)
    same(indices, expected_indices)


def test_adaptive_max_pool_propagates_nan():
    same(nn.AdaptiveMaxPool2d((3, 2))(Tensor(PLANES)), F.adaptive_max_pool2d(torch.tensor(PLANES), (3, 2)))
    values, indices = nn.AdaptiveMaxPool2d((2, 2), return_indices=True)(Tensor(PLANES))
    expected, expected_indices = F.adaptive_max_pool2d(torch.tensor(PLANES), (2, 2), return_indices=True)
    same(values, expected)
    same(indices, expected_indices)


@pytest.mark.parametrize("dtype", [np.float16, np.float64])
def test_other_float_widths_propagate_nan(dtype):
    """The NaN test reads the bits of each width."""
    x = X.astype(dtype)
    t = torch.tensor(x)
    same(ops.relu(Tensor(x)), F.relu(t))
    same(ops.maximum(Tensor(x), Tensor(x[::-1].copy())), torch.maximum(t, torch.flip(t, [0])))
    same(ops.amin(Tensor(x), 1), torch.amin(t, 1))
