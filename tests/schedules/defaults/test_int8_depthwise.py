"""int8 depthwise convolutions (``int8_depthwise``): pairs of taps as int16, ``vpmaddwd`` on AVX2 and on
AVX-512; bit-exact against numpy integer arithmetic written from the formulas, for targets pinned to
AVX2 (haswell) and AVX-512 (znver4, skylake-avx512)."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import Tensor, ops
from schedules import target as targets

from conftest import _host_has
from default_schedule_helpers import lowered_kernels, rules_used

RNG = np.random.default_rng(261)
# LLVM CPU name: (the host feature it needs, the pair instruction's LLVM intrinsic)
CPUS = {"haswell": ("avx2", "llvm.x86.avx2.pmadd.wd"),
        "skylake-avx512": ("avx512bw", "llvm.x86.avx2.pmadd.wd"),  # AVX-512 without VNNI: the 256-bit form
        "znver4": ("avx512_vnni", "llvm.x86.avx512.pmaddw.d.512")}


@pytest.fixture(params=list(CPUS))
def cpu(request, monkeypatch) -> str:
    feature = CPUS[request.param][0]
    if not _host_has(feature):
        pytest.skip(f"the host has no {feature}")
    monkeypatch.setenv(targets.MCPU_ENV, request.param)
    return request.param


def depthwise_ref(x, w, zx, stride, pad):
    """``sum((x - zx) * w)`` per channel in int64, the input zero-padded after subtracting ``zx``."""
    x = np.pad(x.astype(np.int64) - zx, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, width = x.shape
    _, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (width - kw) // stride + 1
    out = np.zeros((n, c, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            out += patch * w[None, :, 0, i, j, None, None].astype(np.int64)
    return out


# (input dtype, channels, size, kernel, stride, padding): channels off whole vectors, odd and even
# kernel widths (a zero tap completes the last pair), stride 2, extreme operands of both signs
SHAPES = [("uint8", 7, 9, 3, 1, 1), ("uint8", 40, 12, 3, 2, 1), ("int8", 20, 8, 5, 1, 2),
          ("uint8", 16, 7, 2, 1, 0), ("int8", 33, 11, 3, 2, 1)]


@pytest.mark.parametrize("xdtype, c, hw, k, stride, pad", SHAPES)
def test_int8_depthwise_is_exact(cpu, xdtype, c, hw, k, stride, pad):
    info = np.iinfo(xdtype)
    x = RNG.integers(info.min, info.max + 1, (1, c, hw, hw)).astype(xdtype)
    w = RNG.integers(-128, 128, (c, 1, k, k)).astype(np.int8)
    x.flat[:3], w.flat[:3] = info.max, -128  # the largest products
    zx = 131 if xdtype == "uint8" else -5
    acc = ops.int8_conv2d(Tensor(x), Tensor(w), zx, None, stride, "pad", pad, 1, c).asnumpy()
    assert acc.dtype == np.int32
    np.testing.assert_array_equal(acc, depthwise_ref(x, w, zx, stride, pad))


def test_requantized_depthwise_is_exact_and_uses_the_pair_instruction(cpu):
    c = 24
    x = RNG.integers(0, 256, (1, c, 10, 10)).astype(np.uint8)
    w = RNG.integers(-128, 128, (c, 1, 3, 3)).astype(np.int8)
    bias = RNG.integers(-500, 500, c).astype(np.int32)
    multiplier = (RNG.random(c) * 2e-3 + 1e-4).astype(np.float32)

    def net(v, w_=Tensor(w), bias_=Tensor(bias), multiplier_=Tensor(multiplier)):
        acc = ops.int8_conv2d(v, w_, 3, None, 1, "pad", 1, 1, c)
        return ops.int8_requantize(acc, bias_, multiplier_, 10, 0, 255, "uint8")

    y = net(Tensor(x)).asnumpy()
    total = (depthwise_ref(x, w, 3, 1, 1) + bias[None, :, None, None]).astype(np.float32)
    expected = np.clip(np.round(total * multiplier[None, :, None, None]) + 10, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(y, expected)
    specs = [("x", x.shape, "uint8")]
    rules = rules_used(net, specs)
    assert [rule for name, rule in rules.items() if "dwconv" in name] == ["int8_depthwise"], rules
    text = "\n".join(body for name, body in lowered_kernels(net, specs).items() if "dwconv" in name)
    assert CPUS[cpu][1] in text
