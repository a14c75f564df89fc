"""int8 convolutions on Cortex-M55 (``int8_mve``: ``vmladava.s16`` dot products over widened lanes), run bare
metal under qemu-system-arm, bit-exact against numpy integer arithmetic written from the formulas."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import aotnn
from schedules.embedded_mcu import qemu_command
from tests.schedules.defaults.test_int8_conv import conv_ref, requantize_ref
from tests.schedules.defaults.test_int8_dsp import RNG, _as_nchw, _ConvChain, _OneChannelConv, _requant, _SignedConv
from tests.schedules.test_mcu import BOARDS, HAVE_TOOLS

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                                                       "and qemu-system-arm (tools/install.sh installs them)")


def _run_on_m55(net, x: np.ndarray, folder: str, out_dtype) -> tuple[np.ndarray, str]:
    """(the bundle's output on qemu's Cortex-M55 board, the disassembly of its kernels)."""
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=folder, target="cortex-m55")
    built = subprocess.run(["make", "-s", "-j2"], cwd=bundle, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    x.tofile(os.path.join(bundle, "input0.bin"))
    done = subprocess.run(qemu_command({}, BOARDS["cortex-m55"]), cwd=bundle, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "aotnn: done" in done.stdout + done.stderr, done.stdout + done.stderr
    # the object carries no MVE build attribute: objdump is told the architecture, else Helium is ".word"
    listing = subprocess.run(["arm-none-eabi-objdump", "-d", "-m", "armv8.1-m.main",
                              os.path.join(bundle, "kernels.o")], check=True,
                             capture_output=True, text=True).stdout
    return np.fromfile(os.path.join(bundle, "output0.bin"), dtype=out_dtype), listing


def test_int8_convolutions_on_cortex_m55_are_exact(tmp_path):
    # 8 input channels (one vmladava step per tap), a depthwise layer (int8_dsp's), 16 -> 12 channels 1x1
    # (two steps, three tiles of 4), width 7 (odd)
    x = RNG.integers(0, 256, (1, 8, 6, 7)).astype(np.uint8)
    w1 = RNG.integers(-128, 128, (16, 8, 3, 3)).astype(np.int8)
    wd = RNG.integers(-128, 128, (16, 1, 3, 3)).astype(np.int8)
    w2 = RNG.integers(-128, 128, (12, 16, 1, 1)).astype(np.int8)
    requant = [_requant(16, 1e-4, 6e-4), _requant(16, 5e-4, 3e-3), _requant(12, 2e-4, 1e-3)]
    out, listing = _run_on_m55(_ConvChain(w1, wd, w2, requant), x, str(tmp_path / "chain"), np.uint8)
    (b0, m0), (b1, m1), (b2, m2) = requant
    y = requantize_ref(conv_ref(x, w1, 3, 1, 1), b0, m0, 5, 0, 255)
    d = requantize_ref(conv_ref(y, wd, 5, 1, 1, groups=16), b1, m1, 2, 0, 255)
    want = requantize_ref(conv_ref(d, w2, 2, 1, 0), b2, m2, 9, 0, 255)
    for stage in (y, d, want):  # neither clamp hides most of the values
        assert 0.2 < np.mean((stage > 0) & (stage < 255)), np.mean((stage > 0) & (stage < 255))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "vmlava.s16" in listing, "no Helium dot product in the kernels"
    assert "vldrb.u16" in listing and "vldrb.s16" in listing


def test_signed_int8_convolution_on_cortex_m55_is_exact(tmp_path):
    x = RNG.integers(-128, 128, (1, 16, 4, 5)).astype(np.int8)
    w = RNG.integers(-128, 128, (8, 16, 1, 1)).astype(np.int8)
    bias, multiplier = _requant(8, 2e-4, 1e-3)
    out, listing = _run_on_m55(_SignedConv(w, bias, multiplier), x, str(tmp_path / "signed"), np.int8)
    total = (conv_ref(x, w, -3, 1, 0) + bias[None, :, None, None]).astype(np.float32) * multiplier[None, :, None, None]
    want = np.clip(np.round(total) - 2, -128, 127).astype(np.int8)
    assert 0.2 < np.mean((want > -128) & (want < 127))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "vldrb.s16" in listing and "vmlava.s16" in listing


def test_one_channel_int8_convolution_on_cortex_m55_is_exact(tmp_path):
    # int8_dsp's packing (4 adjacent taps of a kernel row per step), each step on 32-bit lanes
    x = RNG.integers(0, 256, (1, 1, 13, 10)).astype(np.uint8)
    w = RNG.integers(-128, 128, (8, 1, 5, 4)).astype(np.int8)
    bias, multiplier = _requant(8, 5e-4, 3e-3)
    out, listing = _run_on_m55(_OneChannelConv(w, bias, multiplier), x, str(tmp_path / "one"), np.uint8)
    want = requantize_ref(conv_ref(x, w, 6, 2, 2), bias, multiplier, 1, 0, 255)
    assert 0.2 < np.mean((want > 0) & (want < 255))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "vmlava.s32" in listing and "vldrb.u32" in listing and "vldrb.s32" in listing
    assert "smlad" not in listing
