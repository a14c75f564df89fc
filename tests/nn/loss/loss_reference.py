"""Comparison helpers shared by the loss tests."""
from __future__ import annotations

import numpy as np
import torch

from aotnn import Tensor


def close(actual, expected, rtol=1e-5, atol=1e-6):
    """``actual`` (Tensor) matches ``expected`` (numpy or torch) in shape and value."""
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=atol)


def t(a, grad=False):
    return torch.tensor(np.asarray(a), requires_grad=grad)


def numeric_gradient(fn, x, eps=1e-3):
    """Central finite differences of the scalar function ``fn`` at ``x``, in float64."""
    numeric = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        up, down = x.astype(np.float64), x.astype(np.float64)
        up[index] += eps
        down[index] -= eps
        numeric[index] = (fn(up) - fn(down)) / (2 * eps)
    return numeric
