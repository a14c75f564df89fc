"""A flat 1x1 expansion merged with the depthwise convolution that alone reads it
(block_fusion.merge_expand_depthwise + expand_depthwise) against PyTorch, and where they stay apart."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, batch_norm, randomize, rules_used, t, torch_params


class DeepBlock(nn.Cell):
    """stem 3x3 -> 1x1 expand + BN + ReLU6 -> depthwise 3x3 + BN + ReLU6 -> 1x1 project + BN: the
    deep blocks of MobileNetV2, whose projection weights are too big to merge the depthwise into it."""

    def __init__(self, channels, expanded, out_channels, stride, reuse=False):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, pad_mode="pad", padding=1)
        self.expand = nn.Conv2d(channels, expanded, 1)
        self.bn0 = nn.BatchNorm2d(expanded)
        self.depthwise = nn.Conv2d(expanded, expanded, 3, stride, pad_mode="pad", padding=1, group=expanded)
        self.bn1 = nn.BatchNorm2d(expanded)
        self.project = nn.Conv2d(expanded, out_channels, 1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.reuse = reuse

    def construct(self, x):
        e = ops.clip_by_value(self.bn0(self.expand(self.stem(x))), 0.0, 6.0)
        z = ops.clip_by_value(self.bn1(self.depthwise(e)), 0.0, 6.0)
        y = self.bn2(self.project(z))
        if self.reuse:  # the expansion is read twice: the depthwise may not own it
            return y, e + 1.0
        return y


def reference(net, x, stride):
    p = torch_params(net)
    expanded = p["depthwise.weight"].shape[0]
    s = F.conv2d(t(x), p["stem.weight"], None, 1, 1)
    e = torch.clamp(batch_norm(F.conv2d(s, p["expand.weight"]), p, "bn0"), 0, 6)
    z = torch.clamp(batch_norm(F.conv2d(e, p["depthwise.weight"], None, stride, 1, 1, expanded), p, "bn1"), 0, 6)
    return batch_norm(F.conv2d(z, p["project.weight"]), p, "bn2"), e


def conv_rules(net, x):
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    return {name: rule for name, rule in rules.items() if "conv2d" in name and not name.startswith("aotnn_pack")}


# (channels, expanded, out channels, size, stride): MobileNetV2's 7x7 blocks and its 14x14 -> 7x7 one
CASES = {"7x7_stride1": (160, 960, 160, 7, 1), "14x14_stride2": (96, 576, 160, 14, 2)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_merged_expansion_and_depthwise_match_torch(case):
    channels, expanded, out_channels, size, stride = CASES[case]
    net = randomize(DeepBlock(channels, expanded, out_channels, stride), seed=size)
    net.set_train(False)
    x = np.random.default_rng(3).standard_normal((1, 3, size, size)).astype(np.float32)
    want, _ = reference(net, x, stride)
    assert_close(net(Tensor(x)), want)
    rules = conv_rules(net, x)
    merged = [name for name, rule in rules.items() if rule == "expand_depthwise"]
    assert len(merged) == 1 and "aotnn_conv2d" in merged[0] and "dwconv2d" in merged[0], rules
    assert not any("dwconv2d" in name for name in rules if name != merged[0]), rules  # no depthwise kernel of its own


def test_expansion_read_twice_stays_apart():
    net = randomize(DeepBlock(160, 960, 160, 1, reuse=True), seed=9)
    net.set_train(False)
    x = np.random.default_rng(4).standard_normal((1, 3, 7, 7)).astype(np.float32)
    want, e = reference(net, x, 1)
    y, shifted = net(Tensor(x))
    assert_close(y, want)
    assert_close(shifted, e + 1.0)
    assert "expand_depthwise" not in conv_rules(net, x).values()


def test_expansion_tiled_by_rows_stays_apart():
    # a 28x28 map: the expansion is tiled row by row, not one task per channel block
    net = randomize(DeepBlock(32, 192, 160, 1), seed=2)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 3, 28, 28)).astype(np.float32)
    want, _ = reference(net, x, 1)
    assert_close(net(Tensor(x)), want)
    assert "expand_depthwise" not in conv_rules(net, x).values()
