"""tools/bench_mcu.py on an int8 aarch64 bundle: ResNet-18 post-training quantized (``resnet18_int8``) and
built for Armv8.2 with the dot-product extension runs its convolutions on ``sdot`` (``int8_neon``): under
qemu-aarch64 it gives the x86 int8 artifact's output bit for bit and takes well under the float build's
instructions per multiply-accumulate (float: 0.283 at 224x224, about 0.3 on small inputs).

A 64x64 input keeps the build and the run short; the kernels are the same rules over the same channel counts.
Measured (bit-exact in every case): with +dotprod 0.150 instructions per MAC at 64x64 and 0.155 at 224x224;
plain NEON's smull/sadalp 0.401 and 0.435, above float (not asserted here)."""
from __future__ import annotations

import shutil

import pytest

HAVE_TOOLS = all(shutil.which(tool) for tool in ("cc", "aarch64-linux-gnu-gcc", "qemu-aarch64"))
pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs a C compiler, gcc-aarch64-linux-gnu and qemu-user "
                                                       "(tools/install.sh installs them)")

SIZE = 64
MAX_INSNS_PER_MAC = 0.2


def test_int8_resnet18_with_sdot_is_bit_exact_and_cheaper_than_float(bench_mcu, plugin, tmp_path):
    result = bench_mcu.bench_bundle("resnet18_int8", (1, 3, SIZE, SIZE), "aarch64+dotprod", plugin, str(tmp_path))
    assert result.max_error == 0.0
    assert result.insns_per_mac <= MAX_INSNS_PER_MAC, (
        f"resnet18_int8 at {SIZE}x{SIZE}: {result.insns_per_inference:,} instructions for {result.macs:,} MACs")
