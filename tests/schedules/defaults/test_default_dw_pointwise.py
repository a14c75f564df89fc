"""A depthwise convolution merged into the 1x1 convolution after it (block_fusion + dw_pointwise)
against PyTorch, and the cases that must stay two kernels."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, batch_norm, randomize, rules_used, t, torch_params

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


class DepthwiseThenProject(nn.Cell):
    """stem 3x3 (channels-last result) -> depthwise 3x3 + BN + ReLU6 -> 1x1 + BN (+ a second use)."""

    def __init__(self, channels, out_channels, stride, reuse=False):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, pad_mode="pad", padding=1)
        self.depthwise = nn.Conv2d(channels, channels, 3, stride, pad_mode="pad", padding=1, group=channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.project = nn.Conv2d(channels, out_channels, 1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.reuse = reuse

    def construct(self, x):
        z = ops.clip_by_value(self.bn1(self.depthwise(self.stem(x))), 0.0, 6.0)
        y = self.bn2(self.project(z))
        if self.reuse:  # the depthwise result is needed twice: it must be kept whole
            return y, z * 2.0
        return y


def reference(net, x, stride):
    p = torch_params(net)
    channels = p["depthwise.weight"].shape[0]
    z = F.conv2d(t(x), p["stem.weight"], None, 1, 1)
    z = torch.clamp(batch_norm(F.conv2d(z, p["depthwise.weight"], None, stride, 1, 1, channels), p, "bn1"), 0, 6)
    return batch_norm(F.conv2d(z, p["project.weight"]), p, "bn2"), z


def merged_kernels(net, x):
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    return {name: rule for name, rule in rules.items() if "dwconv2d" in name}


# (channels, out channels, size, stride): widths that are not whole tiles, both strides,
# a wide map (two-vector depthwise tiles) and 24 output channels (three-vector 1x1 tiles)
CASES = {"stride1_narrow": (48, 16, 15, 1), "stride2": (32, 24, 17, 2), "wide_map_parallel": (48, 24, 30, 1)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_merged_depthwise_and_projection_match_torch(case):
    channels, out_channels, size, stride = CASES[case]
    net = randomize(DepthwiseThenProject(channels, out_channels, stride), seed=len(case))
    net.set_train(False)
    x = np.random.default_rng(5).standard_normal((1, 3, size, size)).astype(np.float32)
    want, _ = reference(net, x, stride)
    assert_close(net(Tensor(x)), want)
    kernels = merged_kernels(net, x)
    assert list(kernels.values()) == ["dw_pointwise"] and "aotnn_conv2d" in next(iter(kernels)), kernels


def test_depthwise_result_used_twice_stays_its_own_kernel():
    net = randomize(DepthwiseThenProject(16, 8, 1, reuse=True), seed=7)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 3, 12, 12)).astype(np.float32)
    want, z = reference(net, x, 1)
    y, doubled = net(Tensor(x))
    assert_close(y, want)
    assert_close(doubled, z * 2.0)
    assert list(merged_kernels(net, x).values()) == ["conv2d"]


def test_projection_with_weights_beyond_l2_is_not_merged():
    # 576 x 128 weights (295 KB): every row task would read them all again
    net = randomize(DepthwiseThenProject(576, 128, 1), seed=9, scale=0.1)
    net.set_train(False)
    x = np.random.default_rng(10).standard_normal((1, 3, 7, 7)).astype(np.float32)
    want, _ = reference(net, x, 1)
    assert_close(net(Tensor(x)), want)
    assert list(merged_kernels(net, x).values()) == ["conv2d"]
