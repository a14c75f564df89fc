"""int8 convolutions on Cortex-M4 (``int8_dsp``: smlad/sxtb16/uxtb16 dot products, the requantization rounded by
``vcvtr``, a pooling summed tile by tile), run bare metal under qemu-system-arm, bit-exact against numpy integer
arithmetic written from the formulas."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import aotnn
from aotnn import nn, ops
from aotnn.common.parameter import Parameter
from schedules.embedded_mcu import qemu_command
from tests.schedules.defaults.test_int8_conv import conv_ref, requantize_ref
from tests.schedules.test_mcu import BOARDS, HAVE_TOOLS

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                                                       "and qemu-system-arm (tools/install.sh installs them)")
RNG = np.random.default_rng(2026)


def _param(value: np.ndarray, name: str) -> Parameter:
    return Parameter(aotnn.Tensor(value), name=name)


class _ConvChain(nn.Cell):
    """3x3 convolution (padding with the zero point) -> requantize -> depthwise 3x3 -> requantize ->
    1x1 convolution -> requantize: uint8 all the way."""

    def __init__(self, w1, wd, w2, requant):
        super().__init__()
        self.w1, self.wd, self.w2 = _param(w1, "w1"), _param(wd, "wd"), _param(w2, "w2")
        self.requant = [(_param(b, f"b{i}"), _param(m, f"m{i}")) for i, (b, m) in enumerate(requant)]
        for i, (b, m) in enumerate(self.requant):  # registered as the cell's parameters
            setattr(self, f"b{i}", b)
            setattr(self, f"m{i}", m)

    def construct(self, x):
        (b0, m0), (b1, m1), (b2, m2) = self.requant
        y = ops.int8_requantize(ops.int8_conv2d(x, self.w1, 3, None, 1, "pad", 1, 1, 1), b0, m0, 5, 0, 255, "uint8")
        d = ops.int8_requantize(ops.int8_conv2d(y, self.wd, 5, None, 1, "pad", 1, 1, 16), b1, m1, 2, 0, 255, "uint8")
        return ops.int8_requantize(ops.int8_conv2d(d, self.w2, 2, None, 1, "valid", 0, 1, 1), b2, m2, 9, 0, 255,
                                   "uint8")


class _OneChannelConv(nn.Cell):
    """A one-channel input (too few channels for 4-channel steps: 4 adjacent taps of a kernel row instead),
    a 5x4 kernel, stride 2, zero-point padding -> requantize."""

    def __init__(self, w, bias, multiplier):
        super().__init__()
        self.w, self.bias, self.m = _param(w, "w"), _param(bias, "bias"), _param(multiplier, "m")

    def construct(self, x):
        acc = ops.int8_conv2d(x, self.w, 6, None, 2, "pad", 2, 1, 1)
        return ops.int8_requantize(acc, self.bias, self.m, 1, 0, 255, "uint8")


class _PooledConv(nn.Cell):
    """1x1 convolution -> requantize -> dequantize -> global average pooling (merged into the layer's kernel)."""

    def __init__(self, w, bias, multiplier, scale, size):
        super().__init__()
        self.w, self.bias, self.m = _param(w, "w"), _param(bias, "bias"), _param(multiplier, "m")
        self.scale = _param(scale, "scale")
        self.pool = nn.AvgPool2d(kernel_size=size)

    def construct(self, x):
        q = ops.int8_requantize(ops.int8_conv2d(x, self.w, 4, None, 1, "valid", 0, 1, 1), self.bias, self.m, 3, 0,
                                255, "uint8")
        return self.pool(ops.int8_dequantize(q, self.scale, 3))


def _requant(channels: int, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    return (RNG.integers(-2000, 2000, channels).astype(np.int32),
            RNG.uniform(low, high, channels).astype(np.float32))


def run_on_board(board: str, net, x: np.ndarray, folder: str, out_dtype) -> tuple[np.ndarray, str]:
    """(the bundle's output on qemu's ``board``, the disassembly of its kernels)."""
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=folder, target=board)
    built = subprocess.run(["make", "-s", "-j2"], cwd=bundle, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    x.tofile(os.path.join(bundle, "input0.bin"))
    done = subprocess.run(qemu_command({}, BOARDS[board]), cwd=bundle, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "aotnn: done" in done.stdout + done.stderr, done.stdout + done.stderr
    # the object carries no MVE build attribute: objdump is told the architecture, else Helium is ".word"
    arch = ["-m", "armv8.1-m.main"] if board == "cortex-m55" else []
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", *arch, os.path.join(bundle, "kernels.o")], check=True,
                             capture_output=True, text=True).stdout
    return np.fromfile(os.path.join(bundle, "output0.bin"), dtype=out_dtype), listing


def check_conv_chain(board: str, folder: str) -> str:
    """A 3x3 -> depthwise 3x3 -> 1x1 uint8 chain on ``board`` equals numpy's integer arithmetic; returns the
    kernels' disassembly. 8 input channels, 16 and 12 output channels (tiles of 4), width 7 (odd)."""
    x = RNG.integers(0, 256, (1, 8, 6, 7)).astype(np.uint8)
    w1 = RNG.integers(-128, 128, (16, 8, 3, 3)).astype(np.int8)
    wd = RNG.integers(-128, 128, (16, 1, 3, 3)).astype(np.int8)
    w2 = RNG.integers(-128, 128, (12, 16, 1, 1)).astype(np.int8)
    requant = [_requant(16, 1e-4, 6e-4), _requant(16, 5e-4, 3e-3), _requant(12, 2e-4, 1e-3)]
    out, listing = run_on_board(board, _ConvChain(w1, wd, w2, requant), x, folder, np.uint8)
    (b0, m0), (b1, m1), (b2, m2) = requant
    y = requantize_ref(conv_ref(x, w1, 3, 1, 1), b0, m0, 5, 0, 255)
    d = requantize_ref(conv_ref(y, wd, 5, 1, 1, groups=16), b1, m1, 2, 0, 255)
    want = requantize_ref(conv_ref(d, w2, 2, 1, 0), b2, m2, 9, 0, 255)
    for stage in (y, d, want):  # neither clamp hides most of the values
        assert 0.2 < np.mean((stage > 0) & (stage < 255)), np.mean((stage > 0) & (stage < 255))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    return listing


def test_int8_convolutions_on_cortex_m4_are_exact(tmp_path):
    listing = check_conv_chain("cortex-m4", str(tmp_path / "chain"))  # two smlad steps per pixel
    assert "smlad" in listing and "uxtb16" in listing and "sxtb16" in listing
    assert "vcvtr.s32.f32" in listing


def _as_nchw(out: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The bundle's flat output in ``want``'s NCHW shape, read as NHWC unless it is NCHW already."""
    assert out.size == want.size
    if np.array_equal(out, want.ravel()):
        return out.reshape(want.shape)
    n, c, h, w = want.shape
    return out.reshape(n, h, w, c).transpose(0, 3, 1, 2)


def test_one_channel_int8_convolution_on_cortex_m4_is_exact(tmp_path):
    x = RNG.integers(0, 256, (1, 1, 13, 10)).astype(np.uint8)
    w = RNG.integers(-128, 128, (8, 1, 5, 4)).astype(np.int8)
    bias, multiplier = _requant(8, 5e-4, 3e-3)
    out, listing = run_on_board("cortex-m4", _OneChannelConv(w, bias, multiplier), x, str(tmp_path / "one"), np.uint8)
    want = requantize_ref(conv_ref(x, w, 6, 2, 2), bias, multiplier, 1, 0, 255)
    assert 0.2 < np.mean((want > 0) & (want < 255))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "smlad" in listing


def test_int8_convolution_pooled_on_cortex_m4_is_exact(tmp_path):
    x = RNG.integers(0, 256, (1, 12, 5, 5)).astype(np.uint8)
    w = RNG.integers(-128, 128, (8, 12, 1, 1)).astype(np.int8)
    bias, multiplier = _requant(8, 2e-4, 1e-3)
    scale = np.array([0.037], np.float32)
    out, listing = run_on_board("cortex-m4", _PooledConv(w, bias, multiplier, scale, (5, 5)), x, str(tmp_path / "pool"), np.float32)
    q = requantize_ref(conv_ref(x, w, 4, 1, 0), bias, multiplier, 3, 0, 255)
    assert 0.2 < np.mean((q > 0) & (q < 255))
    # the pooling sums rows, then columns, in float32, as its separate kernel does, then divides
    dequantized = (q.astype(np.float32) - np.float32(3)) * scale[0]
    total = np.zeros(8, np.float32)
    for i in range(5):
        for j in range(5):
            total = total + dequantized[0, :, i, j]
    np.testing.assert_array_equal(out, total / np.float32(25))
    assert "smlad" in listing and "vcvtr.s32.f32" in listing


class _SignedConv(nn.Cell):
    """int8 activations (``sxtb16`` widening) -> 1x1 convolution -> requantize to int8."""

    def __init__(self, w, bias, multiplier):
        super().__init__()
        self.w, self.bias, self.m = _param(w, "w"), _param(bias, "bias"), _param(multiplier, "m")

    def construct(self, x):
        acc = ops.int8_conv2d(x, self.w, -3, None, 1, "valid", 0, 1, 1)
        return ops.int8_requantize(acc, self.bias, self.m, -2, -128, 127, "int8")


def test_signed_int8_convolution_on_cortex_m4_is_exact(tmp_path):
    x = RNG.integers(-128, 128, (1, 8, 4, 5)).astype(np.int8)
    w = RNG.integers(-128, 128, (8, 8, 1, 1)).astype(np.int8)
    bias, multiplier = _requant(8, 5e-4, 3e-3)
    out, listing = run_on_board("cortex-m4", _SignedConv(w, bias, multiplier), x, str(tmp_path / "signed"), np.int8)
    total = (conv_ref(x, w, -3, 1, 0) + bias[None, :, None, None]).astype(np.float32) * multiplier[None, :, None, None]
    want = np.clip(np.round(total) - 2, -128, 127).astype(np.int8)
    assert 0.2 < np.mean((want > -128) & (want < 127))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "smlad" in listing
