"""MLPerf Tiny's DS-CNN post-training quantized to int8 and built for Cortex-M (issue 26): run bare metal under
qemu-system-arm, its output must be bit-exact with the x86 artifact of the same int8 network (integers between
layers, requantization in the producing kernels), within the microcontroller's memory."""
from __future__ import annotations

import os

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn.compression.quant import PostTrainingQuantization
from tests.models.tiny_weights import randomize
from tests.schedules.test_bundle_memory import STACK_PAINT_MAIN, _sections
from tests.schedules.test_mcu import BOARDS, HAVE_TOOLS, count_instructions, run_on_qemu

pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                                                       "and qemu-system-arm (tools/install.sh installs them)")
SHAPE = (1, 1, 49, 10)


@pytest.fixture(scope="module")
def ds_cnn_int8(tmp_path_factory):
    """(int8 network, input, output of its x86 artifact, scratch folder): DS-CNN with random batch-norm
    statistics, calibrated on two seeded batches of 8 standard-normal inputs."""
    tmp = tmp_path_factory.mktemp("mcu_int8")
    aotnn.set_seed(3)
    net = randomize(aotnn.models.ds_cnn(), 3)
    rng = np.random.default_rng(3)
    calibration = [rng.standard_normal((8, *SHAPE[1:])).astype(np.float32) for _ in range(2)]
    quantized = PostTrainingQuantization().quantize(net, calibration)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    artifact = aotnn.export(quantized, aotnn.Tensor(x), file_name=str(tmp / "x86"))
    (expected,) = aotnn_runtime.load(artifact).run(x)
    expected = np.asarray(expected).ravel()
    # the int8 network stays close to the float one: a wrong quantization would not be caught by bit-exactness
    reference = net(aotnn.Tensor(x)).asnumpy().ravel()
    assert np.abs(expected - reference).max() <= 0.1 * np.abs(reference).max()
    return quantized, x, expected, tmp


def test_ds_cnn_int8_on_cortex_m4_is_bit_exact_with_x86_and_small(ds_cnn_int8):
    """RAM and flash as test_bundle_memory measures them: .data + .bss (the arena, the example's input and
    output buffers) + the painted stack's high-water mark; .text + weights + .data."""
    net, x, expected, tmp = ds_cnn_int8
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "m4"), target="cortex-m4")
    with open(os.path.join(bundle, "main.c"), "w") as stream:
        stream.write(STACK_PAINT_MAIN % {"in_bytes": x.nbytes, "out_bytes": expected.nbytes})
    out = run_on_qemu(bundle, BOARDS["cortex-m4"], x)
    np.testing.assert_array_equal(out, expected)
    sections = _sections(os.path.join(bundle, "model.elf"))
    (stack_used,) = np.fromfile(os.path.join(bundle, "stack.bin"), dtype=np.uint32)
    assert 0 < stack_used < sections[".stack"], "the stack overflowed its reserved section"
    ram = sections.get(".data", 0) + sections.get(".bss", 0) + int(stack_used)
    flash = sections[".text"] + sections[".weights"] + sections.get(".data", 0)
    # 8-bit maps, int32 accumulators per register tile, padding inlined into the convolutions, the last
    # layer pooled in its kernel: issue 26's RAM goal (32 KB) is met; its flash goal is 64 KB
    print(f"DS-CNN int8 cortex-m4: RAM {ram} B (stack {stack_used}), flash {flash} B")
    assert ram <= 32 * 1024, f"RAM {ram} bytes ({sections}, stack {stack_used})"
    assert flash <= 64 * 1024, f"flash {flash} bytes ({sections})"
    instructions = count_instructions(bundle, BOARDS["cortex-m4"])
    print(f"DS-CNN int8 cortex-m4: {instructions} instructions (whole run)")
    # smlad dot products, vcvtr rounding (int8_dsp, mcu_requantize): 5.008 M for the whole run, of which
    # one inference is 4.999 M (tools/bench_mcu.py, issue 26's goal 5 M) and the rest start-up and checks
    assert 2_000_000 < instructions <= 5_020_000, instructions


def test_ds_cnn_int8_on_cortex_m55_is_bit_exact_with_x86(ds_cnn_int8):
    net, x, expected, tmp = ds_cnn_int8
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "m55"), target="cortex-m55")
    np.testing.assert_array_equal(run_on_qemu(bundle, BOARDS["cortex-m55"], x), expected)
    instructions = count_instructions(bundle, BOARDS["cortex-m55"])
    print(f"DS-CNN int8 cortex-m55: {instructions} instructions (whole run)")
    # Helium vmlava dot products (int8_mve): one inference 2.32 M (tools/bench_mcu.py), 5.03 M on smlad before
    assert 1_000_000 < instructions <= 2_400_000, instructions
