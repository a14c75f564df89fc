"""Bundles for the embedded C runtime: built with make, run natively and on aarch64 under qemu-user."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import aotnn
from tests.conftest import lenet_reference

HAVE_CROSS = shutil.which("aarch64-linux-gnu-gcc") is not None and shutil.which("qemu-aarch64") is not None
needs_cross = pytest.mark.skipif(not HAVE_CROSS, reason="needs Debian's gcc-aarch64-linux-gnu and qemu-user "
                                                       "(tools/install.sh installs them)")


def _run_bundle(path: str, inputs: list[np.ndarray], emulator: list[str]) -> np.ndarray:
    subprocess.run(["make", "-s", "-j2"], cwd=path, check=True, capture_output=True, text=True)
    names = []
    for i, x in enumerate(inputs):
        x.tofile(os.path.join(path, f"input{i}.bin"))
        names.append(f"input{i}.bin")
    done = subprocess.run(emulator + ["./model"] + names, cwd=path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return np.fromfile(os.path.join(path, "output0.bin"), dtype=np.float32)


@pytest.fixture(scope="module")
def lenet(tmp_path_factory):
    aotnn.set_seed(5)
    net = aotnn.models.LeNet5()
    for param in net.get_parameters():
        param.set_data(np.random.default_rng(len(param.name)).normal(0, 0.2, param.shape).astype(np.float32))
    x = np.random.default_rng(1).random((1, 1, 32, 32), dtype=np.float32)
    ref = lenet_reference({p.name: p.asnumpy() for p in net.get_parameters()}, x).ravel()
    return net, x, ref, tmp_path_factory.mktemp("bundles")


def test_x86_bundle_runs_natively(lenet):
    net, x, ref, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_x86"), file_format="BUNDLE")
    out = _run_bundle(path, [x], [])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_x86_bundle_refuses_input_files_of_another_size(lenet):
    """The example program reads raw inputs: a file one element short or long is refused, naming it."""
    from aotnn_runtime.manifest import read_manifest
    net, x, _, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_sizes"), file_format="BUNDLE")
    assert read_manifest(path)["library"] is None  # the bundle's manifest passes the runtime's checks
    subprocess.run(["make", "-s", "-j2"], cwd=path, check=True, capture_output=True, text=True)
    for wrong in (x.ravel()[:-1], np.concatenate([x.ravel(), [0]]).astype(np.float32)):
        wrong.tofile(os.path.join(path, "wrong.bin"))
        done = subprocess.run(["./model", "wrong.bin"], cwd=path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and f"exactly {x.nbytes} bytes, got wrong.bin" in done.stderr, done.stderr


@needs_cross
def test_aarch64_lenet_matches_x86(lenet):
    net, x, ref, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_arm"), target="aarch64")
    out = _run_bundle(path, [x], ["qemu-aarch64"])
    np.testing.assert_allclose(out, net(aotnn.Tensor(x)).asnumpy().ravel(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
    # the kernels got the default (NEON) schedules, not TVM's generic loops
    with open(os.path.join(path, "manifest.json"), encoding="utf-8") as stream:
        rules = json.load(stream)["metadata"]["kernel_rules"]
    assert any("conv2d" in kernel and rule for kernel, rule in rules.items()), rules


@pytest.mark.skipif(shutil.which("arm-linux-gnueabihf-gcc") is None or shutil.which("qemu-arm") is None,
                    reason="needs Debian's gcc-arm-linux-gnueabihf and qemu-user (tools/install.sh installs them)")
def test_armv7a_lenet_matches_reference(lenet):
    """32-bit ARM Linux (hard-float, NEON): built with arm-linux-gnueabihf-gcc, run under qemu-arm."""
    net, x, ref, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_armv7a"), target="armv7a")
    out = _run_bundle(path, [x], ["qemu-arm"])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@needs_cross
def test_runtime_code_size_and_arena(lenet):
    net, x, _, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_size"), target="aarch64")
    subprocess.run(["make", "-s", "model.o", "runtime/aotnn_backend.o", "runtime/aotnn_error.o"], cwd=path, check=True)
    sizes = subprocess.run(["size", "runtime/aotnn_backend.o", "runtime/aotnn_error.o", "model.o"], cwd=path,
                           check=True, capture_output=True, text=True).stdout.splitlines()[1:]
    code = sum(int(line.split()[0]) + int(line.split()[1]) for line in sizes)  # text + data
    assert code <= 16 * 1024, f"runtime + generated executor: {code} bytes"
    import json
    entry = json.load(open(os.path.join(path, "manifest.json")))["entries"]["predict"]
    assert entry["arena_bytes"] < entry["unplanned_bytes"]


def test_null_pointers_are_reported_not_crashed(lenet, tmp_path):
    net, x, _, tmp = lenet
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp / "lenet_null"), file_format="BUNDLE")
    subprocess.run(["make", "-s", "libaotnn_model.a"], cwd=path, check=True)
    (tmp_path / "probe.c").write_text(
        '#include <stdio.h>\n#include "runtime/aotnn_runtime.h"\n'
        'int main(void) { int rc = aotnn_model_run(0, 0); printf("%d %s\\n", rc, aotnn_last_error()); return 0; }\n')
    subprocess.run(["cc", "-I", path, str(tmp_path / "probe.c"), os.path.join(path, "libaotnn_model.a"), "-lm",
                    "-o", str(tmp_path / "probe")], check=True)
    out = subprocess.run([str(tmp_path / "probe")], capture_output=True, text=True, check=True).stdout
    assert out.startswith("1 ") and "NULL" in out


@needs_cross
def test_aarch64_resnet18_matches_x86(tmp_path):
    aotnn.set_seed(11)
    net = aotnn.models.resnet18(class_num=10)
    x = np.random.default_rng(2).random((1, 3, 224, 224), dtype=np.float32)
    expected = net(aotnn.Tensor(x)).asnumpy().ravel()
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "resnet_arm"), target="aarch64")
    out = _run_bundle(path, [x], ["qemu-aarch64"])
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
