"""Swin's shifted-window data movement - a roll over H and W (two slices joined per axis) and the
window partition (reshape, transpose, reshape) - is one element-wise kernel whose vectors lie within
the channel axis (no per-lane index division, no per-element index load), against PyTorch, per ISA."""
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn.numpy as mnp
from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, lowered_kernels, randomize, rules_used, t, torch_params

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run

SIDE, WINDOW, CHANNELS, SHIFT = 14, 7, 48, 3  # 48 channels: a multiple of 16 lanes, not of 64


class ShiftedWindows(nn.Cell):
    """A (1, H, W, C) map rolled by -SHIFT along H and W, cut in WINDOW x WINDOW windows of tokens,
    and a Dense over the channels."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(CHANNELS, 8)

    def construct(self, x):
        x = mnp.roll(x, (-SHIFT, -SHIFT), (1, 2))
        n = SIDE // WINDOW
        x = ops.reshape(x, (1, n, WINDOW, n, WINDOW, CHANNELS))
        x = ops.transpose(x, (0, 1, 3, 2, 4, 5))
        return self.dense(ops.reshape(x, (-1, WINDOW * WINDOW, CHANNELS)))


def test_shifted_windows_match_torch_vectorized_along_channels():
    net = randomize(ShiftedWindows(), seed=2)
    net.set_train(False)
    x = np.random.default_rng(3).standard_normal((1, SIDE, SIDE, CHANNELS)).astype(np.float32)
    p = torch_params(net)
    n = SIDE // WINDOW
    with torch.no_grad():
        y = torch.roll(t(x), (-SHIFT, -SHIFT), (1, 2)).reshape(1, n, WINDOW, n, WINDOW, CHANNELS)
        y = y.permute(0, 1, 3, 2, 4, 5).reshape(-1, WINDOW * WINDOW, CHANNELS)
        want = F.linear(y, p["dense.weight"], p["dense.bias"])
    assert_close(net(Tensor(x)), want)
    specs = [("x", x.shape, "float32")]
    rules = rules_used(lambda v: net(v), specs)
    assert not [name for name, rule in rules.items() if rule in ("fallback", None)], rules
    assert not [name for name in rules if "take" in name], rules  # no per-element index loads
    lowered = lowered_kernels(lambda v: net(v), specs)
    moves = [name for name in lowered if "transpose" in name]
    assert moves, list(lowered)
    for name in moves:
        loops = lowered[name][lowered[name].index("for "):]
        assert "T.Ramp" in loops, name
        # vector indices are a scalar base plus a ramp: no division of a vector of lanes
        assert not re.search(r"T\.Ramp\([^)]*\) (//|%)", loops), name


def test_roll_matches_numpy_both_directions_and_beyond_the_size():
    x = np.arange(2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)
    for shift, axis in ((2, 1), (-1, 1), (7, 1), (-4, 2), (5, 1)):
        assert mnp.roll(Tensor(x), shift, axis).asnumpy().tolist() == np.roll(x, shift, axis).tolist()
