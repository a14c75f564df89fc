"""Jvp and Vjp against the hand-derived Jacobian of x**3 + y and PyTorch's autograd.functional."""
from __future__ import annotations

import numpy as np
import torch

from aotnn import Tensor, nn


class Cube(nn.Cell):
    def construct(self, x, y):
        return x ** 3 + y


def test_vjp_matches_documented_example():
    x = np.array([[1, 2], [3, 4]], np.float32)
    v = np.ones((2, 2), np.float32)
    out, (gx, gy) = nn.Vjp(Cube())(Tensor(x), Tensor(x), Tensor(v))
    np.testing.assert_allclose(out.asnumpy(), x ** 3 + x)
    np.testing.assert_allclose(gx.asnumpy(), 3 * x ** 2)
    np.testing.assert_allclose(gy.asnumpy(), v)


def test_jvp_matches_torch():
    rng = np.random.default_rng(0)
    x, y, vx, vy = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4))
    out, jvp = nn.Jvp(Cube())(Tensor(x), Tensor(y), (Tensor(vx), Tensor(vy)))
    _, expected = torch.autograd.functional.jvp(lambda a, b: a ** 3 + b, (torch.tensor(x), torch.tensor(y)),
                                                (torch.tensor(vx), torch.tensor(vy)))
    np.testing.assert_allclose(out.asnumpy(), x ** 3 + y, rtol=1e-6)
    np.testing.assert_allclose(jvp.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
