"""Normalisation layers, their functional ops and primitives, against PyTorch (CPU) and numpy."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Parameter, Tensor, nn, ops

RNG = np.random.default_rng(5)


def rand(*shape, scale=1.0, shift=0.0):
    return (RNG.standard_normal(shape) * scale + shift).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.detach().numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def t(a):
    return torch.tensor(np.asarray(a))


def with_stats(cell, c, seed=0):
    """Give a batch norm non-trivial gamma/beta/moving statistics; returns them as numpy arrays."""
    rng = np.random.default_rng(seed)
    values = {"gamma": rng.uniform(0.5, 1.5, c), "beta": rng.uniform(-0.5, 0.5, c),
              "moving_mean": rng.uniform(-1, 1, c), "moving_variance": rng.uniform(0.5, 2.0, c)}
    for name, value in values.items():
        getattr(cell, name).set_data(value.astype(np.float32))
    return {k: v.astype(np.float32) for k, v in values.items()}


def torch_bn(x, s, training, momentum=0.1, eps=1e-5):
    """PyTorch batch norm; in training returns (y, new running mean, new running var)."""
    mean, var = t(s["moving_mean"]).clone(), t(s["moving_variance"]).clone()
    y = F.batch_norm(t(x), mean, var, t(s["gamma"]), t(s["beta"]), training, momentum, eps)
    return y, mean, var


# -- BatchNorm1d/2d/3d --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls, shape", [(nn.BatchNorm1d, (6, 4)), (nn.BatchNorm1d, (3, 4, 5)),
                                        (nn.BatchNorm2d, (2, 4, 3, 3)), (nn.SyncBatchNorm, (2, 4, 3, 3)),
                                        (nn.GlobalBatchNorm, (6, 4))])
def test_batch_norm_inference(cls, shape):
    net = cls(4)
    s = with_stats(net, 4)
    x = rand(*shape, scale=2, shift=0.5)
    close(net(Tensor(x)), torch_bn(x, s, False)[0])


@pytest.mark.parametrize("cls, shape, momentum", [(nn.BatchNorm1d, (6, 4), 0.9), (nn.BatchNorm2d, (2, 4, 3, 3), 0.7),
                                                  (nn.SyncBatchNorm, (5, 4), 0.9)])
def test_batch_norm_training_updates_moving_statistics(cls, shape, momentum):
    net = cls(4, momentum=momentum, eps=1e-3)
    s = with_stats(net, 4, seed=1)
    net.set_train()
    for step in range(2):
        x = rand(*shape, scale=2, shift=step)
        # PyTorch's momentum is the new value's weight: MindSpore's 0.9 is PyTorch's 0.1
        y, mean, var = torch_bn(x, s, True, 1 - momentum, 1e-3)
        close(net(Tensor(x)), y, atol=2e-5)
        close(net.moving_mean, mean)
        close(net.moving_variance, var)  # unbiased batch variance
        s["moving_mean"], s["moving_variance"] = mean.numpy(), var.numpy()


def test_batch_norm_use_batch_statistics():
    x = rand(3, 4, 2, 2, scale=2)
    always = nn.BatchNorm2d(4, use_batch_statistics=True)  # batch statistics, moving ones tracked, in eval too
    s = with_stats(always, 4)
    y, mean, var = torch_bn(x, s, True)
    close(always(Tensor(x)), y)
    close(always.moving_mean, mean)
    close(always.moving_variance, var)
    never = nn.BatchNorm2d(4, use_batch_statistics=False).set_train()  # moving statistics, untouched
    s = with_stats(never, 4)
    close(never(Tensor(x)), torch_bn(x, s, False)[0])
    close(never.moving_mean, s["moving_mean"])


def test_batch_norm_2d_nhwc():
    net = nn.BatchNorm2d(3, data_format="NHWC")
    s = with_stats(net, 3)
    x = rand(2, 4, 4, 3)
    ref = torch_bn(x.transpose(0, 3, 1, 2), s, False)[0].numpy().transpose(0, 2, 3, 1)
    close(net(Tensor(x)), ref)


def test_batch_norm_3d():
    net = nn.BatchNorm3d(3)
    assert [p.name for p in net.get_parameters()] == ["bn2d.moving_mean", "bn2d.moving_variance", "bn2d.gamma",
                                                      "bn2d.beta"]
    s = with_stats(net.bn2d, 3)
    x = rand(2, 3, 2, 3, 4, scale=3)
    close(net(Tensor(x)), torch_bn(x, s, False)[0])
    net.set_train()
    y, mean, var = torch_bn(x, s, True)
    close(net(Tensor(x)), y, atol=2e-5)
    close(net.bn2d.moving_mean, mean)
    close(net.bn2d.moving_variance, var)


def test_batch_norm_parameter_names_and_defaults():
    net = nn.BatchNorm2d(3)
    assert [p.name for p in net.get_parameters()] == ["mean", "variance", "gamma", "beta"]
    assert (net.eps, net.momentum, net.use_batch_statistics, net.data_format) == (1e-5, 0.9, None, "NCHW")
    close(net.moving_mean, np.zeros(3)), close(net.moving_variance, np.ones(3))
    close(net.gamma, np.ones(3)), close(net.beta, np.zeros(3))
    assert not net.moving_mean.requires_grad and net.gamma.requires_grad
    assert not nn.BatchNorm1d(3, affine=False).gamma.requires_grad

    class Parent(nn.Cell):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def construct(self, x):
            return self.bn(x)

    assert [p.name for p in Parent().get_parameters()] == ["bn.moving_mean", "bn.moving_variance", "bn.gamma",
                                                           "bn.beta"]
    assert "num_features=3" in repr(net) and "momentum=0.9" in repr(net)


def test_batch_norm_seed_examples():
    out = nn.BatchNorm1d(num_features=4)(Tensor(np.array([[0.7, 0.5, 0.5, 0.6], [0.5, 0.4, 0.6, 0.9]], np.float32)))
    close(out, np.array([[0.6999965, 0.4999975, 0.4999975, 0.59999704],
                         [0.4999975, 0.399998, 0.59999704, 0.89999545]], np.float32), rtol=1e-6, atol=1e-7)
    close(nn.BatchNorm2d(num_features=3)(Tensor(np.ones([1, 3, 2, 2], np.float32))),
          np.full([1, 3, 2, 2], 0.999995, np.float32), rtol=1e-6)


def test_batch_norm_float16():
    x = rand(4, 3, 2, 2, scale=2)
    net = nn.BatchNorm2d(3)
    s = with_stats(net, 3)
    out = net(Tensor(x.astype(np.float16)))  # float16 input, float32 parameters
    assert out.dtype == ms.float16
    close(out.asnumpy().astype(np.float32), torch_bn(x.astype(np.float16).astype(np.float32), s, False)[0],
          rtol=2e-3, atol=3e-3)


@pytest.mark.parametrize("make, exc", [
    (lambda: nn.BatchNorm2d(0), ValueError),
    (lambda: nn.BatchNorm2d(1.5), TypeError),
    (lambda: nn.BatchNorm1d(3, momentum=1.5), ValueError),
    (lambda: nn.BatchNorm1d(3, eps="1"), TypeError),
    (lambda: nn.BatchNorm1d(3, use_batch_statistics="yes"), ValueError),
    (lambda: nn.BatchNorm2d(3, data_format="NCDHW"), ValueError),
    (lambda: nn.BatchNorm3d(3, data_format="NCHW"), ValueError),
    (lambda: nn.BatchNorm2d(3, gamma_init=[1, 2]), TypeError),
    (lambda: nn.GlobalBatchNorm(3, device_num_each_group=1), ValueError),
    (lambda: nn.GlobalBatchNorm(3, device_num_each_group=2.0), TypeError),
    (lambda: nn.SyncBatchNorm(3, process_groups="all"), TypeError),
    (lambda: nn.SyncBatchNorm(3, process_groups=[[0, 1], [1, 2]]), ValueError),
])
def test_batch_norm_invalid_arguments(make, exc):
    with pytest.raises(exc):
        make()


@pytest.mark.parametrize("net, shape", [(nn.BatchNorm1d(4), (2, 4, 3, 3)), (nn.BatchNorm1d(4), (2, 5)),
                                        (nn.BatchNorm2d(4), (2, 4)), (nn.BatchNorm3d(4), (2, 4, 3, 3)),
                                        (nn.SyncBatchNorm(4), (2, 4, 3))])
def test_batch_norm_invalid_inputs(net, shape):
    with pytest.raises(ValueError):
        net(Tensor(np.zeros(shape, np.float32)))


# -- LayerNorm ------------------------------------------------------------------------------------------
def layer_norm_ref(x, gamma, beta, norm_axis, eps):
    axes = tuple(range(norm_axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta, mean, var


def test_layer_norm_last_axis_against_torch():
    net = nn.LayerNorm((5,))
    assert net.epsilon == 1e-7 and net.begin_norm_axis == -1 and net.begin_params_axis == -1
    gamma, beta = rand(5), rand(5)
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    x = rand(3, 4, 5, scale=3, shift=1)
    close(net(Tensor(x)), F.layer_norm(t(x), (5,), t(gamma), t(beta), 1e-7), atol=2e-5)
    assert [p.name for p in net.get_parameters()] == ["gamma", "beta"]


def test_layer_norm_two_axes_against_torch():
    net = nn.LayerNorm((4, 5), begin_norm_axis=-2, begin_params_axis=-2, epsilon=1e-5)
    gamma, beta = rand(4, 5), rand(4, 5)
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    x = rand(3, 4, 5, scale=2)
    close(net(Tensor(x)), F.layer_norm(t(x), (4, 5), t(gamma), t(beta), 1e-5), atol=2e-5)


def test_layer_norm_params_axis_after_norm_axis():
    """Normalise over axes 1.. with gamma/beta covering only axes 2.. (broadcast over axis 1)."""
    x = rand(2, 3, 4, 5, scale=2)
    net = nn.LayerNorm((4, 5), begin_norm_axis=1, begin_params_axis=2)
    gamma, beta = rand(4, 5), rand(4, 5)
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    close(net(Tensor(x)), layer_norm_ref(x, gamma, beta, 1, 1e-7)[0], atol=2e-5)
    ones = Tensor(np.ones([20, 5, 10, 10], np.float32))  # the seed's example
    assert nn.LayerNorm(ones.shape[1:], begin_norm_axis=1, begin_params_axis=1)(ones).shape == (20, 5, 10, 10)


def test_layer_norm_float16_input_and_to_float():
    x = rand(4, 6, scale=3, shift=2)
    h = x.astype(np.float16)
    gamma, beta = rand(6), rand(6)
    ref = F.layer_norm(t(h.astype(np.float32)), (6,), t(gamma), t(beta), 1e-7).numpy()
    net = nn.LayerNorm((6,))
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    out = net(Tensor(h))
    assert out.dtype == ms.float16
    close(out.asnumpy().astype(np.float32), ref, rtol=3e-3, atol=5e-3)
    half = nn.LayerNorm((6,)).to_float(ms.float16)
    half.gamma.set_data(gamma), half.beta.set_data(beta)
    out = half(Tensor(x))
    assert out.dtype == ms.float16 and half.gamma.dtype == ms.float32
    close(out.asnumpy().astype(np.float32), ref, rtol=3e-3, atol=5e-3)


def test_layer_norm_primitive_and_functional():
    x = rand(2, 3, 4, scale=2)
    gamma, beta = rand(3, 4), rand(3, 4)
    y, mean, var = ops.LayerNorm()(Tensor(x), Tensor(gamma), Tensor(beta))  # defaults: axes 1, 1; epsilon 1e-7
    ry, rmean, rvar = layer_norm_ref(x, gamma, beta, 1, 1e-7)
    close(y, ry, atol=2e-5), close(mean, rmean), close(var, rvar)
    close(ops.layer_norm(Tensor(x), (4,), Tensor(gamma[0]), Tensor(beta[0])),
          F.layer_norm(t(x), (4,), t(gamma[0]), t(beta[0])), atol=2e-5)
    close(ops.layer_norm(Tensor(x), (3, 4)), F.layer_norm(t(x), (3, 4)), atol=2e-5)


@pytest.mark.parametrize("make, exc", [
    (lambda: nn.LayerNorm(5), TypeError),
    (lambda: nn.LayerNorm((5,), begin_norm_axis=1.0), TypeError),
    (lambda: nn.LayerNorm((5,), begin_params_axis="0"), TypeError),
    (lambda: nn.LayerNorm((5,), epsilon="small"), TypeError),
    (lambda: nn.LayerNorm((5,))(Tensor(np.zeros((2, 4), np.float32))), ValueError),
    (lambda: nn.LayerNorm((5,), begin_norm_axis=3)(Tensor(np.zeros((2, 5), np.float32))), ValueError),
    (lambda: ops.layer_norm(Tensor(np.zeros((2, 4), np.float32)), (5,)), ValueError),
])
def test_layer_norm_invalid(make, exc):
    with pytest.raises(exc):
        make()


# -- GroupNorm ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("groups, channels, eps", [(2, 4, 1e-5), (3, 6, 1e-3)])
def test_group_norm_against_torch(groups, channels, eps):
    net = nn.GroupNorm(groups, channels, eps=eps)
    gamma, beta = rand(channels), rand(channels)
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    x = rand(2, channels, 3, 4, scale=2, shift=1)
    close(net(Tensor(x)), F.group_norm(t(x), groups, t(gamma), t(beta), eps), atol=2e-5)


def test_group_norm_seed_example_and_functional():
    close(nn.GroupNorm(2, 2)(Tensor(np.ones([1, 2, 4, 4], np.float32))), np.zeros([1, 2, 4, 4], np.float32))
    x = rand(2, 6, 5)
    close(ops.group_norm(Tensor(x), 3), F.group_norm(t(x), 3), atol=2e-5)
    assert [p.name for p in nn.GroupNorm(2, 4).get_parameters()] == ["gamma", "beta"]


@pytest.mark.parametrize("make, exc", [
    (lambda: nn.GroupNorm(3, 4), ValueError),
    (lambda: nn.GroupNorm(0, 4), ValueError),
    (lambda: nn.GroupNorm(2.0, 4), TypeError),
    (lambda: nn.GroupNorm(2, 4, eps=1), TypeError),
    (lambda: nn.GroupNorm(2, 4, affine="yes"), TypeError),
    (lambda: nn.GroupNorm(2, 4)(Tensor(np.zeros((2, 6, 3, 3), np.float32))), ValueError),
    (lambda: nn.GroupNorm(2, 4)(Tensor(np.zeros((2, 4, 3), np.float32))), ValueError),
])
def test_group_norm_invalid(make, exc):
    with pytest.raises(exc):
        make()


# -- InstanceNorm2d ----------------------------------------------------------------------------------------
def test_instance_norm_against_torch():
    net = nn.InstanceNorm2d(3)
    assert (net.eps, net.momentum) == (1e-5, 0.1)
    gamma, beta = rand(3), rand(3)
    net.gamma.set_data(gamma), net.beta.set_data(beta)
    x = rand(2, 3, 4, 5, scale=2, shift=1)
    close(net(Tensor(x)), F.instance_norm(t(x), weight=t(gamma), bias=t(beta), eps=1e-5), atol=2e-5)
    close(net.moving_mean, np.zeros(3))  # inference leaves the moving statistics alone
    net.set_train()
    x2 = rand(4, 3, 3, 3, scale=2, shift=-1)
    close(net(Tensor(x2)), F.instance_norm(t(x2), weight=t(gamma), bias=t(beta), eps=1e-5), atol=2e-5)
    mean = x2.mean(axis=(2, 3)).mean(axis=0)
    var = x2.var(axis=(2, 3), ddof=1).mean(axis=0)
    close(net.moving_mean, 0.1 * mean)
    close(net.moving_variance, 0.9 * 1.0 + 0.1 * var)
    assert [p.name for p in net.get_parameters()] == ["mean", "variance", "gamma", "beta"]


@pytest.mark.parametrize("make, exc", [
    (lambda: nn.InstanceNorm2d(0), ValueError),
    (lambda: nn.InstanceNorm2d(3.0), TypeError),
    (lambda: nn.InstanceNorm2d(3, momentum=1), TypeError),
    (lambda: nn.InstanceNorm2d(3, momentum=2.0), ValueError),
    (lambda: nn.InstanceNorm2d(3, affine=1), TypeError),
    (lambda: nn.InstanceNorm2d(3, gamma_init=Tensor(np.ones(3, np.float16))), TypeError),
    (lambda: nn.InstanceNorm2d(3)(Tensor(np.zeros((2, 3, 4), np.float32))), ValueError),
])
def test_instance_norm_invalid(make, exc):
    with pytest.raises(exc):
        make()


# -- BatchNorm primitive ---------------------------------------------------------------------------------------
def test_batch_norm_primitive():
    x = rand(3, 2, 2, 2, scale=2)
    s = {"gamma": rand(2), "beta": rand(2), "moving_mean": rand(2), "moving_variance": np.abs(rand(2)) + 0.5}
    args = [Tensor(s[k]) for k in ("gamma", "beta")]
    y = ops.BatchNorm()(Tensor(x), *args, Tensor(s["moving_mean"]), Tensor(s["moving_variance"]))[0]
    close(y, torch_bn(x, s, False)[0])
    mean = Parameter(Tensor(s["moving_mean"]), name="m")
    var = Parameter(Tensor(s["moving_variance"]), name="v")
    y = ops.BatchNorm(is_training=True, momentum=0.2)(Tensor(x), *args, mean, var)[0]
    ry, rmean, rvar = torch_bn(x, s, True, momentum=0.2)
    close(y, ry), close(mean, rmean), close(var, rvar)


# -- gradients (training graphs differentiate through the composed rules) ----------------------------
@pytest.mark.parametrize("make, ref", [
    (lambda: nn.LayerNorm((3, 2, 2), 1, 1), lambda a: F.layer_norm(a, (3, 2, 2), eps=1e-7)),
    (lambda: nn.GroupNorm(3, 3), lambda a: F.group_norm(a, 3)),
    (lambda: nn.InstanceNorm2d(3), F.instance_norm),
    (lambda: nn.BatchNorm2d(3).set_train(),
     lambda a: F.batch_norm(a, torch.zeros(3), torch.ones(3), torch.ones(3), torch.zeros(3), True)),
])
def test_input_gradient_matches_torch(make, ref):
    x, weight = rand(4, 3, 2, 2, scale=2), rand(4, 3, 2, 2)
    net = make()
    grad = ops.grad(lambda a: (net(a) * Tensor(weight)).sum())(Tensor(x))
    xt = torch.tensor(x, requires_grad=True)
    (ref(xt) * torch.tensor(weight)).sum().backward()
    close(grad, xt.grad, rtol=1e-4, atol=1e-5)
