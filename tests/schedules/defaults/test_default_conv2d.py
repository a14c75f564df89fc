"""Convolutions under the default CPU schedules (NHWC, packed weights) against PyTorch."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, lowered_kernels, randomize, rules_used, scalarized_loops, t
from schedules.defaults.conv2d import plan_conv2d, plan_depthwise, use_flat
from schedules.defaults.cpu import CpuInfo

AVX2 = CpuInfo(256, 16, 2)
AVX512 = CpuInfo(512, 32, 2)
NEON = CpuInfo(128, 32, 1)
AARCH64 = CpuInfo(128, 32, 1, fma_by_lane=True)  # FMA by element: one input vector per tile pixel

# (batch, in, out, height, width, kernel, stride, padding, dilation, groups)
CASES = {
    "3x3_odd_channels_and_width": (1, 5, 10, 9, 11, 3, 1, 1, 1, 1),
    "5x5_stride2_batch2": (2, 8, 24, 13, 13, 5, 2, 2, 1, 1),
    "1x1": (1, 16, 32, 10, 10, 1, 1, 0, 1, 1),
    "dilated": (1, 6, 12, 12, 12, 3, 1, 2, 2, 1),
    "grouped": (1, 8, 24, 11, 11, 3, 1, 1, 1, 2),
    "depthwise_stride2_odd_channels": (1, 20, 20, 15, 15, 3, 2, 1, 1, 20),
    "depthwise_multiplier2": (1, 8, 16, 9, 9, 3, 1, 1, 1, 8),
    "rows_in_parallel": (1, 64, 64, 14, 14, 3, 1, 1, 1, 1),
    "deep_layer_channel_blocks": (1, 96, 160, 7, 7, 3, 1, 1, 1, 1),
    "7x7_stride2_three_inputs": (1, 3, 16, 20, 20, 7, 2, 3, 1, 1),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_conv2d_matches_torch(case):
    n, cin, cout, h, w, k, stride, pad, dilation, groups = CASES[case]
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    weight = (rng.standard_normal((cout, cin // groups, k, k)) / np.sqrt(k * k * cin / groups)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    net = nn.Conv2d(cin, cout, k, stride, pad_mode="pad", padding=pad, dilation=dilation, group=groups,
                    has_bias=True, weight_init=Tensor(weight), bias_init=Tensor(bias))
    want = F.conv2d(t(x), t(weight), t(bias), stride, pad, dilation, groups)
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    conv_kernels = [name for name in rules if "conv2d" in name and "pack" not in name]
    assert conv_kernels and all(rules[name] == "conv2d" for name in conv_kernels), rules


class ConvBnAct(nn.Cell):
    """conv -> batch norm -> activation (+ the input): the epilogue fuses into the convolution."""

    def __init__(self, channels, activation):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.activation = activation

    def construct(self, x):
        return self.activation(self.bn(self.conv(x))) + x


@pytest.mark.parametrize("activation", ["relu6", "leaky_relu", "hswish"])
def test_fused_epilogues(activation):
    act = {"relu6": nn.ReLU6(), "leaky_relu": nn.LeakyReLU(0.1), "hswish": nn.HSwish()}[activation]
    ref = {"relu6": F.relu6, "leaky_relu": lambda v: F.leaky_relu(v, 0.1), "hswish": F.hardswish}[activation]
    net = randomize(ConvBnAct(12, act), seed=3)
    net.set_train(False)
    x = np.random.default_rng(4).standard_normal((1, 12, 10, 10)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    y = F.conv2d(t(x), p["conv.weight"], None, 1, 1)
    y = F.batch_norm(y, p["bn.moving_mean"], p["bn.moving_variance"], p["bn.gamma"], p["bn.beta"], False, 0.0, 1e-5)
    assert_close(net(Tensor(x)), ref(y) + t(x))
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    fused = [name for name in rules if "conv2d" in name and "pack" not in name]
    assert len(fused) == 1 and rules[fused[0]] == "conv2d", rules


class ConvRelu6(nn.Cell):
    """conv (16 output channels: a two-register tile) -> ReLU6, or -> batch norm -> ReLU6."""

    def __init__(self, with_bn):
        super().__init__()
        self.conv = nn.Conv2d(8, 16, 1)
        self.bn = nn.BatchNorm2d(16) if with_bn else None
        self.act = nn.ReLU6()

    def construct(self, x):
        y = self.conv(x)
        return self.act(self.bn(y) if self.bn is not None else y)


@pytest.mark.parametrize("with_bn", [False, True], ids=["plain", "batch_norm"])
def test_relu6_epilogue_clamps_to_positive_zero(with_bn):
    # the write-back's max(x, 0) must give +0.0 (not -0.0) below zero, as torch does
    net = randomize(ConvRelu6(with_bn), seed=11)
    net.set_train(False)
    x = np.random.default_rng(12).standard_normal((1, 8, 6, 6)).astype(np.float32)
    p = torch_params_of(net)
    y = F.conv2d(t(x), p["conv.weight"])
    if with_bn:
        y = F.batch_norm(y, p["bn.moving_mean"], p["bn.moving_variance"], p["bn.gamma"], p["bn.beta"], False, 0.0, 1e-5)
    want = F.relu6(y).numpy()
    got = net(Tensor(x)).asnumpy()
    assert_close(got, want)
    zeros = want == 0
    assert zeros.sum() > 20 and not np.signbit(want[zeros]).any() and not np.signbit(got[zeros]).any()


def torch_params_of(cell):
    return {name: t(param.asnumpy()) for name, param in cell.parameters_and_names()}


class ConvThenNCHW(nn.Cell):
    """Ops that need NCHW after a convolution: a flatten, a transpose, a channel concat."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, pad_mode="same", has_bias=True)

    def construct(self, x):
        y = ops.relu(self.conv(x))
        flat = ops.reshape(y, (y.shape[0], -1))
        swapped = ops.transpose(y, (0, 2, 3, 1))
        joined = ops.concat((y, x), axis=1)
        return flat, swapped, joined, y


def test_layout_returns_to_nchw_where_needed():
    net = randomize(ConvThenNCHW(), seed=5)
    x = np.random.default_rng(6).standard_normal((2, 4, 7, 9)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    y = F.relu(F.conv2d(t(x), p["conv.weight"], p["conv.bias"], 1, 1))
    flat, swapped, joined, plain = net(Tensor(x))
    assert_close(flat, y.reshape(2, -1))
    assert_close(swapped, y.permute(0, 2, 3, 1))
    assert_close(joined, torch.cat([y, t(x)], 1))
    assert_close(plain, y)


def test_float64_convolution_keeps_the_generic_kernel():
    x = np.random.default_rng(7).standard_normal((1, 3, 6, 6))
    weight = np.random.default_rng(8).standard_normal((4, 3, 3, 3))
    out = ops.conv2d(Tensor(x), Tensor(weight), pad_mode="pad", padding=1)
    assert_close(out, F.conv2d(t(x), t(weight), None, 1, 1), tol=1e-10)


@pytest.mark.parametrize("cpu", [AVX2, AVX512, NEON], ids=["avx2", "avx512", "neon"])
@pytest.mark.parametrize("oc,ow", [(64, 56), (24, 28), (10, 7), (1000, 1), (3, 112), (512, 7)])
def test_conv_tiles_fit_the_registers(cpu, oc, ow):
    plan = plan_conv2d(cpu, oc, oc, ow, "float32")
    lanes = cpu.lanes("float32")
    vectors = -(-plan.oc_block // lanes)
    assert plan.ow_block * vectors + vectors + 1 <= cpu.vector_registers
    assert plan.oc_padded % plan.oc_block == 0 and plan.oc_padded >= oc
    assert plan.ow_padded % plan.ow_block == 0 and ow <= plan.ow_padded < ow + plan.ow_block
    if oc % lanes == 0:
        assert plan.oc_block % lanes == 0 and plan.oc_padded == oc


@pytest.mark.parametrize("oc,ow", [(64, 56), (24, 28), (10, 7), (1000, 1), (1280, 49), (512, 7), (96, 112)])
def test_fma_by_lane_tiles_keep_an_input_vector_per_pixel(oc, ow):
    # accumulators, the weight vectors and one staged input vector per pixel (lane_fma.py) in 32 registers
    plan = plan_conv2d(AARCH64, oc, oc, ow, "float32")
    vectors = -(-plan.oc_block // 4)
    assert plan.ow_block * (vectors + 1) + vectors <= 32
    assert plan.ow_padded % plan.ow_block == 0 and ow <= plan.ow_padded < ow + plan.ow_block
    # a 4-pixel tile of two vectors at least wherever the row allows it
    assert plan.ow_block >= min(ow, 4) and plan.oc_block >= min(oc, 4)


def test_only_fma_by_lane_changes_the_tiles():
    for oc, ow in [(64, 56), (1280, 49), (24, 28)]:
        assert plan_conv2d(NEON, oc, oc, ow, "float32") == plan_conv2d(CpuInfo(128, 32, 1, fma_by_lane=False), oc, oc,
                                                                         ow, "float32")


def test_depthwise_tiles_divide_the_channels():
    for channels in (32, 96, 20, 7, 144):
        plan = plan_depthwise(AVX2, channels, 14, "float32")
        assert channels % plan.oc_block == 0


# 3x3 stride-1 'same' convolutions over even sizes run as Winograd F(2x2, 3x3)
WINOGRAD_CASES = {
    "winograd_square": (1, 16, 24, 12, 12),
    "winograd_batch2_odd": (2, 8, 16, 7, 13),
}


class TwoConvs(nn.Cell):
    """A convolution on the network's NCHW input, then one on its channels-last result (Winograd)."""

    def __init__(self, cin, cout, first, second, bias):
        super().__init__()
        self.first = nn.Conv2d(cin, cin, 3, pad_mode="pad", padding=1, weight_init=Tensor(first))
        self.second = nn.Conv2d(cin, cout, 3, pad_mode="pad", padding=1, has_bias=True, weight_init=Tensor(second),
                                bias_init=Tensor(bias))

    def construct(self, x):
        return self.second(self.first(x))


@pytest.mark.parametrize("case", list(WINOGRAD_CASES), ids=list(WINOGRAD_CASES))
def test_winograd_convolution_matches_torch(case):
    n, cin, cout, h, w = WINOGRAD_CASES[case]
    rng = np.random.default_rng(len(case) + 11)
    x = rng.standard_normal((n, cin, h, w)).astype(np.float32)
    first = (rng.standard_normal((cin, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    second = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    bias = rng.standard_normal(cout).astype(np.float32)
    net = TwoConvs(cin, cout, first, second, bias)
    want = F.conv2d(F.conv2d(t(x), t(first), None, 1, 1), t(second), t(bias), 1, 1)
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    wino = {name: rule for name, rule in rules.items() if "wino" in name and "pack" not in name}
    assert len(wino) == 2 and all(rule == "winograd" for rule in wino.values()), rules
    products = [name for name in rules if "conv2d" in name and "pack" not in name]
    assert len(products) == 2 and all(rules[name] == "conv2d" for name in products), rules


def test_winograd_fuses_batch_norm_residual_and_activation():
    net = randomize(nn.SequentialCell([ConvBnAct(16, nn.ReLU()), ConvBnAct(16, nn.ReLU())]), seed=12)
    net.set_train(False)
    x = np.random.default_rng(13).standard_normal((1, 16, 12, 12)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    y = t(x)
    for i in range(2):
        z = F.conv2d(y, p[f"{i}.conv.weight"], None, 1, 1)
        z = F.batch_norm(z, p[f"{i}.bn.moving_mean"], p[f"{i}.bn.moving_variance"], p[f"{i}.bn.gamma"],
                         p[f"{i}.bn.beta"], False, 0.0, 1e-5)
        y = F.relu(z) + y
    assert_close(net(Tensor(x)), y)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    outputs = [name for name in rules if "wino_output" in name]
    # the epilogue is in the output transform's kernel; the statistics stay out of it (parameters only)
    assert len(outputs) == 1 and "relu" in outputs[0] and "sqrt" not in outputs[0], rules


class ConvThenSmallMap(nn.Cell):
    """A convolution on the NCHW input, then one onto a small map with many channels (flat tiles)."""

    def __init__(self, cin, cout, kernel, stride, padding):
        super().__init__()
        self.first = nn.Conv2d(cin, cin, 3, pad_mode="pad", padding=1)
        self.second = nn.Conv2d(cin, cout, kernel, stride, pad_mode="pad", padding=padding, has_bias=True)

    def construct(self, x):
        return ops.relu(self.second(self.first(x))) + 1.0


# (in, out, size, kernel, stride, padding): 7x7 outputs
FLAT_CASES = {"flat_1x1": (16, 128, 7, 1, 1, 0), "flat_3x3_stride2": (8, 128, 13, 3, 2, 1)}


@pytest.mark.parametrize("case", list(FLAT_CASES), ids=list(FLAT_CASES))
def test_flat_convolution_matches_torch(case):
    cin, cout, size, k, stride, pad = FLAT_CASES[case]
    net = randomize(ConvThenSmallMap(cin, cout, k, stride, pad), seed=len(case))
    assert use_flat(AVX2, cout, cout, 7, 7) is not None
    x = np.random.default_rng(14).standard_normal((1, cin, size, size)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    y = F.conv2d(t(x), p["first.weight"], None, 1, 1)
    y = F.relu(F.conv2d(y, p["second.weight"], p["second.bias"], stride, pad)) + 1.0
    assert_close(net(Tensor(x)), y)


def test_flat_tiles_only_for_small_maps_with_many_channels():
    assert use_flat(AVX2, 512, 512, 7, 7) is not None
    assert use_flat(AVX2, 16 * 256, 256, 7, 7) is not None  # Winograd's products of a 14x14 map
    assert use_flat(AVX2, 64, 64, 56, 56) is None
    assert use_flat(AVX2, 64, 64, 7, 7) is None  # too few channel blocks to share among the cores


class InvertedResidual(nn.Cell):
    """MobileNetV2's block on channels-last activations: 1x1 expand, 3x3 depthwise, 1x1 project (+ input)."""

    def __init__(self, channels, expanded):
        super().__init__()
        self.stem = nn.Conv2d(channels, channels, 3, pad_mode="pad", padding=1)
        self.expand = nn.Conv2d(channels, expanded, 1, has_bias=True)
        self.depthwise = nn.Conv2d(expanded, expanded, 3, pad_mode="pad", padding=1, group=expanded, has_bias=True)
        self.project = nn.Conv2d(expanded, channels, 1, has_bias=True)

    def construct(self, x):
        y = self.stem(x)
        z = ops.clip_by_value(self.expand(y), 0.0, 6.0)
        z = ops.clip_by_value(self.depthwise(z), 0.0, 6.0)
        return self.project(z) + y


@pytest.mark.parametrize("channels,expanded", [(24, 144), (48, 96)])
def test_inverted_residual_with_partial_tiles_matches_torch(channels, expanded):
    # 29 columns: the 1x1 convolutions' last tile is partial (they read the last pixel again
    # instead of copying the input); 24 and 48 output channels take 3-vector tiles (AVX2 and
    # AVX-512); the depthwise map is wide enough for two vectors of channels per tile
    net = randomize(InvertedResidual(channels, expanded), seed=channels)
    x = np.random.default_rng(21).standard_normal((1, channels, 29, 29)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    y = F.conv2d(t(x), p["stem.weight"], None, 1, 1)
    z = torch.clamp(F.conv2d(y, p["expand.weight"], p["expand.bias"]), 0, 6)
    z = torch.clamp(F.conv2d(z, p["depthwise.weight"], p["depthwise.bias"], 1, 1, 1, expanded), 0, 6)
    want = F.conv2d(z, p["project.weight"], p["project.bias"]) + y
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    convs = [name for name in rules if "conv2d" in name and "pack" not in name]
    # stem and expand on their own; depthwise + project merged into one kernel (dw_pointwise)
    assert sorted(rules[name] for name in convs) == ["conv2d", "conv2d", "dw_pointwise"], rules


def test_three_vector_tiles_for_channels_two_vectors_do_not_divide():
    assert plan_conv2d(AVX2, 24, 24, 56, "float32").oc_block == 24
    assert plan_conv2d(AVX512, 48, 48, 56, "float32").oc_block == 48
    assert plan_conv2d(AVX2, 32, 32, 56, "float32").oc_block == 16  # two vectors divide: unchanged


def test_depthwise_takes_two_vectors_on_wide_maps_only():
    assert plan_depthwise(AVX2, 96, 56, "float32").oc_block == 16
    assert plan_depthwise(AVX2, 96, 14, "float32").oc_block == 8


def test_padded_copy_of_a_channels_last_input_runs_on_vectors():
    """A strided deep convolution (ResNet-18's 56x56x64 -> 28x28x128) pads its NHWC input once;
    the copy's vectors stay within a pixel's channels, where the border test is one value per
    vector (vectors across pixels made TVM scalarize the copy). Checked against PyTorch too."""
    rng = np.random.default_rng(3)
    w0 = (rng.standard_normal((64, 64, 3, 3)) / 24).astype(np.float32)
    w1 = (rng.standard_normal((128, 64, 3, 3)) / 24).astype(np.float32)
    first = nn.Conv2d(64, 64, 3, pad_mode="pad", padding=1, weight_init=Tensor(w0))
    strided = nn.Conv2d(64, 128, 3, stride=2, pad_mode="pad", padding=1, weight_init=Tensor(w1))
    relu = nn.ReLU()

    def net(v):
        return relu(strided(relu(first(v))))

    lowered = lowered_kernels(net, [("x", (1, 64, 56, 56), "float32")])
    scalar = {name: scalarized_loops(text) for name, text in lowered.items()}
    assert not any(scalar.values()), scalar
    x = rng.standard_normal((1, 64, 56, 56)).astype(np.float32)
    want = F.relu(F.conv2d(F.relu(F.conv2d(t(x), t(w0), padding=1)), t(w1), stride=2, padding=1))
    assert_close(net(Tensor(x)), want, 1e-5)
