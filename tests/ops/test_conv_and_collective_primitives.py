"""ops.Conv2DTranspose (Conv2DBackpropInput) against PyTorch's gradient of conv2d with respect to its input;
AllReduce / Broadcast in a world of one; the summary primitives."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

from aotnn import Tensor, ops

RNG = np.random.default_rng(19)


@pytest.mark.parametrize("size, kernel, stride, pad_mode, pad, group", [
    ((7, 6), 3, 2, "pad", (1, 1, 1, 1), 1),
    ((5, 5), 3, 1, "pad", (1, 1, 1, 1), 3),
    ((8, 8), 3, 2, "valid", 0, 1),
    ((9, 7), 3, 2, "same", 0, 1),
])
def test_conv2d_transpose_is_the_input_gradient_of_conv2d(size, kernel, stride, pad_mode, pad, group):
    channels, out_channels = 3 if group == 3 else 4, 6
    x = torch.from_numpy(RNG.standard_normal((2, channels) + size).astype(np.float32)).requires_grad_()
    w = torch.from_numpy(RNG.standard_normal((out_channels, channels // group, kernel, kernel)).astype(np.float32))
    if pad_mode == "same":  # MindSpore's 'same': output ceil(H / s), the extra padding after
        pads = []
        for n in reversed(size):
            total = max((-(-n // stride) - 1) * stride + kernel - n, 0)
            pads += [total // 2, total - total // 2]
        y = TF.conv2d(TF.pad(x, pads), w, stride=stride, groups=group)
    else:
        y = TF.conv2d(x, w, stride=stride, padding=pad[0] if pad_mode == "pad" else 0, groups=group)
    dout = torch.from_numpy(RNG.standard_normal(y.shape).astype(np.float32))
    (y * dout).sum().backward()
    prim = ops.Conv2DTranspose(out_channels, kernel, pad_mode=pad_mode, pad=pad, stride=stride, group=group)
    got = prim(Tensor(dout.numpy()), Tensor(w.numpy()), (2, channels) + size)
    np.testing.assert_allclose(got.asnumpy(), x.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_rejects_unreachable_sizes():
    prim = ops.Conv2DTranspose(2, 3, pad_mode="valid")
    with pytest.raises(ValueError, match="cannot come from"):
        prim(Tensor(np.ones((1, 2, 4, 4), np.float32)), Tensor(np.ones((2, 1, 3, 3), np.float32)), (1, 1, 9, 9))
    with pytest.raises(ValueError, match="pad_mode"):
        ops.Conv2DTranspose(2, 3, pad_mode="full")


def test_collectives_in_a_world_of_one_and_summaries():
    x = Tensor(np.arange(3, dtype=np.float32))
    assert ops.AllReduce()(x) is x
    out = ops.Broadcast(0)((x,))
    assert isinstance(out, tuple) and out[0] is x
    assert ops.ScalarSummary()("loss", x) is None
    with pytest.raises(TypeError, match="name"):
        ops.ScalarSummary()(1, x)
    with pytest.raises(ValueError, match="root_rank"):
        ops.Broadcast(-1)


def test_print_writes_its_inputs_and_returns_none(capsys):
    assert ops.operations.Print()("x:", Tensor(np.array([1.5, 2.0], np.float32)), 3) is None
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "x:" and "1.5" in lines[1] and lines[-1] == "3"
    with pytest.raises(TypeError, match="input 0"):
        ops.Print()(object())


def test_print_inside_a_captured_construct_prints_nothing_and_keeps_the_result(capsys):
    from aotnn import nn

    class Doubler(nn.Cell):
        def __init__(self):
            super().__init__()
            self.print = ops.Print()

        def construct(self, x):
            self.print("x:", x)
            return x * 2

    out = Doubler()(Tensor(np.array([1.0, -3.0], np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), [2.0, -6.0])
    assert capsys.readouterr().out == ""
