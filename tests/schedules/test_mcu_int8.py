"""MLPerf Tiny's DS-CNN post-training quantized to int8 and built for Cortex-M (issue 26): run bare metal under
qemu-system-arm, its output must be bit-exact with the x86 artifact of the same int8 network (integers between
layers, requantization in the producing kernels), within the microcontroller's memory."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn.cli.bundle_memory import bundle_memory
from aotnn.compression.quant import PostTrainingQuantization
from tests.models.tiny_weights import randomize
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
    net, x, expected, tmp = ds_cnn_int8
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "m4"), target="cortex-m4")
    out = run_on_qemu(bundle, BOARDS["cortex-m4"], x)
    np.testing.assert_array_equal(out, expected)
    memory = bundle_memory(bundle)
    # int8 activations with int32 accumulators per register tile (no whole int32 map in scratch memory);
    # issue 26's goal is RAM <= 32 KB and flash <= 64 KB
    assert memory.ram_bytes <= 60 * 1024, memory.ram_bytes
    assert memory.flash_bytes <= 90 * 1024, memory.flash_bytes
    instructions = count_instructions(bundle, BOARDS["cortex-m4"])
    assert 2_000_000 < instructions <= 16_000_000, instructions


def test_ds_cnn_int8_on_cortex_m55_is_bit_exact_with_x86(ds_cnn_int8):
    net, x, expected, tmp = ds_cnn_int8
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "m55"), target="cortex-m55")
    np.testing.assert_array_equal(run_on_qemu(bundle, BOARDS["cortex-m55"], x), expected)
