"""GPU targets: names, DLight schedules, launch records, CUDA artifacts (compiled by NVRTC) and errors.

Compiling needs no GPU and is tested everywhere; running a CUDA artifact is tested only where a CUDA
driver and GPU are present, and elsewhere the missing driver must be named in one clear error.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import tvm
from tvm import te

import aotnn
import aotnn_runtime
from aotnn_runtime.errors import DeviceUnavailableError
from schedules import cuda as cuda_build, gpu
from schedules.target import TargetError, is_host, resolve
from schedules.vulkan import VulkanBuildError

HAS_CUDA = cuda_build.detect_arch() is not None


def test_gpu_target_names():
    assert resolve("vulkan") == {"kind": "vulkan"} and resolve("webgpu") == {"kind": "vulkan"}
    cuda = resolve("cuda")
    assert cuda["kind"] == "cuda" and re.fullmatch(r"sm_\d+", cuda["arch"])
    if not HAS_CUDA:
        assert cuda["arch"] == "sm_80"  # the default without a device to ask
    assert resolve("cuda:sm_86") == {"kind": "cuda", "arch": "sm_86"}
    assert not any(is_host(resolve(name)) for name in ("vulkan", "cuda"))
    with pytest.raises(TargetError, match="vulkan.*cuda"):
        resolve("metal")


def _matmul_module() -> tvm.IRModule:
    a = te.placeholder((64, 96), name="a")
    b = te.placeholder((96, 32), name="b")
    k = te.reduce_axis((0, 96), name="k")
    c = te.compute((64, 32), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="c")
    return tvm.IRModule({"mm": te.create_prim_func([a, b, c]).with_attr("global_symbol", "mm")})


@pytest.mark.parametrize("kind", ["cuda", "webgpu"])
def test_dlight_makes_kernels_launchable(kind):
    target = tvm.target.Target({"kind": kind, **({"arch": "sm_80"} if kind == "cuda" else {})})
    kernels = gpu.lower_gpu(_matmul_module(), target)
    (launch,) = kernels.functions["mm"].launches
    # The kernel writes c (parameter 2) and reads a and b, whatever order the codegen chose.
    assert sorted(arg for kind_, arg in launch.args) == [0, 1, 2] and {k for k, _ in launch.args} == {"param"}
    threads = int(np.prod(launch.block()))
    assert 1 < threads <= int(target.attrs["max_num_threads"])
    assert int(np.prod(launch.grid())) * threads >= 64 * 32 // 16  # the whole output is covered by threads
    source = gpu.codegen(kernels.device_mod, target).inspect_source()
    assert launch.kernel in source


@pytest.fixture(scope="module")
def models():
    aotnn.set_seed(4)
    lenet, resnet, bert = aotnn.models.LeNet5(), aotnn.models.resnet18(), aotnn.models.bert_encoder()
    for net in (lenet, resnet, bert):
        net.set_train(False)
    return {"lenet5": (lenet, np.zeros((1, 1, 32, 32), np.float32)),
            "resnet18": (resnet, np.zeros((1, 3, 224, 224), np.float32)),
            "bert": (bert, np.zeros((1, 16), np.int32))}


@pytest.fixture(scope="module")
def cuda_artifacts(models, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cuda")
    return {name: aotnn.export(net, aotnn.Tensor(x), file_name=str(folder / name), target="cuda:sm_80")
            for name, (net, x) in models.items()}


@pytest.mark.parametrize("name", ["lenet5", "resnet18", "bert"])
def test_cuda_artifact_compiles(cuda_artifacts, name):
    path = cuda_artifacts[name]
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    assert manifest["target"] == {"kind": "cuda", "arch": "sm_80"}
    table = json.load(open(os.path.join(path, manifest["library"])))
    source = open(os.path.join(path, table["source"])).read()
    ptx = open(os.path.join(path, table["ptx"])).read()
    assert open(os.path.join(path, table["cubin"]), "rb").read(4) == b"\x7fELF"  # NVRTC's sm_80 machine code
    assert ".target sm_80" in ptx
    entry = manifest["entries"]["predict"]
    for step in entry["steps"] + entry["prepare_steps"]:
        func = table["functions"][step["kernel"]]
        assert len(func["params"]) == len(step["args"])
        for launch in func["launches"]:
            assert f'extern "C" __global__ void __launch_bounds__({int(np.prod(launch["block"]))}) {launch["kernel"]}(' in source
            assert f".entry {launch['kernel']}(" in ptx
            assert int(np.prod(launch["block"])) <= 1024 and all(g >= 1 for g in launch["grid"])


@pytest.mark.skipif(HAS_CUDA, reason="a CUDA driver is present: the run test below covers it")
def test_cuda_run_without_driver_names_it(cuda_artifacts):
    with pytest.raises(DeviceUnavailableError, match="no CUDA driver: libcuda.so.1"):
        aotnn_runtime.load(cuda_artifacts["lenet5"])


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA driver or GPU on this machine: compile-only here")
@pytest.mark.parametrize("name", ["lenet5", "resnet18", "bert"])
def test_cuda_runs_and_matches_x86(cuda_artifacts, models, name, tmp_path):
    net, x = models[name]
    x = (np.random.default_rng(0).integers(0, 30522, x.shape) if x.dtype == np.int32
         else np.random.default_rng(0).random(x.shape)).astype(x.dtype)
    host = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "host"))
    expected = aotnn_runtime.load(host).run(x)[0]
    actual = aotnn_runtime.load(cuda_artifacts[name]).run(x)[0]
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(expected).max())))


def test_missing_nvrtc_is_named(monkeypatch, models, tmp_path):
    monkeypatch.setattr(cuda_build, "_nvidia_dirs", lambda sub: [])
    monkeypatch.setattr(cuda_build.ctypes.util, "find_library", lambda name: None)
    net, x = models["lenet5"]
    with pytest.raises(cuda_build.CudaBuildError, match="NVRTC .* is missing: pip install nvidia-cuda-nvrtc-cu12"):
        aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "lenet"), target="cuda")


def test_vulkan_refuses_64_bit_tensors(tmp_path):
    class Net(aotnn.nn.Cell):
        def construct(self, x):
            return x + 1

    with pytest.raises(VulkanBuildError, match="input x has dtype int64; WGSL storage buffers hold only"):
        aotnn.export(Net(), aotnn.Tensor(np.zeros((4,), np.int64)), file_name=str(tmp_path / "n"), target="vulkan")


def test_cuda_training_step_compiles(tmp_path):
    """A whole TrainOneStepCell (forward, gradients, Momentum update) becomes CUDA kernels.

    Some of its kernels (max-pool gradients, a 2-element mean) defeat the first DLight rule that
    matches them; the build falls through to the next rule whose schedule lowers.
    """
    from aotnn import nn
    from aotnn.jit.compiled import capture_function
    import schedules
    net = aotnn.models.LeNet5()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")),
                               nn.Momentum(net.trainable_params(), 0.01, 0.9))
    specs = [("x", (2, 1, 32, 32), "float32"), ("label", (2,), "int32")]
    mod, capture, _, _ = capture_function(lambda *xs: step._construct_with_precision(xs, {}), specs)
    path = schedules.build(mod, ["x", "label"], capture.param_names, target="cuda:sm_80", output_dir=str(tmp_path / "step"),
                           num_param_updates=len(capture.param_updates))
    manifest = json.load(open(os.path.join(path, "manifest.json")))
    record = manifest["entries"]["predict"]
    assert len(record["param_updates"]) == len(capture.param_updates) > 0
    table = json.load(open(os.path.join(path, "kernels.json")))
    assert {s["kernel"] for s in record["steps"]} <= set(table["functions"])
