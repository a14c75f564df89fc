"""Inference batch norms folded into the convolution before them (batchnorm_fold) against PyTorch,
and the cases that must keep the batch norm as an epilogue."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Parameter, Tensor, nn, ops
from default_schedule_helpers import assert_close, batch_norm, randomize, rules_used, t, torch_params


class ConvBn(nn.Cell):
    """conv (no bias) -> batch norm -> ReLU6, or -> + the input, or nothing after it."""

    def __init__(self, cin, cout, kernel, stride, group, after):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride, pad_mode="pad", padding=kernel // 2, group=group)
        self.bn = nn.BatchNorm2d(cout)
        self.after = after

    def construct(self, x):
        y = self.bn(self.conv(x))
        if self.after == "relu6":
            return ops.clip_by_value(y, 0.0, 6.0)
        if self.after == "residual":
            return y + x
        return y


def reference(net, x, stride, group, after):
    p = torch_params(net)
    kernel = p["conv.weight"].shape[-1]
    y = batch_norm(F.conv2d(t(x), p["conv.weight"], None, stride, kernel // 2, 1, group), p, "bn")
    if after == "relu6":
        return torch.clamp(y, 0, 6)
    if after == "residual":
        return y + t(x)
    return y


def conv_kernels(net, x):
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    return [name for name in rules if "conv2d" in name and "pack" not in name and "wino" not in name]


# (in, out, kernel, stride, group, size, after): a 3x3 stem over an NCHW input, 1x1 layers (20
# output channels: a padded tile; a 7x7 map with many channels: flat tiles), depthwise (both
# strides), a residual add after the batch norm
CASES = {
    "stem_3x3_stride2": (3, 32, 3, 2, 1, 17, "relu6"),
    "1x1_padded_channels": (24, 20, 1, 1, 1, 10, "relu6"),
    "1x1_flat_7x7": (64, 384, 1, 1, 1, 7, "relu6"),
    "depthwise": (32, 32, 3, 1, 32, 12, "relu6"),
    "depthwise_stride2": (48, 48, 3, 2, 48, 15, "relu6"),
    "1x1_residual": (40, 40, 1, 1, 1, 9, "residual"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_folded_batch_norm_matches_torch(case):
    cin, cout, kernel, stride, group, size, after = CASES[case]
    net = randomize(ConvBn(cin, cout, kernel, stride, group, after), seed=len(case))
    net.set_train(False)
    x = np.random.default_rng(3).standard_normal((1, cin, size, size)).astype(np.float32)
    assert_close(net(Tensor(x)), reference(net, x, stride, group, after))
    kernels = conv_kernels(net, x)
    # folded: the kernel's epilogue holds no batch-norm product any more
    assert kernels and not any("multiply" in name for name in kernels), kernels


def test_batch_norm_as_the_result_stays_an_epilogue():
    # nothing element-wise after the batch norm: folding it would leave the convolution bare
    net = randomize(ConvBn(16, 24, 1, 1, 1, None), seed=2)
    net.set_train(False)
    x = np.random.default_rng(4).standard_normal((1, 16, 8, 8)).astype(np.float32)
    assert_close(net(Tensor(x)), reference(net, x, 1, 1, None))
    assert any("multiply" in name for name in conv_kernels(net, x))


class ScaledByItsOwnMean(nn.Cell):
    """conv -> times its own per-channel mean -> + shift -> ReLU6: the scale is not a parameter's."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 1)
        self.shift = Parameter(Tensor(np.zeros(8, np.float32)), name="shift")

    def construct(self, x):
        y = self.conv(x)
        scale = ops.mean(y, (0, 2, 3), keep_dims=True)
        return ops.clip_by_value(y * scale + ops.reshape(self.shift, (1, 8, 1, 1)), 0.0, 6.0)


def test_scale_computed_from_the_convolution_itself():
    # as a training step's batch norm: its statistics come from the convolution's output
    net = randomize(ScaledByItsOwnMean(), seed=5)
    x = np.random.default_rng(6).standard_normal((1, 8, 6, 6)).astype(np.float32)
    p = torch_params(net)
    y = F.conv2d(t(x), p["conv.weight"])
    want = torch.clamp(y * y.mean((0, 2, 3), keepdim=True) + p["shift"].reshape(1, 8, 1, 1), 0, 6)
    assert_close(net(Tensor(x)), want)


class SharedWeight(nn.Cell):
    """one convolution's weights under two batch norms: each gets its own scaled copy."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 1)
        self.bn1 = nn.BatchNorm2d(16)
        self.bn2 = nn.BatchNorm2d(16)

    def construct(self, x):
        return ops.clip_by_value(self.bn1(self.conv(x)), 0.0, 6.0) - ops.clip_by_value(self.bn2(self.conv(x)), 0.0, 6.0)


def test_one_weight_under_two_batch_norms():
    net = randomize(SharedWeight(), seed=7)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 8, 5, 5)).astype(np.float32)
    p = torch_params(net)
    y = F.conv2d(t(x), p["conv.weight"])
    want = torch.clamp(batch_norm(y, p, "bn1"), 0, 6) - torch.clamp(batch_norm(y, p, "bn2"), 0, 6)
    assert_close(net(Tensor(x)), want)
    kernels = conv_kernels(net, x)
    assert len(kernels) == 2 and not any("multiply" in name for name in kernels), kernels


class DeepScale(nn.Cell):
    """conv -> times a per-channel scale computed through a long chain of ops -> + shift -> ReLU6
    (a squeeze-and-excitation-like scale: the look-ahead must not recurse through the chain)."""

    def __init__(self, depth):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 1)
        self.shift = Parameter(Tensor(np.full(8, 0.5, np.float32)), name="shift")
        self.depth = depth

    def construct(self, x):
        scale = ops.mean(x, (0, 2, 3), keep_dims=True)
        for _ in range(self.depth):
            scale = scale * 0.999 + 0.001
        y = self.conv(x) * scale + ops.reshape(self.shift, (1, 8, 1, 1))
        return ops.clip_by_value(y, 0.0, 6.0)


def test_scale_behind_a_long_chain():
    depth = 1500
    net = randomize(DeepScale(depth), seed=9)
    x = np.random.default_rng(10).standard_normal((1, 8, 6, 6)).astype(np.float32)
    p = torch_params(net)
    scale = t(x).mean((0, 2, 3), keepdim=True)
    for _ in range(depth):
        scale = scale * 0.999 + 0.001
    want = torch.clamp(F.conv2d(t(x), p["conv.weight"]) * scale + p["shift"].reshape(1, 8, 1, 1), 0, 6)
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert any(rule == "conv2d" for name, rule in rules.items() if "conv2d" in name), rules
