"""Channel shuffles and token reshapes of a channels-last map stay channels-last
(channel_gather.rewrite_rule): ShuffleNetV2's (mindcv's) and torchvision's shuffles, and a ViT's
patch tokens, against PyTorch, per ISA."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, batch_norm, randomize, rules_used, t, torch_params
from schedules.defaults.channel_gather import _channel_gather

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run

HALF = 12  # not a multiple of 8 or 16 lanes


def mindcv_shuffle(x):
    """mindcv's ShuffleNetV2 channel shuffle: the even channels and the odd channels."""
    b, c, h, w = x.shape
    x = ops.reshape(x, (b * c // 2, 2, h * w))
    x = ops.transpose(x, (1, 0, 2))
    x = ops.reshape(x, (2, -1, c // 2, h, w))
    return x[0], x[1]


class ShuffleBlocks(nn.Cell):
    """A 1x1 stem, then two ShuffleNetV2 stride-1 blocks (shuffle, half through 1x1 -> 3x3
    depthwise -> 1x1 with batch norms, concatenated with the other half) and a 1x1 head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 2 * HALF, 1)
        self.pw1 = nn.Conv2d(HALF, HALF, 1)
        self.bn1 = nn.BatchNorm2d(HALF)
        self.dw = nn.Conv2d(HALF, HALF, 3, pad_mode="pad", padding=1, group=HALF)
        self.pw2 = nn.Conv2d(HALF, HALF, 1)
        self.head = nn.Conv2d(2 * HALF, 8, 1)

    def branch(self, x):
        return ops.relu(self.pw2(self.dw(ops.relu(self.bn1(self.pw1(x))))))

    def construct(self, x):
        y = self.stem(x)
        for _ in range(2):
            kept, passed = mindcv_shuffle(y)
            y = ops.concat((kept, self.branch(passed)), axis=1)
        return self.head(y)


def torch_blocks(net, x):
    p = torch_params(net)
    y = F.conv2d(t(x), p["stem.weight"])
    for _ in range(2):
        kept, passed = y[:, 0::2], y[:, 1::2]
        z = F.relu(batch_norm(F.conv2d(passed, p["pw1.weight"]), p, "bn1"))
        z = F.relu(F.conv2d(F.conv2d(z, p["dw.weight"], None, 1, 1, groups=HALF), p["pw2.weight"]))
        y = torch.cat([kept, z], 1)
    return F.conv2d(y, p["head.weight"])


class GroupShuffle(nn.Cell):
    """torchvision's channel shuffle over 3 groups between two 1x1 convolutions."""

    def __init__(self, groups: int = 3, channels: int = 15):
        super().__init__()
        self.groups = groups
        self.a = nn.Conv2d(3, channels, 1)
        self.b = nn.Conv2d(channels, 4, 1)

    def construct(self, x):
        y = self.a(x)
        b, c, h, w = y.shape
        y = ops.reshape(y, (b, self.groups, c // self.groups, h, w))
        y = ops.transpose(y, (0, 2, 1, 3, 4))
        return self.b(ops.relu(ops.reshape(y, (b, c, h, w))))


class PatchTokens(nn.Cell):
    """A ViT's patch embedding: a strided convolution, its map flattened into tokens, a Dense."""

    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 12, 2, stride=2, has_bias=True)
        self.dense = nn.Dense(12, 5)

    def construct(self, x):
        y = self.patch(x)
        b, c, h, w = y.shape
        return self.dense(ops.transpose(ops.reshape(y, (b, c, h * w)), (0, 2, 1)))


def _transposes(rules):
    return [name for name in rules if "transpose" in name and name != "transpose"]


def test_shufflenet_blocks_match_torch_without_transposes():
    net = randomize(ShuffleBlocks(), seed=1)
    net.set_train(False)
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 5)).astype(np.float32)
    with torch.no_grad():
        want = torch_blocks(net, x)
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert not [name for name, rule in rules.items() if rule in ("fallback", None)], rules
    # the shuffle is a channels-last strided slice; only the result goes back to NCHW
    assert not _transposes(rules), rules
    assert any("strided_slice" in name for name in rules), rules
    assert all(rules[name] == "concat" for name in rules if "concatenate" in name), rules


def test_torchvision_group_shuffle_matches_torch():
    net = randomize(GroupShuffle(), seed=4)
    net.set_train(False)
    x = np.random.default_rng(6).standard_normal((1, 3, 4, 7)).astype(np.float32)
    p = torch_params(net)
    with torch.no_grad():
        y = F.conv2d(t(x), p["a.weight"])
        y = y.reshape(1, 3, 5, 4, 7).transpose(1, 2).reshape(1, 15, 4, 7)
        want = F.conv2d(F.relu(y), p["b.weight"])
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert not _transposes(rules), rules
    assert any(name.startswith("take") or "_take" in name for name in rules), rules


def test_patch_tokens_match_torch_as_a_reshape_of_the_channels_last_map():
    net = randomize(PatchTokens(), seed=7)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((2, 3, 6, 8)).astype(np.float32)
    p = torch_params(net)
    with torch.no_grad():
        y = F.conv2d(t(x), p["patch.weight"], p["patch.bias"], stride=2)
        want = F.linear(y.flatten(2).transpose(1, 2), p["dense.weight"], p["dense.bias"])
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert not [name for name in rules if "transpose" in name], rules


def test_channel_gather_reads_whole_channels_only():
    n, c, h, w = 2, 6, 3, 4
    index = np.arange(n * c * h * w).reshape(n, c, h, w)
    assert list(_channel_gather(index[:, 1::2], n, c, h, w)) == [1, 3, 5]
    assert list(_channel_gather(index[:, ::-1], n, c, h, w)) == [5, 4, 3, 2, 1, 0]
    assert _channel_gather(index[:, :, ::-1], n, c, h, w) is None  # pixels move: not a gather
    assert _channel_gather(index[::-1], n, c, h, w) is None  # images move
    assert _channel_gather(index.transpose(0, 1, 3, 2).reshape(n, c, h, w), n, c, h, w) is None
