"""tools/bench_mcu.py on aarch64 bundles: ResNet-18 and MobileNetV2 run under qemu-aarch64 with the
counting plugin take at most 0.5 instructions per multiply-accumulate (NEON's 4-lane FMA makes 0.25 the
floor) and give the x86 artifact's output.

The input is smaller than ImageNet's 224x224 so that each model builds and runs in well under two
minutes; the kernels are the same rules over the same channel counts (tools/bench_mcu.py --aarch64-size
224 gives the full-size figure). Measured: ResNet-18 0.296 at 160 and 0.283 at 224, MobileNetV2 0.412 at 160
and 0.427 at 224."""
from __future__ import annotations

import shutil

import pytest


HAVE_TOOLS = all(shutil.which(tool) for tool in ("cc", "aarch64-linux-gnu-gcc", "qemu-aarch64"))
pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs a C compiler, gcc-aarch64-linux-gnu and qemu-user "
                                                       "(tools/install.sh installs them)")

SIZE = 160
MAX_INSNS_PER_MAC = 0.5


def conv_macs(out_side: int, out_channels: int, in_channels: int, kernel: int) -> int:
    return out_side * out_side * out_channels * in_channels * kernel * kernel


def resnet18_macs(side: int) -> int:
    """Multiply-accumulates of ResNet-18's convolutions and Dense layer on a ``side`` x ``side`` image."""
    s = (side + 1) // 2  # 7x7 stride-2 stem, then a 3x3 stride-2 pool
    total = conv_macs(s, 64, 3, 7)
    s = (s + 1) // 2
    channels = 64
    for stage, width in enumerate((64, 128, 256, 512)):
        if stage:
            s = (s + 1) // 2
            total += conv_macs(s, width, channels, 3) + conv_macs(s, width, width, 3) + conv_macs(s, width, channels, 1)
        else:
            total += 2 * conv_macs(s, width, width, 3)
        total += 2 * conv_macs(s, width, width, 3)
        channels = width
    return total + 512 * 1000


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2"])
def test_aarch64_bundle_takes_at_most_half_an_instruction_per_mac(bench_mcu, plugin, tmp_path, name):
    result = bench_mcu.bench_bundle(name, (1, 3, SIZE, SIZE), "aarch64", plugin, str(tmp_path))
    if name == "resnet18":
        assert result.macs == resnet18_macs(SIZE)
    assert result.max_error < 1e-5
    assert result.insns_per_mac <= MAX_INSNS_PER_MAC, (
        f"{name} at {SIZE}x{SIZE}: {result.insns_per_inference:,} instructions for {result.macs:,} MACs")
