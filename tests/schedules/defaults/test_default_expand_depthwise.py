"""A flat 1x1 expansion merged with the depthwise convolution that alone reads it
(block_fusion.merge_expand_depthwise + expand_depthwise) against PyTorch, and where they stay apart
(an expansion read twice: test_default_inverted_residual.py)."""
import numpy as np
import pytest

from aotnn import Tensor
from default_schedule_helpers import assert_close, randomize
# the same cell and reference: MobileNetV2's deep blocks are inverted residuals too, whose
# projection weights are too big to merge the depthwise convolution into it
from test_default_inverted_residual import InvertedResidual, kernel_rules, reference

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


# (channels, expanded, out channels, size, stride, batch): MobileNetV2's 7x7 blocks and its 14x14 -> 7x7
# one; a batch of two (tasks run over images, then channel blocks, in both halves of the kernel)
CASES = {"7x7_stride1": (160, 960, 160, 7, 1, 1), "14x14_stride2": (96, 576, 160, 14, 2, 1),
         "7x7_batch2": (160, 960, 160, 7, 1, 2)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_merged_expansion_and_depthwise_match_torch(case):
    channels, expanded, out_channels, size, stride, batch = CASES[case]
    net = randomize(InvertedResidual(channels, expanded, out_channels, stride), seed=size)
    net.set_train(False)
    x = np.random.default_rng(3).standard_normal((batch, 3, size, size)).astype(np.float32)
    want, _ = reference(net, x, stride)
    assert_close(net(Tensor(x)), want)
    rules = kernel_rules(net, x)
    merged = [name for name, rule in rules.items() if rule == "expand_depthwise"]
    assert len(merged) == 1 and "aotnn_conv2d" in merged[0] and "dwconv2d" in merged[0], rules
    assert not any("dwconv2d" in name for name in rules if name != merged[0]), rules  # no depthwise kernel of its own


def test_expansion_tiled_by_rows_stays_apart():
    # a 28x28 map: the expansion is tiled row by row, not one task per channel block
    net = randomize(InvertedResidual(32, 192, 160, 1), seed=2)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 3, 28, 28)).astype(np.float32)
    want, _ = reference(net, x, 1)
    assert_close(net(Tensor(x)), want)
    assert "expand_depthwise" not in kernel_rules(net, x).values()
