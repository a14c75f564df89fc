"""aotnn_runtime: running an artifact, and clear errors for bad inputs and damaged artifacts."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import aotnn_runtime
from aotnn_runtime import ArtifactError, InputError

from tests.conftest import lenet_reference


def test_runs_and_matches_reference(lenet_artifact):
    path, _, x, expected = lenet_artifact
    out = aotnn_runtime.load(path).run(x)
    assert len(out) == 1
    np.testing.assert_allclose(out[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_unaligned_and_noncontiguous_inputs_are_accepted(lenet_artifact):
    path, _, x, expected = lenet_artifact
    raw = np.zeros(x.size + 1, np.float32)
    shifted = raw[1:].reshape(x.shape)  # 4-byte offset: not 64-byte aligned
    shifted[...] = x
    module = aotnn_runtime.load(path)
    np.testing.assert_allclose(module.run(shifted)[0], expected, rtol=1e-4, atol=1e-6)
    wide = np.zeros((2, 1, 32, 64), np.float32)
    wide[..., ::2] = x
    np.testing.assert_allclose(module.run(wide[..., ::2])[0], expected, rtol=1e-4, atol=1e-6)


def test_unaligned_inputs_of_successive_calls_each_give_their_own_result(lenet_artifact):
    """Unaligned inputs are copied into a buffer kept between calls: each call must see its own data."""
    path, params, x, _ = lenet_artifact
    module = aotnn_runtime.load(path)
    raw = np.zeros(x.size + 1, np.float32)
    shifted = raw[1:].reshape(x.shape)
    for scale in (1.0, -2.0, 0.5):
        shifted[...] = x * scale
        expected = lenet_reference(params, x * scale)
        np.testing.assert_allclose(module.run(shifted)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_results_of_earlier_calls_survive_later_calls(lenet_artifact):
    """Small outputs are written into a buffer kept between calls: each call must return its own copy."""
    path, params, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    first = module.run(x)[0]
    second = module.run(-x)[0]
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    reference = lenet_reference(params, -x)
    np.testing.assert_allclose(second, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max())
    assert not np.shares_memory(first, second)


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 32, 32), np.float32), "rank"),
    (np.zeros((2, 1, 32, 31), np.float32), "shape"),
    (np.zeros((2, 1, 32, 32), np.float64), "dtype"),
    ("not an array", "numpy array"),
])
def test_bad_input_raises_before_kernels(lenet_artifact, bad, message):
    module = aotnn_runtime.load(lenet_artifact[0])
    with pytest.raises(InputError, match=message) as info:
        module.run(bad)
    assert "'x'" in str(info.value)


def test_wrong_input_count(lenet_artifact):
    module = aotnn_runtime.load(lenet_artifact[0])
    x = lenet_artifact[2]
    with pytest.raises(InputError, match="expected 1 input"):
        module.run(x, x)
    with pytest.raises(InputError, match="got 0"):
        module.run()


def test_param_override_is_checked(lenet_artifact):
    module = aotnn_runtime.load(lenet_artifact[0])
    with pytest.raises(InputError, match="fc3.bias"):
        module.run(lenet_artifact[2], params={"fc3.bias": np.zeros(3, np.float32)})


def _copy(path, tmp_path):
    target = tmp_path / "copy.aot"
    shutil.copytree(path, target)
    return target


def test_missing_artifact():
    with pytest.raises(ArtifactError, match="does not exist"):
        aotnn_runtime.load("/nonexistent/model.aot")


def test_missing_file(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    os.remove(target / "kernels.so")
    with pytest.raises(ArtifactError, match="missing file 'kernels.so'"):
        aotnn_runtime.load(target)


def test_truncated_weights(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    data = (target / "weights.bin").read_bytes()
    (target / "weights.bin").write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError, match="truncated"):
        aotnn_runtime.load(target)


def test_corrupt_weights(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    data = bytearray((target / "weights.bin").read_bytes())
    data[100] ^= 0xFF
    (target / "weights.bin").write_bytes(bytes(data))
    with pytest.raises(ArtifactError, match="SHA-256"):
        aotnn_runtime.load(target)


def test_malformed_manifest(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    (target / "manifest.json").write_text("{not json")
    with pytest.raises(ArtifactError, match="not valid JSON"):
        aotnn_runtime.load(target)
    (target / "manifest.json").write_text(json.dumps({"format": "aotnn-artifact", "format_version": 99}))
    with pytest.raises(ArtifactError, match="format version"):
        aotnn_runtime.load(target)


def test_bad_kernel_reference(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["entries"]["predict"]["steps"][0]["args"][0] = {"kind": "buffer", "index": 10_000}
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="malformed argument reference"):
        aotnn_runtime.load(target)


@pytest.mark.parametrize("alignment", [2, 6, "4", None])
def test_malformed_input_alignment(lenet_artifact, tmp_path, alignment):
    target = _copy(lenet_artifact[0], tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["entries"]["predict"]["inputs"][0]["alignment"] = alignment
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="malformed alignment"):
        aotnn_runtime.load(target)


def test_inputs_of_artifacts_without_alignment_are_staged(lenet_artifact, tmp_path):
    """Artifacts built before inputs were read in place (no "alignment") assume 64-byte inputs."""
    path, _, x, expected = lenet_artifact
    target = _copy(path, tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    del manifest["entries"]["predict"]["inputs"][0]["alignment"]
    (target / "manifest.json").write_text(json.dumps(manifest))
    module = aotnn_runtime.load(target)
    shifted = np.zeros(x.size + 1, np.float32)[1:].reshape(x.shape)
    shifted[...] = x
    np.testing.assert_allclose(module.run(shifted)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    ((staged, _),) = module["predict"]._aligned_copies.values()
    assert staged.ctypes.data % 64 == 0


def test_runtime_never_imports_tvm(lenet_artifact):
    import subprocess
    import sys
    code = ("import sys, numpy as np, aotnn_runtime; m = aotnn_runtime.load(sys.argv[1]); "
            "m.run(np.zeros((2,1,32,32), np.float32)); "
            "assert not any(n == 'tvm' or n.startswith('tvm.') for n in sys.modules), 'tvm imported'")
    subprocess.run([sys.executable, "-c", code, str(lenet_artifact[0])], check=True)


def test_weight_only_steps_rerun_only_when_parameters_change():
    """A kernel that reads only parameters (here 2*w, transposed) runs once, then again after set_data."""
    import aotnn
    from aotnn import Tensor, nn, ops

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = aotnn.Parameter(Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)), name="w")

        def construct(self, x):
            return ops.matmul(x, ops.transpose(self.w * 2.0, (1, 0)))

    net = Net()
    x = np.random.default_rng(1).random((2, 3), dtype=np.float32)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x @ (2 * net.w.asnumpy()).T, rtol=1e-6)
    entry = next(iter(net._jit_cache.values())).module.manifest["entries"]["predict"]
    assert len(entry["prepare_steps"]) >= 1
    net.w.set_data(np.ones((4, 3), np.float32))
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), x @ np.full((3, 4), 2.0, np.float32), rtol=1e-6)


def test_wrong_target_artifact_is_refused(lenet_artifact, tmp_path):
    target = _copy(lenet_artifact[0], tmp_path)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["target"] = {"kind": "llvm", "mtriple": "aarch64-linux-gnu"}
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="kernels for aarch64-linux-gnu"):
        aotnn_runtime.load(target)
    manifest["library"] = None
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="C bundle"):
        aotnn_runtime.load(target)


def test_threads_sharing_a_module_or_its_kernel_library_each_get_their_own_results(tmp_path):
    """A server's threads may call one module, or modules of one artifact (one kernel library,
    one thread pool) at once: each call must see only its own input."""
    import threading

    import torch

    import aotnn
    from aotnn import Tensor, nn

    aotnn.set_seed(1)
    net = nn.Conv2d(8, 16, 3, pad_mode="valid", has_bias=False)  # 4.4 M multiply-adds: parallel kernels
    x = np.random.default_rng(0).random((1, 8, 64, 64), dtype=np.float32)
    path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "conv"))
    weight = torch.from_numpy(net.weight.asnumpy())
    expected = {scale: torch.nn.functional.conv2d(torch.from_numpy(x * scale), weight).numpy() for scale in (1.0, -2.0)}
    shared = aotnn_runtime.load(path)
    for modules in ([shared, shared], [aotnn_runtime.load(path), aotnn_runtime.load(path)]):
        wrong = []

        def work(module, scale):
            for _ in range(20):
                out = module.run(x * scale)[0]
                if not np.allclose(out, expected[scale], rtol=1e-4, atol=1e-4):
                    wrong.append(scale)

        threads = [threading.Thread(target=work, args=(module, scale)) for module, scale in zip(modules, expected)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not wrong


@pytest.mark.parametrize("count", [0, -1, True, 2.0, "2"], ids=["zero", "negative", "bool", "float", "str"])
def test_set_num_threads_refuses_what_is_not_a_positive_int(lenet_artifact, count):
    module = aotnn_runtime.load(lenet_artifact[0])
    with pytest.raises(ValueError, match="count: expected a positive int"):
        module.set_num_threads(count)


def test_modules_of_one_artifact_share_the_thread_count_and_still_compute(lenet_artifact):
    path, _, x, expected = lenet_artifact
    first, second = aotnn_runtime.load(path), aotnn_runtime.load(path)
    first.set_num_threads(1)
    second.set_num_threads(2)
    assert first._cdll.aotnn_get_num_threads() == 2  # one library, one pool: the last call wins
    for module in (first, second):
        np.testing.assert_allclose(module.run(x)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
