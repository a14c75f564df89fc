"""Vulkan: zoo models compiled to WGSL run through wgpu's Vulkan backend (lavapipe in CI) and match x86.

Without a Vulkan adapter these tests FAIL (CI installs mesa-vulkan-drivers); they are skipped only
outside CI when the wgpu package itself is missing.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

import aotnn
import aotnn_runtime
from aotnn_runtime.errors import DeviceUnavailableError, InputError
from tests.conftest import lenet_reference

try:
    import wgpu
except ImportError:  # pragma: no cover - depends on the machine
    wgpu = None


@pytest.fixture(scope="session", autouse=True)
def vulkan_adapter():
    """The Vulkan adapter the tests run on; its absence fails the run (skips only without wgpu, outside CI)."""
    if wgpu is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the wgpu package is not installed: tools/install.sh installs it")
        pytest.skip("the wgpu package is not installed (pip install wgpu)")
    from aotnn_runtime.vulkan import vulkan_adapter as find
    try:
        return find()
    except DeviceUnavailableError as err:
        pytest.fail(f"{err}: tools/install.sh installs mesa-vulkan-drivers")


def _randomized(net, seed: int):
    """Give every parameter non-trivial values (BatchNorm variances positive)."""
    rng = np.random.default_rng(seed)
    for name, param in net.parameters_and_names():
        if name.endswith(("moving_variance", "gamma")):
            value = rng.uniform(0.5, 1.5, param.shape)
        elif name.endswith("moving_mean"):
            value = rng.normal(0, 0.1, param.shape)
        else:
            value = rng.normal(0, 0.2 if param.ndim < 2 else 1.0 / np.sqrt(np.prod(param.shape[1:])), param.shape)
        param.set_data(value.astype(np.float32))
    net.set_train(False)
    return net


def _pair(tmp_path_factory, name: str, net, x: np.ndarray):
    """(vulkan artifact path, x86 artifact path): one compiled artifact per model per session."""
    folder = tmp_path_factory.mktemp(name)
    example = aotnn.Tensor(x)
    vulkan = aotnn.export(net, example, file_name=str(folder / f"{name}_vulkan"), target="vulkan")
    host = aotnn.export(net, example, file_name=str(folder / f"{name}_x86"))
    return vulkan, host


@pytest.fixture(scope="session")
def lenet(tmp_path_factory):
    net = _randomized(aotnn.models.LeNet5(), 5)
    x = np.random.default_rng(0).random((1, 1, 32, 32), dtype=np.float32)
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    return (*_pair(tmp_path_factory, "lenet", net, x), x, params)


@pytest.fixture(scope="session")
def resnet(tmp_path_factory):
    net = _randomized(aotnn.models.resnet18(), 18)
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    return (*_pair(tmp_path_factory, "resnet18", net, x), x)


@pytest.fixture(scope="session")
def bert(tmp_path_factory):
    net = _randomized(aotnn.models.bert_encoder(), 7)
    ids = np.random.default_rng(2).integers(0, 30522, (1, 16)).astype(np.int32)
    return (*_pair(tmp_path_factory, "bert", net, ids), ids)


def assert_matches(actual: np.ndarray, expected: np.ndarray, tol: float = 1e-4) -> None:
    """Within ``tol`` of the reference, relative to the reference's magnitude."""
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


def test_lenet5_matches_x86_and_pytorch(lenet):
    vulkan, host, x, params = lenet
    module = aotnn_runtime.load(vulkan)
    assert type(module).__name__ == "VulkanModule"
    assert module.adapter.info["backend_type"] == "Vulkan"
    y = module.run(x)[0]
    assert_matches(y, aotnn_runtime.load(host).run(x)[0])
    assert_matches(y, lenet_reference(params, x))
    np.testing.assert_array_equal(module.run(x)[0], y)  # a second call reuses everything, same bits


def test_lenet5_params_override(lenet):
    """Weights passed at call time are uploaded (and re-uploaded when they change)."""
    vulkan, _, x, params = lenet
    entry = aotnn_runtime.load(vulkan)["predict"]
    scaled = {name: value * 0.5 for name, value in params.items()}
    assert_matches(entry(x, params=scaled, params_key=1)[0], lenet_reference(scaled, x))
    assert_matches(entry(x)[0], lenet_reference(params, x))


def test_resnet18_matches_x86(resnet):
    vulkan, host, x = resnet
    y = aotnn_runtime.load(vulkan).run(x)[0]
    assert y.shape == (1, 1000)
    assert_matches(y, aotnn_runtime.load(host).run(x)[0])


def test_bert_encoder_matches_x86(bert):
    """int32 token ids in; bool masks inside (stored as int32 on the device)."""
    vulkan, host, ids = bert
    y = aotnn_runtime.load(vulkan).run(ids)[0]
    assert y.shape == (1, 16, 256)
    assert_matches(y, aotnn_runtime.load(host).run(ids)[0])


def test_artifact_holds_wgsl_and_launch_metadata(lenet):
    vulkan = lenet[0]
    manifest = json.load(open(os.path.join(vulkan, "manifest.json")))
    table = json.load(open(os.path.join(vulkan, manifest["library"])))
    assert manifest["target"] == {"kind": "vulkan", "codegen": "wgsl"} and manifest["library"] == "kernels.json"
    entry = manifest["entries"]["predict"]
    for step in entry["steps"] + entry["prepare_steps"]:
        func = table["functions"][step["kernel"]]
        assert len(func["params"]) == len(step["args"])
        for launch in func["launches"]:
            code = open(os.path.join(vulkan, launch["shader"])).read()
            assert f"fn {launch['kernel']}(" in code and "@compute" in code
            assert f"@group(0) @binding({len(launch['args'])}) var<uniform> podArgs" in code
            assert len(launch["write"]) == len(launch["args"]) and any(launch["write"])
            assert all(isinstance(n, int) and n >= 1 for n in launch["grid"] + launch["block"])
    assert entry["arena_bytes"] > 0 and all(b["offset"] % 64 == 0 for b in entry["buffers"])


def test_wrong_input_is_refused_before_the_device(lenet):
    module = aotnn_runtime.load(lenet[0])
    with pytest.raises(InputError, match=r"expected shape \(1, 1, 32, 32\)"):
        module.run(np.zeros((2, 1, 32, 32), np.float32))


def test_non_vulkan_adapters_are_refused(monkeypatch):
    from aotnn_runtime import vulkan

    class OpenGL:
        info = {"backend_type": "OpenGL", "device": "llvmpipe"}

    monkeypatch.setattr(wgpu.gpu, "enumerate_adapters_sync", lambda: [OpenGL()])
    with pytest.raises(DeviceUnavailableError, match="no Vulkan adapter: install mesa-vulkan-drivers"):
        vulkan.vulkan_adapter()


def test_missing_wgpu_is_named(monkeypatch):
    from aotnn_runtime import vulkan
    monkeypatch.setitem(__import__("sys").modules, "wgpu", None)
    with pytest.raises(DeviceUnavailableError, match="needs the wgpu package"):
        vulkan.vulkan_adapter()


def test_cli_compiles_and_runs_for_vulkan(tmp_path):
    from aotnn.cli import main
    runner = CliRunner()
    out = tmp_path / "lenet_vk.aot"
    result = runner.invoke(main, ["compile", "aotnn.models:lenet5", "--input", "x:1,1,32,32", "--target", "vulkan",
                                  "-o", str(out)])
    assert result.exit_code == 0, result.output
    np.save(tmp_path / "x.npy", np.ones((1, 1, 32, 32), np.float32))
    result = runner.invoke(main, ["run", str(out), "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy")])
    assert result.exit_code == 0, result.output
    assert np.load(tmp_path / "y.npy").shape == (1, 10)


def test_parameter_names_that_are_not_identifiers(tmp_path):
    """SequentialCell names its parameters ``0.weight``; the shaders must still compile."""
    net = aotnn.nn.SequentialCell([aotnn.nn.Dense(4, 3), aotnn.nn.ReLU()])
    rng = np.random.default_rng(3)
    weight, bias = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(3,)).astype(np.float32)
    net[0].weight.set_data(aotnn.Tensor(weight))
    net[0].bias.set_data(aotnn.Tensor(bias))
    x = rng.normal(size=(2, 4)).astype(np.float32)
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "seq"), target="vulkan")
    np.testing.assert_allclose(aotnn_runtime.load(path).run(x)[0], np.maximum(x @ weight.T + bias, 0), rtol=1e-5, atol=1e-6)
