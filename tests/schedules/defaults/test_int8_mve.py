"""int8 convolutions on Cortex-M55 (``int8_mve``: ``vmladava.s16`` dot products over widened lanes), run bare
metal under qemu-system-arm, bit-exact against numpy integer arithmetic written from the formulas."""
from __future__ import annotations

import numpy as np
import pytest

from tests.schedules.defaults.test_int8_conv import conv_ref, requantize_ref
from tests.schedules.defaults.test_int8_dsp import (RNG, _as_nchw, _OneChannelConv, _requant, _SignedConv,
                                                     check_conv_chain, run_on_board)
from tests.schedules.test_mcu import HAVE_TOOLS

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                                                       "and qemu-system-arm (tools/install.sh installs them)")


def test_int8_convolutions_on_cortex_m55_are_exact(tmp_path):
    # one vmladava step per tap of the 8-channel layer, the depthwise layer int8_dsp's, two steps of the 1x1
    listing = check_conv_chain("cortex-m55", str(tmp_path / "chain"))
    assert "vmlava.s16" in listing, "no Helium dot product in the kernels"
    assert "vldrb.u16" in listing and "vldrb.s16" in listing


def test_signed_int8_convolution_on_cortex_m55_is_exact(tmp_path):
    x = RNG.integers(-128, 128, (1, 16, 4, 5)).astype(np.int8)
    w = RNG.integers(-128, 128, (8, 16, 1, 1)).astype(np.int8)
    bias, multiplier = _requant(8, 2e-4, 1e-3)
    out, listing = run_on_board("cortex-m55", _SignedConv(w, bias, multiplier), x, str(tmp_path / "signed"), np.int8)
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
    out, listing = run_on_board("cortex-m55", _OneChannelConv(w, bias, multiplier), x, str(tmp_path / "one"), np.uint8)
    want = requantize_ref(conv_ref(x, w, 6, 2, 2), bias, multiplier, 1, 0, 255)
    assert 0.2 < np.mean((want > 0) & (want < 255))
    np.testing.assert_array_equal(_as_nchw(out, want), want)
    assert "vmlava.s32" in listing and "vldrb.u32" in listing and "vldrb.s32" in listing
    assert "smlad" not in listing
