"""Channel splits and concatenations stay channels-last (layout.split_item_rule, layout.concat_rule),
a batch norm after a concatenation reads its scale from a parameter-only kernel
(layout.materialized), and the concatenation with its epilogue is scheduled branch-free
(concat.py): a MixNet-style mixed depthwise block against PyTorch, per ISA."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tvm import te, topi

from aotnn import Tensor, nn, ops
from default_schedule_helpers import (assert_close, batch_norm, lowered_kernels, randomize, rules_used,
                                      scalarized_loops, t, torch_params)
from schedules.defaults import concat

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run

SPLITS = (12, 20)  # not multiples of 8 or 16 lanes: the concatenation's vectors must still fit


class MixedBlock(nn.Cell):
    """1x1 expansion, its channels split between a 3x3 and a 5x5 depthwise convolution,
    concatenated, then a batch norm and Swish, and a 1x1 projection (MixNet's mixed depthwise
    convolution; the projection keeps the concatenation's consumer channels-last)."""

    def __init__(self):
        super().__init__()
        channels = sum(SPLITS)
        self.expand = nn.Conv2d(4, channels, 1, has_bias=True)
        self.dw3 = nn.Conv2d(SPLITS[0], SPLITS[0], 3, pad_mode="pad", padding=1, group=SPLITS[0])
        self.dw5 = nn.Conv2d(SPLITS[1], SPLITS[1], 5, pad_mode="pad", padding=2, group=SPLITS[1])
        self.bn = nn.BatchNorm2d(channels)
        self.project = nn.Conv2d(channels, 8, 1)

    def construct(self, x):
        left, right = ops.split(ops.relu(self.expand(x)), list(SPLITS), axis=1)
        y = self.bn(ops.concat((self.dw3(left), self.dw5(right)), 1))
        return self.project(y * ops.sigmoid(y))


def reference(net, x):
    p = torch_params(net)
    e = F.relu(F.conv2d(t(x), p["expand.weight"], p["expand.bias"]))
    left, right = torch.split(e, list(SPLITS), 1)
    y = torch.cat([F.conv2d(left, p["dw3.weight"], None, 1, 1, groups=SPLITS[0]),
                   F.conv2d(right, p["dw5.weight"], None, 1, 2, groups=SPLITS[1])], 1)
    y = batch_norm(y, p, "bn")
    return F.conv2d(y * torch.sigmoid(y), p["project.weight"])


def test_mixed_block_matches_torch_channels_last_and_branch_free():
    net = randomize(MixedBlock(), seed=3)
    net.set_train(False)
    x = np.random.default_rng(5).standard_normal((1, 4, 10, 10)).astype(np.float32)
    with torch.no_grad():
        want = reference(net, x)
    assert_close(net(Tensor(x)), want)
    specs = [("x", x.shape, "float32")]
    rules = rules_used(lambda v: net(v), specs)
    assert not [name for name, rule in rules.items() if rule in ("fallback", None)], rules
    concats = [name for name in rules if "concatenate" in name]
    assert concats and all(rules[name] == "concat" for name in concats), rules
    # channels-last throughout: no transpose between the split, the convolutions and the concatenation
    assert not [name for name in rules if "transpose" in name and ("split" in name or "concat" in name)], rules
    lowered = lowered_kernels(lambda v: net(v), specs)
    for name in concats:
        loops = lowered[name][lowered[name].index("for "):]  # past the argument checks
        # the batch norm's scale is computed once per parameter change, not per element and call
        assert "sqrt" not in loops, name
        # no per-element choice of operand, every loop vectorized
        assert "if_then_else" not in loops and not scalarized_loops(loops), name
        assert "T.Ramp" in loops, name


def test_operand_boundaries_are_the_concatenation_offsets():
    parts = [te.placeholder((2, 3, width), name=f"p{i}") for i, width in enumerate((5, 7, 4))]
    joined = topi.concatenate(parts, axis=2)
    from tvm.s_tir import Schedule
    sch = Schedule(te.create_prim_func([*parts, joined]))
    block = sch.get(sch.get_sblock(joined.op.name))
    assert concat.operand_boundaries(block.body.value, block.iter_vars[-1].var, 16) == [5, 12]
    # another axis's conditions are not boundaries of the innermost one
    assert concat.operand_boundaries(block.body.value, block.iter_vars[0].var, 2) == []
