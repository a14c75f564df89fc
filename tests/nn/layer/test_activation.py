"""Activation layers, their functional ops and primitives, and get_activation, against PyTorch (CPU)
and numpy formulas."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(11)
X2 = (RNG.standard_normal((3, 5)) * 3).astype(np.float32)      # configuration 1: 2-D
X4 = (RNG.standard_normal((2, 3, 4, 4)) * 3).astype(np.float32)  # configuration 2: 4-D, 3 channels


def close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def t(a):
    return torch.tensor(a)


# (layer factory, reference on a numpy array); each runs on X2 and X4
CASES = {
    "ReLU": (nn.ReLU, lambda a: F.relu(t(a))),
    "ReLU6": (nn.ReLU6, lambda a: F.relu6(t(a))),
    "Sigmoid": (nn.Sigmoid, lambda a: torch.sigmoid(t(a))),
    "Tanh": (nn.Tanh, lambda a: torch.tanh(t(a))),
    "Softmax": (nn.Softmax, lambda a: F.softmax(t(a), -1)),
    "Softmax_axis0": (lambda: nn.Softmax(axis=(0,)), lambda a: F.softmax(t(a), 0)),
    "LogSoftmax": (nn.LogSoftmax, lambda a: F.log_softmax(t(a), -1)),
    "LogSoftmax_axis1": (lambda: nn.LogSoftmax(1), lambda a: F.log_softmax(t(a), 1)),
    "GELU": (nn.GELU, lambda a: F.gelu(t(a), approximate="tanh")),
    "GELU_exact": (lambda: nn.GELU(approximate=False), lambda a: F.gelu(t(a))),
    "FastGelu": (nn.FastGelu, lambda a: a / (1 + np.exp(-1.702 * np.abs(a))) * np.exp(0.851 * (a - np.abs(a)))),
    "ELU": (nn.ELU, lambda a: F.elu(t(a))),
    "CELU": (nn.CELU, lambda a: F.celu(t(a))),
    "CELU_alpha2": (lambda: nn.CELU(2.0), lambda a: F.celu(t(a), 2.0)),
    "LeakyReLU": (nn.LeakyReLU, lambda a: F.leaky_relu(t(a), 0.2)),
    "LeakyReLU_alpha1.5": (lambda: nn.LeakyReLU(1.5), lambda a: np.where(a >= 0, a, 1.5 * a)),
    "HSwish": (nn.HSwish, lambda a: F.hardswish(t(a))),
    "HSigmoid": (nn.HSigmoid, lambda a: F.hardsigmoid(t(a))),
    "LogSigmoid": (nn.LogSigmoid, lambda a: F.logsigmoid(t(a))),
    "SoftShrink": (nn.SoftShrink, lambda a: F.softshrink(t(a), 0.5)),
    "SoftShrink_1.5": (lambda: nn.SoftShrink(1.5), lambda a: F.softshrink(t(a), 1.5)),
    "HShrink": (nn.HShrink, lambda a: F.hardshrink(t(a), 0.5)),
    "HShrink_2": (lambda: nn.HShrink(2.0), lambda a: F.hardshrink(t(a), 2.0)),
    "PReLU": (nn.PReLU, lambda a: F.prelu(t(a), torch.tensor([0.25]))),
    "SiLU": (nn.SiLU, lambda a: F.silu(t(a))),
    "Mish": (nn.Mish, lambda a: F.mish(t(a))),
    "Softsign": (nn.Softsign, lambda a: F.softsign(t(a))),
    "Tanhshrink": (nn.Tanhshrink, lambda a: F.tanhshrink(t(a))),
    "Hardtanh": (lambda: nn.Hardtanh(-2, 3.5), lambda a: F.hardtanh(t(a), -2, 3.5)),
    "Softmin": (nn.Softmin, lambda a: F.softmin(t(a), -1)),
    "Threshold": (lambda: nn.Threshold(0.5, 20), lambda a: F.threshold(t(a), 0.5, 20.0)),
}


@pytest.mark.parametrize("x", [X2, X4], ids=["2d", "4d"])
@pytest.mark.parametrize("name", list(CASES))
def test_layer_matches_reference(name, x):
    make, ref = CASES[name]
    close(make()(Tensor(x)), ref(x), rtol=1e-5, atol=2e-6)


def test_prelu_per_channel_weights():
    net = nn.PReLU(3, [0.1, 0.2, 0.3])
    close(net(Tensor(X4)), F.prelu(t(X4), torch.tensor([0.1, 0.2, 0.3])))
    w = Tensor(np.array([0.5, -0.3, 0.05], np.float32))
    net = nn.PReLU(3, w)
    # MindSpore applies relu to w before use: the negative slope counts as 0
    close(net(Tensor(X4)), F.prelu(t(X4), torch.tensor([0.5, 0.0, 0.05])))


def test_prelu_parameter_names_and_training_clamp():
    net = nn.PReLU()
    assert net.w.name == "a" and net.w.shape == (1,)
    close(net.w, np.array([0.25], np.float32))

    class Parent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.act = nn.PReLU(2, [-0.5, 0.5])

        def construct(self, x):
            return self.act(x)

    parent = Parent()
    assert parent.act.w.name == "act.w"
    parent.set_train()
    x = np.array([[-2.0, -2.0], [1.0, 3.0]], np.float32)
    close(parent(Tensor(x)), np.array([[0.0, -1.0], [1.0, 3.0]], np.float32))
    close(parent.act.w, np.array([0.0, 0.5], np.float32))  # training writes relu(w) back


def test_softmax2d():
    close(nn.Softmax2d()(Tensor(X4)), F.softmax(t(X4), -3))


def test_rrelu_slopes_are_random_within_bounds():
    x = -np.abs(X4) - 0.1
    net = nn.RReLU(0.1, 0.3)
    a, b = net(Tensor(x)).asnumpy(), net(Tensor(x)).asnumpy()
    slope = a / x
    assert np.all(slope >= 0.1 - 1e-6) and np.all(slope <= 0.3 + 1e-6)
    assert not np.allclose(a, b)  # fresh samples per call
    close(net(Tensor(np.abs(X4))), np.abs(X4))


def test_defaults():
    assert nn.LeakyReLU().alpha == 0.2
    assert nn.GELU().approximate is True
    assert nn.ELU().alpha == 1.0
    assert nn.CELU().alpha == 1.0
    assert nn.SoftShrink().lambd == 0.5 and nn.HShrink().lambd == 0.5
    assert nn.Softmax().axis == -1 and nn.LogSoftmax().axis == -1
    assert nn.PReLU().channel == 1


def test_seed_examples():
    """The docstring examples' inputs and printed outputs."""
    x = Tensor(np.array([[-1.0, 4.0, -8.0], [2.0, -5.0, 9.0]]), ms.float32)
    close(nn.GELU()(x), np.array([[-1.5880802e-01, 3.9999299e+00, -3.1077917e-21],
                                  [1.9545976e+00, -2.2918017e-07, 9.0000000e+00]], np.float32), rtol=1e-5, atol=1e-9)
    close(nn.LeakyReLU()(x), np.array([[-0.2, 4.0, -1.6], [2.0, -1.0, 9.0]], np.float32))
    close(nn.ELU()(Tensor(np.array([-1, -2, 0, 2, 1]), ms.float32)),
          np.array([-0.63212055, -0.86466473, 0.0, 2.0, 1.0], np.float32))
    close(nn.LogSigmoid()(Tensor(np.array([1.0, 2.0, 3.0]), ms.float32)),
          np.array([-0.31326166, -0.12692806, -0.04858734], np.float32))
    close(nn.HShrink()(Tensor(np.array([[0.5, 1, 2.0], [0.0533, 0.0776, -2.1233]]), ms.float32)),
          np.array([[0.0, 1.0, 2.0], [0.0, 0.0, -2.1233]], np.float32))
    h = Tensor(np.array([-1, -2, 0, 2, 1]), ms.float16)
    np.testing.assert_array_equal(nn.Softmax()(h).asnumpy(),
                                  np.array([0.03168, 0.01166, 0.0861, 0.636, 0.2341], np.float16))
    out = nn.HSwish()(h)
    assert out.dtype == ms.float16
    close(out, np.array([-0.3333, -0.3333, 0.0, 1.667, 0.6665], np.float16), rtol=1e-3, atol=1e-3)
    close(nn.HSigmoid()(h), np.array([0.3333, 0.1666, 0.5, 0.8335, 0.6665], np.float16), rtol=1e-3, atol=1e-3)
    close(nn.SoftShrink()(Tensor(np.array([[0.5297, 0.7871, 1.1754], [0.7836, 0.6218, -1.1542]]), ms.float16)),
          np.array([[0.02979, 0.287, 0.676], [0.2837, 0.1216, -0.6543]], np.float16), rtol=1e-3, atol=1e-3)


# -- float16 ------------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_float16_input(approximate):
    h = X4.astype(np.float16)
    out = nn.GELU(approximate)(Tensor(h))
    assert out.dtype == ms.float16
    ref = F.gelu(t(h.astype(np.float32)), approximate="tanh" if approximate else "none").numpy()
    close(out.asnumpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_gelu_to_float16():
    net = nn.GELU().to_float(ms.float16)
    out = net(Tensor(X2))
    assert out.dtype == ms.float16
    ref = F.gelu(t(X2.astype(np.float16).astype(np.float32)), approximate="tanh").numpy()
    close(out.asnumpy().astype(np.float32), ref, rtol=2e-3, atol=2e-3)


def test_prelu_and_softmax_float16():
    h = X4.astype(np.float16)
    out = nn.PReLU(3, [0.1, 0.2, 0.3]).to_float(ms.float16)(Tensor(X4))
    assert out.dtype == ms.float16
    close(out.asnumpy().astype(np.float32), F.prelu(t(h.astype(np.float32)), torch.tensor([0.1, 0.2, 0.3])),
          rtol=2e-3, atol=2e-3)
    out = nn.Softmax()(Tensor(h))
    assert out.dtype == ms.float16
    close(out.asnumpy().astype(np.float32), F.softmax(t(h.astype(np.float32)), -1), rtol=3e-3, atol=1e-3)


# -- functional ops and primitives -----------------------------------------------------------------
def test_functional_ops():
    x = Tensor(X2)
    close(ops.gelu(x), F.gelu(t(X2)))  # MindSpore's ops.gelu defaults to the exact form
    close(ops.gelu(x, approximate='tanh'), F.gelu(t(X2), approximate="tanh"))
    close(ops.elu(x, 0.7), F.elu(t(X2), 0.7))
    close(ops.leaky_relu(x, 0.1), F.leaky_relu(t(X2), 0.1))
    close(ops.hardswish(x), F.hardswish(t(X2)))
    close(ops.softplus(x), F.softplus(t(X2)), atol=2e-6)
    close(ops.softplus(x, beta=2, threshold=3), F.softplus(t(X2), beta=2, threshold=3), atol=2e-6)
    close(ops.prelu(Tensor(X4), Tensor(np.array([0.1, 0.2, 0.3], np.float32))),
          F.prelu(t(X4), torch.tensor([0.1, 0.2, 0.3])))
    close(ops.sigmoid(x), torch.sigmoid(t(X2)))
    close(ops.softmax(x, 0), F.softmax(t(X2), 0))
    close(ops.log_softmax(x, 0), F.log_softmax(t(X2), 0))


def test_primitives():
    x = Tensor(X2)
    close(ops.GeLU()(x), F.gelu(t(X2), approximate="tanh"))
    close(ops.FastGeLU()(x), CASES["FastGelu"][1](X2), rtol=1e-5, atol=2e-6)
    close(ops.Elu()(x), F.elu(t(X2)))
    close(ops.CeLU(2.0)(x), F.celu(t(X2), 2.0))
    close(ops.HSigmoid()(x), F.hardsigmoid(t(X2)))
    close(ops.SoftShrink(1.0)(x), F.softshrink(t(X2), 1.0))
    close(ops.HShrink(1.0)(x), F.hardshrink(t(X2), 1.0))
    close(ops.Softsign()(x), F.softsign(t(X2)))


# -- get_activation ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, cls", [
    ('softmin', nn.Softmin), ('softmax', nn.Softmax), ('softmax2d', nn.Softmax2d), ('logsoftmax', nn.LogSoftmax),
    ('relu', nn.ReLU), ('relu6', nn.ReLU6), ('rrelu', nn.RReLU), ('silu', nn.SiLU), ('tanh', nn.Tanh),
    ('tanhshrink', nn.Tanhshrink), ('hardtanh', nn.Hardtanh), ('gelu', nn.GELU), ('fast_gelu', nn.FastGelu),
    ('elu', nn.ELU), ('sigmoid', nn.Sigmoid), ('softsign', nn.Softsign), ('prelu', nn.PReLU),
    ('leakyrelu', nn.LeakyReLU), ('hswish', nn.HSwish), ('hsigmoid', nn.HSigmoid), ('logsigmoid', nn.LogSigmoid),
    ('softshrink', nn.SoftShrink), ('hshrink', nn.HShrink), ('mish', nn.Mish),
])
def test_get_activation_names(name, cls):
    assert type(nn.get_activation(name)) is cls


def test_get_activation_special_cases():
    assert nn.get_activation(None) is None
    assert type(nn.get_activation('ReLU')) is nn.ReLU
    with pytest.raises(KeyError, match="nope"):
        nn.get_activation('nope')
    with pytest.raises(KeyError, match="For 'Dense'"):
        nn.get_activation('nope', prim_name='Dense')
    with pytest.raises(TypeError):
        nn.get_activation(3)
    with pytest.raises(TypeError):  # needs its two arguments, as in MindSpore
        nn.get_activation('threshold')
    close(nn.get_activation('gelu')(Tensor(X2)), F.gelu(t(X2), approximate="tanh"))


# -- invalid arguments ------------------------------------------------------------------------------
@pytest.mark.parametrize("make, exc", [
    (lambda: nn.ELU(alpha=0.5), ValueError),
    (lambda: nn.ELU(alpha="1"), TypeError),
    (lambda: nn.CELU(alpha=0.0), ValueError),
    (lambda: nn.CELU(alpha="a"), TypeError),
    (lambda: nn.LeakyReLU("x"), TypeError),
    (lambda: nn.GELU(approximate="yes"), TypeError),
    (lambda: nn.PReLU(channel=0), ValueError),
    (lambda: nn.PReLU(channel=1.5), TypeError),
    (lambda: nn.PReLU(w="a"), TypeError),
    (lambda: nn.PReLU(2, [0.1]), ValueError),
    (lambda: nn.PReLU(2, Tensor(np.array([1, 2], np.int32))), ValueError),
    (lambda: nn.SoftShrink(-1.0), ValueError),
    (lambda: nn.SoftShrink("a"), TypeError),
    (lambda: nn.HShrink("a"), TypeError),
    (lambda: nn.Softmax(axis=1.5), TypeError),
    (lambda: nn.Softmax(axis=()), ValueError),
    (lambda: nn.LogSoftmax(axis=(0, 1)), TypeError),
    (lambda: nn.Hardtanh(1.0, -1.0), ValueError),
    (lambda: nn.RReLU(0.5, 0.1), ValueError),
])
def test_invalid_arguments(make, exc):
    with pytest.raises(exc):
        make()


def test_invalid_inputs():
    ints = Tensor(np.array([1, -2, 3], np.int32))
    for layer in (nn.Sigmoid(), nn.GELU(), nn.ELU(), nn.Tanh(), nn.Softmax(), nn.PReLU()):
        with pytest.raises(TypeError):
            layer(ints)
    with pytest.raises(ValueError):
        ops.gelu(Tensor(X2), approximate='fast')
    with pytest.raises(ValueError):
        nn.Softmax(axis=3)(Tensor(X2))
    with pytest.raises(ValueError):
        nn.PReLU(2)(Tensor(X4))  # 3 channels


# -- gradients (training graphs differentiate through the composed rules) ----------------------------
@pytest.mark.parametrize("make, ref", [
    (nn.GELU, lambda a: F.gelu(a, approximate="tanh")),
    (lambda: nn.GELU(False), F.gelu),
    (nn.ELU, F.elu),
    (nn.HSwish, F.hardswish),
    (nn.LogSigmoid, F.logsigmoid),
    (nn.SoftShrink, F.softshrink),
    (lambda: nn.PReLU(3, [0.1, 0.2, 0.3]), lambda a: F.prelu(a, torch.tensor([0.1, 0.2, 0.3]))),
])
def test_input_gradient_matches_torch(make, ref):
    net, weight = make(), RNG.standard_normal(X4.shape).astype(np.float32)
    grad = ops.grad(lambda a: (net(a) * Tensor(weight)).sum())(Tensor(X4))
    xt = torch.tensor(X4, requires_grad=True)
    (ref(xt) * torch.tensor(weight)).sum().backward()
    close(grad, xt.grad, rtol=1e-5, atol=1e-5)
