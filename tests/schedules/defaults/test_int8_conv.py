"""int8 convolutions (``int8_conv``): packed weights, vpdpbusd (AVX-512 VNNI) or vpmaddwd (AVX2), the
requantization in the epilogue; bit-exact against numpy integer arithmetic written from the formulas."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import Tensor, nn, ops
from aotnn.common.parameter import Parameter
from schedules import target as targets

from conftest import _host_has
from default_schedule_helpers import lowered_kernels, rules_used

RNG = np.random.default_rng(26)
# LLVM CPU names: AVX2 without AVX-512, AVX2 with AVX-VNNI (no AVX-512), the oldest CPU with AVX-512 VNNI
CPUS = {"haswell": "avx2", "alderlake": "avx_vnni", "cascadelake": "avx512_vnni"}
DOT_INSTRUCTION = {"haswell": "llvm.x86.avx2.pmadd.wd", "alderlake": "llvm.x86.avx512.vpdpbusd.256",
                   "cascadelake": "llvm.x86.avx512.vpdpbusd.512"}


@pytest.fixture(params=list(CPUS))
def int8_cpu(request, monkeypatch) -> str:
    """Host kernels built for one of :data:`CPUS` (skipped where the host lacks its instructions)."""
    if not _host_has(CPUS[request.param]):
        pytest.skip(f"the host has no {CPUS[request.param]}")
    monkeypatch.setenv(targets.MCPU_ENV, request.param)
    return request.param


def conv_ref(x, w, zx, stride, pad, groups=1):
    """``sum((x - zx) * w)`` in int64 over the input zero-padded after subtracting ``zx`` (real zero)."""
    x = np.pad(x.astype(np.int64) - zx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, width = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (width - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.int64)
    per_group = o // groups
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            for g in range(groups):
                out[:, g * per_group:(g + 1) * per_group] += np.einsum(
                    "nchw,oc->nohw", patch[:, g * cg:(g + 1) * cg], w[g * per_group:(g + 1) * per_group, :, i, j])
    return out


def requantize_ref(acc, bias, multiplier, zero_point, low, high):
    """int32 accumulators + bias, times the float32 multiplier, round half to even, shift, clamp."""
    total = (acc + bias[None, :, None, None]).astype(np.float32) * multiplier[None, :, None, None]
    return np.clip(np.round(total) + zero_point, low, high).astype(np.uint8)


def _operands(xdtype, n, c, hw, o, cg, k):
    info = np.iinfo(xdtype)
    x = RNG.integers(info.min, info.max + 1, (n, c, hw, hw)).astype(xdtype)
    w = RNG.integers(-128, 128, (o, cg, k, k)).astype(np.int8)
    return x, w


# (input dtype, batch, in channels, size, out channels, kernel, stride, padding): channel counts off
# multiples of 4 and 16, output widths off whole tiles, stride 2, padding, a signed input (+128 shift)
SHAPES = [
    ("uint8", 2, 5, 9, 7, 3, 1, 1),
    ("uint8", 1, 3, 11, 20, 3, 2, 1),
    ("uint8", 1, 16, 7, 33, 1, 1, 0),
    ("uint8", 1, 24, 10, 16, 1, 2, 0),
    ("int8", 2, 6, 12, 17, 5, 1, 2),
]


@pytest.mark.parametrize("xdtype, n, c, hw, o, k, stride, pad", SHAPES)
def test_int8_conv2d_is_exact(int8_cpu, xdtype, n, c, hw, o, k, stride, pad):
    x, w = _operands(xdtype, n, c, hw, o, c, k)
    zx = 7 if xdtype == "uint8" else -5
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), zx, None, stride, "pad", pad, 1, 1).asnumpy()
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, conv_ref(x, w, zx, stride, pad))


@pytest.mark.parametrize("c, hw, k, stride, pad", [(7, 9, 3, 1, 1), (20, 12, 3, 2, 1), (5, 8, 5, 1, 2)])
def test_int8_depthwise_is_exact(int8_cpu, c, hw, k, stride, pad):
    x, w = _operands("uint8", 1, c, hw, c, 1, k)
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), 131, None, stride, "pad", pad, 1, c).asnumpy()
    np.testing.assert_array_equal(acc, conv_ref(x, w, 131, stride, pad, groups=c))


def test_int8_conv2d_with_requantize_is_exact(int8_cpu):
    x, w = _operands("uint8", 1, 10, 9, 21, 10, 3)
    bias = RNG.integers(-3000, 3000, 21).astype(np.int32)
    multiplier = RNG.uniform(2e-4, 2e-3, 21).astype(np.float32)
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), 9, None, 2, "pad", 1, 1, 1)
    y = ops.int8_requantize(acc, Tensor(bias), Tensor(multiplier), 4, 4, 255, "uint8").asnumpy()
    want = requantize_ref(conv_ref(x, w, 9, 2, 1), bias, multiplier, 4, 4, 255)
    assert 0.2 < np.mean((want > 4) & (want < 255))  # the clamp does not hide most of the values
    np.testing.assert_array_equal(y, want)


def test_int8_convolutions_take_the_int8_conv_rule(int8_cpu):
    w = Tensor(RNG.integers(-128, 128, (20, 6, 3, 3)).astype(np.int8))
    wd = Tensor(RNG.integers(-128, 128, (20, 1, 3, 3)).astype(np.int8))
    bias, multiplier = Tensor(np.zeros(20, np.int32)), Tensor(np.full(20, 1e-3, np.float32))

    def net(x):
        y = ops.int8_requantize(ops.int8_conv2d(x, w, 7, None, 1, "pad", 1, 1, 1), bias, multiplier, 0, 0, 255,
                                "uint8")
        return ops.int8_conv2d(y, wd, 0, None, 2, "pad", 1, 1, 20)

    rules = rules_used(net, [("x", (1, 6, 10, 10), "uint8")])
    convs = {name: rule for name, rule in rules.items() if "conv2d" in name}
    assert sorted(convs.values()) == ["conv2d", "int8_conv"], rules  # depthwise: the float kernel's schedule
    assert any("aotnn_int8_conv2d" in name for name in convs), rules
    assert any("aotnn_int8_dwconv2d" in name for name in convs), rules


def test_int8_requantize_epilogue_rounds_ties_to_even(int8_cpu):
    # multiplier 1/2 and small operands: every odd accumulator lands on a tie (x.5), which rounds to even
    x = RNG.integers(0, 4, (1, 8, 9, 9)).astype(np.uint8)
    w = RNG.integers(-2, 3, (16, 8, 3, 3)).astype(np.int8)
    bias = RNG.integers(-20, 20, 16).astype(np.int32)
    multiplier = np.full(16, 0.5, np.float32)
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), 1, None, 1, "pad", 1, 1, 1)
    y = ops.int8_requantize(acc, Tensor(bias), Tensor(multiplier), 128, 0, 255, "uint8").asnumpy()
    exact = conv_ref(x, w, 1, 1, 1) + bias[None, :, None, None]
    assert np.mean(exact % 2 == 1) > 0.3 and np.abs(exact).max() < 250
    np.testing.assert_array_equal(y, (np.round(exact / 2) + 128).astype(np.uint8))  # numpy rounds half to even


class _Chain(nn.Cell):
    """conv -> requantize -> (strided conv, depthwise conv), one compiled graph."""

    def __init__(self, w1, bias, multiplier, w2, wd):
        super().__init__()
        self.w1, self.w2, self.wd = (Parameter(Tensor(v), name=n) for v, n in ((w1, "w1"), (w2, "w2"), (wd, "wd")))
        self.bias, self.multiplier = Parameter(Tensor(bias), name="bias"), Parameter(Tensor(multiplier), name="m")

    def construct(self, x):
        y = ops.int8_requantize(ops.int8_conv2d(x, self.w1, 3, None, 1, "pad", 1, 1, 1), self.bias, self.multiplier,
                                5, 5, 255, "uint8")
        return (y, ops.int8_conv2d(y, self.w2, 5, None, 2, "pad", 1, 1, 1),
                ops.int8_conv2d(y, self.wd, 5, None, 1, "pad", 1, 1, 12))


def test_chained_int8_convolutions_are_exact(int8_cpu):
    # the second convolution and the depthwise one read the first one's channels-last uint8 output
    x, w1 = _operands("uint8", 1, 6, 10, 12, 6, 3)
    w2 = RNG.integers(-128, 128, (9, 12, 3, 3)).astype(np.int8)
    wd = RNG.integers(-128, 128, (12, 1, 3, 3)).astype(np.int8)
    bias = RNG.integers(-3000, 3000, 12).astype(np.int32)
    multiplier = RNG.uniform(2e-4, 1e-3, 12).astype(np.float32)
    y, z, d = (t.asnumpy() for t in _Chain(w1, bias, multiplier, w2, wd)(Tensor(x)))
    y_ref = requantize_ref(conv_ref(x, w1, 3, 1, 1), bias, multiplier, 5, 5, 255)
    np.testing.assert_array_equal(y, y_ref)
    np.testing.assert_array_equal(z, conv_ref(y_ref, w2, 5, 2, 1))
    np.testing.assert_array_equal(d, conv_ref(y_ref, wd, 5, 1, 1, groups=12))


class _Residual(nn.Cell):
    """conv -> requantize (y) -> 1x1 conv whose dequantized result is added to dequantized y (the skip) ->
    quantize: an int8 residual block's projection, as conversion emits it."""

    def __init__(self, w1, w2, bias, multiplier, scale2):
        super().__init__()
        self.w1, self.w2 = Parameter(Tensor(w1), name="w1"), Parameter(Tensor(w2), name="w2")
        self.bias, self.multiplier = Parameter(Tensor(bias), name="bias"), Parameter(Tensor(multiplier), name="m")
        self.scale2 = Parameter(Tensor(scale2), name="scale2")
        self.skip_scale = Parameter(Tensor(np.array([SKIP_SCALE], np.float32)), name="skip_scale")
        self.out_scale = Parameter(Tensor(np.array([OUT_SCALE], np.float32)), name="out_scale")

    def construct(self, x):
        y = ops.int8_requantize(ops.int8_conv2d(x, self.w1, 3, None, 1, "pad", 1, 1, 1), self.bias, self.multiplier,
                                5, 0, 255, "uint8")
        projected = ops.int8_dequantize(ops.int8_conv2d(y, self.w2, 5, None, 1, "pad", 0, 1, 1), self.scale2, 0)
        total = projected + ops.int8_dequantize(y, self.skip_scale, 5)
        return y, ops.int8_quantize(total, self.out_scale, 7, 0, 255, "uint8")


SKIP_SCALE, OUT_SCALE = 0.05, 0.08


def _residual_operands():
    x, w1 = _operands("uint8", 1, 8, 20, 24, 8, 3)
    w2 = RNG.integers(-128, 128, (24, 24, 1, 1)).astype(np.int8)
    bias = RNG.integers(-3000, 3000, 24).astype(np.int32)
    multiplier = RNG.uniform(2e-4, 1e-3, 24).astype(np.float32)
    scale2 = RNG.uniform(1e-4, 4e-4, 24).astype(np.float32)
    return x, w1, w2, bias, multiplier, scale2


def test_residual_projection_is_exact(int8_cpu):
    x, w1, w2, bias, multiplier, scale2 = _residual_operands()
    y, out = (t.asnumpy() for t in _Residual(w1, w2, bias, multiplier, scale2)(Tensor(x)))
    y_ref = requantize_ref(conv_ref(x, w1, 3, 1, 1), bias, multiplier, 5, 0, 255)
    np.testing.assert_array_equal(y, y_ref)
    projected = conv_ref(y_ref, w2, 5, 1, 0).astype(np.float32) * scale2[None, :, None, None]
    total = projected + (y_ref.astype(np.float32) - 5) * np.float32(SKIP_SCALE)
    want = np.clip(np.rint(total / np.float32(OUT_SCALE)) + 7, 0, 255).astype(np.uint8)
    assert 0.5 < np.mean((want > 0) & (want < 255))
    np.testing.assert_array_equal(out, want)


def test_residual_projection_runs_as_one_loop_nest(int8_cpu):
    """The skip operand's dequantize and the sum's quantize run inside the convolution's tiles: left as
    blocks of their own they were serial whole-map loops (MobileNetV2's 56x56 projection: 5x slower)."""
    import schedules.defaults as defaults
    from default_schedule_helpers import _host_kernels

    operands = _residual_operands()[1:]
    net = _Residual(*operands)
    kernels, target = _host_kernels(lambda v: net(v), [("x", (1, 8, 20, 20), "uint8")])
    cpu = defaults.cpu_info(target)
    fused = {gv.name_hint: func for gv, func in kernels.functions.items()
             if "int8_conv2d" in gv.name_hint and "divide" in gv.name_hint}  # the sum quantized: x / scale
    assert len(fused) == 1, [gv.name_hint for gv in kernels.functions]
    scheduled, rule = defaults.schedule_with_rule(next(iter(fused.values())), cpu, target)
    assert rule == "int8_conv"
    text = scheduled.script()
    root_loops = [line for line in text.splitlines() if line.startswith("    for ")]
    copies = 1 if 'sblock("aotnn_int8_conv2d_pad")' in text else 0  # AVX2: the input widened to int16 once
    assert len(root_loops) == 1 + copies, root_loops


def test_each_cpu_gets_its_dot_product_instruction(int8_cpu):
    """vpmaddwd on AVX2, the 256-bit vpdpbusd on AVX-VNNI CPUs without AVX-512, the 512-bit one on AVX-512 VNNI."""
    w = Tensor(RNG.integers(-128, 128, (16, 8, 3, 3)).astype(np.int8))
    lowered = lowered_kernels(lambda v: ops.int8_conv2d(v, w, 3, None, 1, "pad", 1, 1, 1), [("x", (1, 8, 9, 9), "uint8")])
    conv = [text for name, text in lowered.items() if "aotnn_int8_conv2d" in name and "pack" not in name]
    assert len(conv) == 1, list(lowered)
    used = {name for name in DOT_INSTRUCTION.values() if name in conv[0]}
    assert used == {DOT_INSTRUCTION[int8_cpu]}, used
