"""1-D convolutions with a bias, a batch norm and ReLU (unit_axis + batchnorm_fold): each layer one
convolution kernel with the batch norm folded in, for an AVX2 and an AVX-512 target, against PyTorch."""
import numpy as np
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn
from default_schedule_helpers import assert_close, batch_norm, randomize, rules_used, t, torch_params

# (kernel, dilation) per layer: TDNN-style, as the corpus' audio net
LAYERS = ((5, 1), (3, 2), (1, 1))


class Conv1dStack(nn.Cell):
    """Conv1d(has_bias) -> BatchNorm1d -> ReLU, per layer of ``LAYERS``."""

    def __init__(self, cin: int, channels: int):
        super().__init__()
        cells = []
        for index, (kernel, dilation) in enumerate(LAYERS):
            cells += [nn.Conv1d(cin if index == 0 else channels, channels, kernel, dilation=dilation,
                                pad_mode="same", has_bias=True), nn.BatchNorm1d(channels), nn.ReLU()]
        self.body = nn.SequentialCell(cells)

    def construct(self, x):
        return self.body(x)


def reference(net, x):
    p = torch_params(net)
    y = t(x)
    for index, (kernel, dilation) in enumerate(LAYERS):
        conv, bn = f"body.{3 * index}", f"body.{3 * index + 1}"
        weight = p[f"{conv}.weight"].reshape(p[f"{conv}.weight"].shape[0], -1, kernel)
        y = F.conv1d(y, weight, p[f"{conv}.bias"], padding="same", dilation=dilation)
        y = torch.relu(batch_norm(y, p, bn))
    return y


def test_conv1d_bias_batch_norm_relu_folded(cpu_target):
    net = randomize(Conv1dStack(12, 24), seed=11)
    net.set_train(False)
    x = np.random.default_rng(12).standard_normal((2, 12, 30)).astype(np.float32)
    assert_close(net(Tensor(x)), reference(net, x))
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    per_call = [name for name in rules if "pack" not in name and "param" not in name]
    convs = [name for name in per_call if "conv2d" in name]
    # one kernel per layer: bias, batch norm and ReLU in it, the batch norm folded (no product left)
    assert len(convs) == len(LAYERS), per_call
    assert all(name.endswith("_relu") and "multiply" not in name and "add" not in name for name in convs), convs
    assert all(rules[name] == "conv2d" for name in convs), rules
    # nothing between the layers: no element-wise kernel that applies ReLU or re-lays out a layer's output
    assert not any("relu" in name for name in per_call if name not in convs), per_call


class Conv2dBias(nn.Cell):
    """Conv2d(has_bias) -> BatchNorm2d -> ReLU: the bias folds together with the batch norm."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 3, has_bias=True)
        self.bn = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def test_conv2d_bias_batch_norm_relu_folded(cpu_target):
    net = randomize(Conv2dBias(), seed=13)
    net.set_train(False)
    x = np.random.default_rng(14).standard_normal((1, 8, 9, 9)).astype(np.float32)
    p = torch_params(net)
    want = torch.relu(batch_norm(F.conv2d(t(x), p["conv.weight"], p["conv.bias"], padding=1), p, "bn"))
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    convs = [name for name in rules if "conv2d" in name and "pack" not in name]
    assert len(convs) == 1 and "multiply" not in convs[0] and "add" not in convs[0], convs


class Conv1dResidual(nn.Cell):
    """Conv1d -> + the input -> ReLU -> Conv1d: a two-operand element-wise op on the 3-D values."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(16, 16, 3, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv1d(16, 8, 1, has_bias=True)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.conv2(self.relu(self.conv1(x) + x))


def test_conv1d_residual_matches_torch(cpu_target):
    net = randomize(Conv1dResidual(), seed=15)
    x = np.random.default_rng(16).standard_normal((1, 16, 21)).astype(np.float32)
    p = torch_params(net)
    y = F.conv1d(t(x), p["conv1.weight"].reshape(16, 16, 3), p["conv1.bias"], padding="same")
    want = F.conv1d(torch.relu(y + t(x)), p["conv2.weight"].reshape(8, 16, 1), p["conv2.bias"])
    assert_close(net(Tensor(x)), want)


class Conv1dPool(nn.Cell):
    """Conv1d -> ReLU -> mean (or max, keeping the axis) over time: reductions of the 3-D values."""

    def __init__(self, keep: bool):
        super().__init__()
        self.conv = nn.Conv1d(6, 10, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        self.keep = keep

    def construct(self, x):
        y = self.relu(self.conv(x))
        return y.max(axis=2, keepdims=True) if self.keep else y.mean(axis=2)


def test_conv1d_reductions_match_torch(cpu_target):
    x = np.random.default_rng(18).standard_normal((2, 6, 17)).astype(np.float32)
    for keep in (False, True):
        net = randomize(Conv1dPool(keep), seed=17)
        p = torch_params(net)
        y = torch.relu(F.conv1d(t(x), p["conv.weight"].reshape(10, 6, 3), p["conv.bias"], padding="same"))
        assert_close(net(Tensor(x)), y.amax(2, keepdim=True) if keep else y.mean(2))
        # the reduction reads the convolution's channels-last output: no transpose back to (N, C, L)
        rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
        assert not any("transpose" in name for name in rules), rules
