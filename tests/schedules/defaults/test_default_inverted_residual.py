"""A whole inverted-residual block (1x1 expand, depthwise, 1x1 project) in one kernel
(block_fusion.merge_expand + inverted_residual) against PyTorch, and the cases that stay apart."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tvm import tirx
from tvm.s_tir import SBlockRealize

import schedules.defaults as defaults
from aotnn import Tensor, nn, ops
from default_schedule_helpers import _host_kernels, assert_close, batch_norm, randomize, rules_used, t, torch_params
from schedules.defaults.inverted_residual import band_rows, expand_row_tile

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


class InvertedResidual(nn.Cell):
    """stem 3x3 (channels-last result) -> MobileNetV2 block: expand 1x1 + BN + ReLU6, depthwise
    3x3 + BN + ReLU6, project 1x1 + BN, plus the input where the shapes allow."""

    def __init__(self, channels, expanded, out_channels, stride, reuse=False, kernel=3, dilation=1):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, pad_mode="pad", padding=1)
        self.expand = nn.Conv2d(channels, expanded, 1)
        self.bn0 = nn.BatchNorm2d(expanded)
        self.depthwise = nn.Conv2d(expanded, expanded, kernel, stride, pad_mode="pad", padding=dilation * (kernel // 2),
                                   dilation=dilation, group=expanded)
        self.bn1 = nn.BatchNorm2d(expanded)
        self.project = nn.Conv2d(expanded, out_channels, 1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.residual = stride == 1 and channels == out_channels
        self.reuse = reuse

    def construct(self, x):
        x = self.stem(x)
        e = ops.clip_by_value(self.bn0(self.expand(x)), 0.0, 6.0)
        z = ops.clip_by_value(self.bn1(self.depthwise(e)), 0.0, 6.0)
        y = self.bn2(self.project(z))
        if self.residual:
            y = y + x
        if self.reuse:  # the expanded tensor is needed twice: it must be kept whole
            return y, e * 2.0
        return y


def reference(net, x, stride, kernel=3, dilation=1):
    p = torch_params(net)
    expanded = p["depthwise.weight"].shape[0]
    s = F.conv2d(t(x), p["stem.weight"], None, 1, 1)
    e = torch.clamp(batch_norm(F.conv2d(s, p["expand.weight"]), p, "bn0"), 0, 6)
    z = F.conv2d(e, p["depthwise.weight"], None, stride, dilation * (kernel // 2), dilation, expanded)
    z = torch.clamp(batch_norm(z, p, "bn1"), 0, 6)
    y = batch_norm(F.conv2d(z, p["project.weight"]), p, "bn2")
    if net.residual:
        y = y + s
    return y, e


def kernel_rules(net, x):
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    return {name: rule for name, rule in rules.items() if "conv2d" in name and not name.startswith("aotnn_pack")}


def _enclosing_loops(func) -> dict[str, list]:
    """{block name: the loops around it, outermost first} of a scheduled kernel."""
    found: dict[str, list] = {}

    def walk(stmt, loops):
        if isinstance(stmt, tirx.For):
            walk(stmt.body, [*loops, stmt])
        elif isinstance(stmt, tirx.SeqStmt):
            for part in stmt.seq:
                walk(part, loops)
        elif isinstance(stmt, SBlockRealize):
            found.setdefault(stmt.block.name_hint, loops)
            walk(stmt.block.body, loops)
            if stmt.block.init is not None:
                walk(stmt.block.init, loops)
        elif hasattr(stmt, "body") and isinstance(stmt.body, tirx.Stmt):
            walk(stmt.body, loops)

    walk(func.body, [])
    return found


def merged_kernel(net, x):
    """The scheduled TIR of the one kernel the inverted_residual rule scheduled."""
    kernels, target = _host_kernels(lambda v: net(v), [("x", x.shape, "float32")])
    cpu = defaults.cpu_info(target)
    scheduled = [defaults.schedule_with_rule(func, cpu, target) for func in kernels.functions.values()]
    merged = [func for func, rule in scheduled if rule == "inverted_residual"]
    assert len(merged) == 1, [rule for _, rule in scheduled]
    return merged[0]


def assert_rows_interleaved(func):
    """Each expanded row is computed inside the loop over output rows, before their depthwise rows:
    the expansion's and the depthwise's blocks share the loop just inside the parallel one."""
    loops = _enclosing_loops(func)
    expansion = next(loops[name] for name in loops if name.startswith("aotnn_conv2d") and name.endswith("_update"))
    depthwise = next(loops[name] for name in loops if name.startswith("aotnn_dwconv2d") and name.endswith("_update"))
    task = next(i for i, loop in enumerate(expansion) if loop.kind == tirx.ForKind.PARALLEL)
    assert expansion[task].same_as(depthwise[task])
    assert expansion[task + 1].same_as(depthwise[task + 1]), "the expansion is not inside the output-row loop"


# (channels, expanded, out channels, size, stride, kernel, dilation): expanded tensors above 512 KB;
# stride 1 with the residual add, stride 2 on an odd size (the last band and the last tiles are
# partial), a 5x5 depthwise with stride 2 (each output row reads 5 expanded rows, 2 new ones) and a
# dilated one (rows 2 apart: 5 rows spanned by 3 taps)
CASES = {"stride1_residual": (16, 96, 16, 56, 1, 3, 1), "stride2_odd": (16, 96, 24, 55, 2, 3, 1),
         "kernel5_stride2": (16, 96, 24, 56, 2, 5, 1), "dilated": (16, 96, 16, 56, 1, 3, 2),
         "28x28_588KB": (32, 192, 32, 28, 1, 3, 1)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_merged_block_matches_torch(case):
    channels, expanded, out_channels, size, stride, kernel, dilation = CASES[case]
    net = randomize(InvertedResidual(channels, expanded, out_channels, stride, kernel=kernel, dilation=dilation),
                    seed=len(case))
    net.set_train(False)
    x = np.random.default_rng(5).standard_normal((1, 3, size, size)).astype(np.float32)
    want, _ = reference(net, x, stride, kernel, dilation)
    assert_close(net(Tensor(x)), want)
    merged = [name for name, rule in kernel_rules(net, x).items() if rule == "inverted_residual"]
    assert len(merged) == 1 and "dwconv2d" in merged[0] and merged[0].count("aotnn_conv2d") == 2, kernel_rules(net, x)
    assert_rows_interleaved(merged_kernel(net, x))


# 20x20x96 floats (150 KB) stay in L2 between two kernels: nothing to gain by merging; a prime
# size (53) has only 1-row bands and 1-pixel expansion tiles
@pytest.mark.parametrize("size", [20, 53], ids=["small_expansion", "prime_size"])
def test_block_stays_two_kernels(size):
    net = randomize(InvertedResidual(16, 96, 16, 1), seed=size)
    net.set_train(False)
    x = np.random.default_rng(6).standard_normal((1, 3, size, size)).astype(np.float32)
    want, _ = reference(net, x, 1)
    assert_close(net(Tensor(x)), want)
    rules = kernel_rules(net, x).values()
    assert "inverted_residual" not in rules and "dw_pointwise" in rules


def test_row_tiles_and_bands_must_divide_the_rows():
    assert expand_row_tile(112, 6) == 4 and expand_row_tile(56, 6) == 4 and expand_row_tile(48, 6) == 6
    assert expand_row_tile(113, 6) is None  # only 1-pixel tiles divide a prime width
    assert band_rows(56, 112, 112 * 96 * 4) == 7  # 15 expanded rows of 43 KB in 640 KB
    assert band_rows(56, 56, 56 * 144 * 4) == 14  # 16 rows of 32 KB
    assert band_rows(53, 53, 53 * 96 * 4) is None  # a prime row count: bands of one row only


# a 56x56 block (the whole-block merge) and a 7x7 deep one (the expansion/depthwise merge)
@pytest.mark.parametrize("channels, expanded, size", [(16, 96, 56), (160, 960, 7)], ids=["56x56", "7x7"])
def test_expansion_used_twice_is_not_merged(channels, expanded, size):
    net = randomize(InvertedResidual(channels, expanded, channels, 1, reuse=True), seed=4)
    net.set_train(False)
    x = np.random.default_rng(7).standard_normal((1, 3, size, size)).astype(np.float32)
    want, e = reference(net, x, 1)
    y, doubled = net(Tensor(x))
    assert_close(y, want)
    assert_close(doubled, e * 2.0)
    rules = kernel_rules(net, x).values()
    assert "inverted_residual" not in rules and "expand_depthwise" not in rules


class StemBlock(nn.Cell):
    """MobileNetV2's first layers: a 3x3 stride-2 stem convolution + BN + ReLU6 over the image, then
    block 1 (no expansion): depthwise 3x3 + BN + ReLU6, project 1x1 + BN."""

    def __init__(self, channels, out_channels, stride=1):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, 2, pad_mode="pad", padding=1)
        self.bn0 = nn.BatchNorm2d(channels)
        self.depthwise = nn.Conv2d(channels, channels, 3, stride, pad_mode="pad", padding=1, group=channels)
        self.bn1 = nn.BatchNorm2d(channels)
        self.project = nn.Conv2d(channels, out_channels, 1)
        self.bn2 = nn.BatchNorm2d(out_channels)

    def construct(self, x):
        s = ops.clip_by_value(self.bn0(self.stem(x)), 0.0, 6.0)
        z = ops.clip_by_value(self.bn1(self.depthwise(s)), 0.0, 6.0)
        return self.bn2(self.project(z))


# 96x96x32 floats (1.2 MB) between the stem and block 1: the stem takes the expansion's place, its
# padded input strip copied per row (the image is NCHW: read in place by the copy); block 1 as in
# MobileNetV2 (stride 1) and with a stride-2 depthwise (two new stem rows per output row)
@pytest.mark.parametrize("stride", [1, 2], ids=["stride1", "stride2"])
def test_stem_convolution_joins_the_first_block(stride):
    net = randomize(StemBlock(32, 16, stride), seed=11)
    net.set_train(False)
    x = np.random.default_rng(8).standard_normal((1, 3, 192, 192)).astype(np.float32)
    p = torch_params(net)
    s = torch.clamp(batch_norm(F.conv2d(t(x), p["stem.weight"], None, 2, 1), p, "bn0"), 0, 6)
    z = torch.clamp(batch_norm(F.conv2d(s, p["depthwise.weight"], None, stride, 1, 1, 32), p, "bn1"), 0, 6)
    want = batch_norm(F.conv2d(z, p["project.weight"]), p, "bn2")
    assert_close(net(Tensor(x)), want)
    rules = kernel_rules(net, x)
    assert list(rules.values()) == ["inverted_residual"], rules
    assert_rows_interleaved(merged_kernel(net, x))
