"""nn.Identity, nn.Flatten (2.x start_dim / end_dim), nn.Linear, and the 2.x padding layers against numpy /
PyTorch CPU."""
import math

import numpy as np
import pytest
import torch
import torch.nn as tnn

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(13)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_identity_ignores_arguments():
    x = rand(2, 3)
    np.testing.assert_array_equal(nn.Identity(54, unused="x")(Tensor(x)).asnumpy(), x)


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (0, -2), (2, 3)])
def test_flatten_against_torch(args):
    x = rand(2, 3, 4, 5)
    want = torch.flatten(torch.from_numpy(x), *args) if args else torch.flatten(torch.from_numpy(x), 1)
    np.testing.assert_array_equal(nn.Flatten(*args)(Tensor(x)).asnumpy(), want.numpy())


def test_flatten_errors():
    with pytest.raises(TypeError, match="start_dim"):
        nn.Flatten(1.0)
    with pytest.raises(ValueError, match="must not come after"):
        nn.Flatten(2, 1)(Tensor(rand(2, 3, 4)))
    with pytest.raises(ValueError, match="out of range"):
        nn.Flatten(0, 5)(Tensor(rand(2, 3)))


def test_linear_defaults_and_forward():
    net = nn.Linear(16, 4)
    weight, bias = net.weight.asnumpy(), net.bias.asnumpy()
    bound = 1 / math.sqrt(16)  # HeUniform(sqrt(5)) on fan_in 16: gain sqrt(2 / 6) * sqrt(3 / 16)
    assert np.abs(weight).max() <= bound + 1e-6 and np.abs(bias).max() <= bound + 1e-6
    assert weight.std() > bound / 4
    x = rand(3, 16)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x @ weight.T + bias, rtol=1e-5, atol=1e-5)
    assert nn.Linear(3, 2, bias=False).bias is None


@pytest.mark.parametrize("ours, theirs, shape", [
    (lambda: nn.ZeroPad2d((1, 2, 0, 3)), lambda: tnn.ZeroPad2d((1, 2, 0, 3)), (2, 3, 4, 5)),
    (lambda: nn.ConstantPad1d(2, 1.5), lambda: tnn.ConstantPad1d(2, 1.5), (2, 3, 4)),
    (lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0), lambda: tnn.ConstantPad2d((1, 0, 2, 1), -1.0), (3, 4, 5)),
    (lambda: nn.ConstantPad3d(1, 0.5), lambda: tnn.ConstantPad3d(1, 0.5), (1, 2, 3, 4, 2)),
    (lambda: nn.ReflectionPad1d((2, 1)), lambda: tnn.ReflectionPad1d((2, 1)), (2, 3, 4)),
    (lambda: nn.ReflectionPad2d((1, 2, 2, 1)), lambda: tnn.ReflectionPad2d((1, 2, 2, 1)), (1, 2, 4, 5)),
    (lambda: nn.ReflectionPad3d(1), lambda: tnn.ReflectionPad3d(1), (1, 2, 3, 3, 4)),
    (lambda: nn.ReplicationPad1d((0, 3)), lambda: tnn.ReplicationPad1d((0, 3)), (2, 3, 4)),
    (lambda: nn.ReplicationPad2d(2), lambda: tnn.ReplicationPad2d(2), (1, 2, 3, 4)),
    (lambda: nn.ReplicationPad3d((1, 0, 0, 1, 2, 0)), lambda: tnn.ReplicationPad3d((1, 0, 0, 1, 2, 0)),
     (1, 2, 2, 3, 3)),
])
def test_padding_layers_against_torch(ours, theirs, shape):
    x = rand(*shape)
    np.testing.assert_array_equal(ours()(Tensor(x)).asnumpy(), theirs()(torch.from_numpy(x)).numpy())


def test_padding_layer_errors():
    with pytest.raises(TypeError, match="4 ints"):
        nn.ZeroPad2d((1, 2))
    with pytest.raises(ValueError, match="non-negative"):
        nn.ReflectionPad1d((-1, 1))
    with pytest.raises(TypeError, match="value"):
        nn.ConstantPad1d(1, "a")
    with pytest.raises(ValueError, match="3-D or 4-D"):
        nn.ReplicationPad2d(1)(Tensor(rand(3, 3)))
    with pytest.raises(ValueError, match="3-D or 4-D"):
        nn.ReplicationPad2d(1)(Tensor(rand(1, 1, 2, 3, 3)))


def test_reflection_and_constant_pads_take_any_rank_with_the_padded_axes():
    # as MindSpore 2.10: ReflectionPad1d / ConstantPad1d on 1-D and 4-D inputs
    x = rand(4)
    np.testing.assert_array_equal(nn.ReflectionPad1d(1)(Tensor(x)).asnumpy(), np.pad(x, 1, mode="reflect"))
    y = rand(1, 2, 3, 4)
    np.testing.assert_array_equal(nn.ConstantPad1d(1, 2.0)(Tensor(y)).asnumpy(),
                                  np.pad(y, ((0, 0), (0, 0), (0, 0), (1, 1)), constant_values=2.0))


def test_padding_layer_inside_a_compiled_cell():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pad = nn.ReflectionPad2d(1)
            self.flatten = nn.Flatten(start_dim=2)

        def construct(self, x):
            return self.flatten(self.pad(x))

    x = rand(1, 2, 3, 3)
    want = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect").reshape(1, 2, -1)
    np.testing.assert_array_equal(Net()(Tensor(x)).asnumpy(), want)
