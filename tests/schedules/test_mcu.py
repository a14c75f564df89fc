"""Cortex-M bundles built with arm-none-eabi-gcc and run bare metal under qemu-system-arm (semihosting):
LeNet5, MLPerf Tiny's DS-CNN and ResNet-8 on cortex-m4 (mps2-an386) and cortex-m55 (mps3-an547),
against the x86 artifact of the same network."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from schedules.embedded_mcu import qemu_command
from tests.models.tiny_weights import randomize

HAVE_TOOLS = shutil.which("arm-none-eabi-gcc") is not None and shutil.which("qemu-system-arm") is not None
pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs Debian's gcc-arm-none-eabi, libnewlib-arm-none-eabi "
                                                       "and qemu-system-arm (tools/install.sh installs them)")

MODELS = {"lenet5": (1, 1, 32, 32), "ds_cnn": (1, 1, 49, 10), "resnet8": (1, 3, 32, 32)}
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m55": "mps3-an547"}


@pytest.fixture(scope="module")
def networks(tmp_path_factory):
    """name -> (net, stored input, output of the x86 artifact, scratch folder, the x86 artifact)."""
    tmp = tmp_path_factory.mktemp("mcu")
    found = {}
    for index, (name, shape) in enumerate(MODELS.items()):
        aotnn.set_seed(index)
        net = randomize(getattr(aotnn.models, name)(), index)
        x = np.random.default_rng(index).standard_normal(shape).astype(np.float32)
        artifact = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / f"{name}_x86"))
        (expected,) = aotnn_runtime.load(artifact).run(x)
        found[name] = (net, x, np.asarray(expected).ravel(), tmp, artifact)
    return found


def run_on_qemu(bundle: str, board: str, x: np.ndarray) -> np.ndarray:
    built = subprocess.run(["make", "-s", "-j2"], cwd=bundle, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    x.tofile(os.path.join(bundle, "input0.bin"))
    done = subprocess.run(qemu_command({}, board), cwd=bundle, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "aotnn: done" in done.stdout + done.stderr, done.stdout + done.stderr
    return np.fromfile(os.path.join(bundle, "output0.bin"), dtype=np.float32)


@pytest.mark.parametrize("target", list(BOARDS))
@pytest.mark.parametrize("name", list(MODELS))
def test_bundle_on_qemu_matches_x86(networks, name, target):
    net, x, expected, tmp, _ = networks[name]
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / f"{name}_{target}"), target=target)
    out = run_on_qemu(bundle, BOARDS[target], x)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * float(np.abs(expected).max()))
    if name == "lenet5" and target == "cortex-m4":
        check_image_is_bare(bundle)


def check_image_is_bare(bundle: str):
    """No constructors, no unwinder, no heap or stdio: only memcpy/memset/strlen from the C library."""
    symbols = subprocess.run(["arm-none-eabi-nm", os.path.join(bundle, "model.elf")], check=True,
                             capture_output=True, text=True).stdout.split()
    for unwanted in ("malloc", "free", "abort", "printf", "_Unwind_RaiseException", "__libc_init_array"):
        assert unwanted not in symbols, unwanted
    assert {"memcpy", "memset", "aotnn_model_run_in_place", "aotnn_install_backend"} <= set(symbols)
    assert "aotnn_model_run" not in symbols  # the copying entry point and its buffers are collected
    sections = subprocess.run(["arm-none-eabi-objdump", "-h", os.path.join(bundle, "model.elf")], check=True,
                              capture_output=True, text=True).stdout
    assert ".init_array" not in sections and ".ARM.exidx" not in sections


def test_missing_input_file_runs_on_zeros_and_says_so(networks):
    """The example reads input0.bin through semihosting; without it the model runs on zeros."""
    net, x, _, tmp, artifact = networks["lenet5"]
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_zeros"), target="cortex-m4")
    subprocess.run(["make", "-s", "-j2"], cwd=bundle, check=True, capture_output=True)
    done = subprocess.run(qemu_command({"mcpu": "cortex-m4"}), cwd=bundle, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "input0.bin: missing or not 4096 bytes" in done.stdout + done.stderr
    zeros = np.zeros_like(x)
    (expected,) = aotnn_runtime.load(artifact).run(zeros)
    out = np.fromfile(os.path.join(bundle, "output0.bin"), dtype=np.float32)
    np.testing.assert_allclose(out, np.asarray(expected).ravel(), rtol=1e-5, atol=1e-6)


def test_cli_runs_a_cortex_m_bundle_on_qemu(networks, tmp_path):
    """`aotnn run` builds model.elf and runs it on the target's board (cortex-m55: mps3-an547)."""
    from click.testing import CliRunner

    from aotnn.cli import main
    net, x, expected, tmp, _ = networks["lenet5"]
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_cli"), target="cortex-m55")
    np.save(tmp_path / "x.npy", x)
    result = CliRunner().invoke(main, ["run", bundle, "--input", str(tmp_path / "x.npy"), "--output",
                                       str(tmp_path / "y.npy")])
    assert result.exit_code == 0, result.output
    assert "output 0: shape (1, 10)" in result.output
    np.testing.assert_allclose(np.load(tmp_path / "y.npy").ravel(), expected, rtol=1e-5,
                               atol=1e-5 * float(np.abs(expected).max()))


def count_instructions(bundle: str, board: str) -> int:
    """Guest instructions of one whole run (start-up included): QEMU executes one instruction per
    translation block under -singlestep and logs a "Trace" line per block executed with -d exec."""
    command = qemu_command({}, board)
    command[1:1] = ["-singlestep", "-d", "nochain,exec", "-D", "/dev/stderr"]
    with subprocess.Popen(command, cwd=bundle, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as qemu:
        count = sum(1 for line in qemu.stderr if line.startswith(b"Trace"))
    assert qemu.returncode == 0
    return count


def test_ds_cnn_on_cortex_m4_under_8_million_instructions(networks):
    """MLPerf Tiny's DS-CNN (2.7 M multiply-accumulates) in at most 8 M instructions on a Cortex-M4:
    the FPU-register tiles and fused multiply-adds of the default schedules (issue 24's bound)."""
    net, x, expected, tmp, _ = networks["ds_cnn"]
    bundle = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "ds_cnn_count"), target="cortex-m4")
    out = run_on_qemu(bundle, BOARDS["cortex-m4"], x)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * float(np.abs(expected).max()))
    instructions = count_instructions(bundle, BOARDS["cortex-m4"])
    assert 2_000_000 < instructions <= 8_000_000, instructions
