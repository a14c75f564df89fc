"""Gradients computed in the compiled graph, against PyTorch autograd and finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import aotnn
from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(7)


def test_grad_operation_inputs_and_weights_match_torch():
    net = nn.Dense(3, 2, activation="relu")
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    in_grads, w_grads = ops.GradOperation(get_all=True, get_by_list=True)(net, net.trainable_params())(Tensor(x))
    xt = torch.tensor(x, requires_grad=True)
    w = torch.tensor(net.weight.asnumpy(), requires_grad=True)
    b = torch.tensor(net.bias.asnumpy(), requires_grad=True)
    torch.relu(xt @ w.T + b).sum().backward()
    np.testing.assert_allclose(in_grads[0].asnumpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_grads[0].asnumpy(), w.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_grads[1].asnumpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_sens_param_scales_the_output_gradient():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    sens = RNG.standard_normal((2, 3)).astype(np.float32)
    grad = ops.GradOperation(sens_param=True)(lambda a: ops.tanh(a))(Tensor(x), Tensor(sens))
    np.testing.assert_allclose(grad.asnumpy(), sens * (1 - np.tanh(x) ** 2), rtol=1e-5, atol=1e-6)


def test_value_and_grad_positions():
    x = RNG.standard_normal((3,)).astype(np.float32)
    y = RNG.standard_normal((3,)).astype(np.float32)
    value, (gx, gy) = ops.value_and_grad(lambda a, b: (a * b * b).sum(), (0, 1))(Tensor(x), Tensor(y))
    np.testing.assert_allclose(value.asnumpy(), (x * y * y).sum(), rtol=1e-6)
    np.testing.assert_allclose(gx.asnumpy(), y * y, rtol=1e-6)
    np.testing.assert_allclose(gy.asnumpy(), 2 * x * y, rtol=1e-6)
    with pytest.raises(ValueError, match="grad_position and weights"):
        ops.value_and_grad(lambda a: a, None)


def _finite_difference(fn, x, eps=1e-3):
    grad = np.zeros_like(x, dtype=np.float64)
    for index in np.ndindex(x.shape):
        up, down = x.astype(np.float64).copy(), x.astype(np.float64).copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (fn(up) - fn(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("name, forward, reference", [
    ("rsqrt", lambda a: ops.rsqrt(a), lambda a: 1 / np.sqrt(a)),
    ("square", lambda a: ops.square(a), lambda a: a * a),
    ("erf", lambda a: ops.erf(a), lambda a: np.vectorize(__import__("math").erf)(a)),
    ("clip", lambda a: ops.clip_by_value(a, 0.8, 1.6), lambda a: np.clip(a, 0.8, 1.6)),
    ("max", lambda a: ops.amax(a, 1), lambda a: a.max(axis=1)),
    ("slice", lambda a: a[1:, 1:3], lambda a: a[1:, 1:3]),
])
def test_our_gradient_rules_against_finite_differences(name, forward, reference):
    x = RNG.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    weights = RNG.standard_normal(reference(x).shape)
    grad = ops.grad(lambda a: (forward(a) * Tensor(weights.astype(np.float32))).sum())(Tensor(x)).asnumpy()
    expected = _finite_difference(lambda a: float((reference(a) * weights).sum()), x)
    np.testing.assert_allclose(grad, expected, rtol=2e-3, atol=2e-3)
