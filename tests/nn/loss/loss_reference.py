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
