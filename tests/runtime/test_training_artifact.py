"""On-device training: an exported TrainOneStepCell stepped by aotnn_runtime trains like aotnn does."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
import aotnn_runtime
from aotnn import nn, ops
from aotnn_runtime import InputError

STEPS = 5
BATCH, FEATURES, HIDDEN, CLASSES = 6, 5, 8, 3


def batches(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((BATCH, FEATURES)).astype(np.float32),
             rng.integers(0, CLASSES, BATCH).astype(np.int32)) for _ in range(STEPS)]


class MLP(nn.Cell):
    """Dense+ReLU+Dense, optionally BatchNorm1d after the first Dense."""

    def __init__(self, batch_norm: bool):
        super().__init__()
        self.fc1 = nn.Dense(FEATURES, HIDDEN)
        self.bn = nn.BatchNorm1d(HIDDEN) if batch_norm else None
        self.fc2 = nn.Dense(HIDDEN, CLASSES)

    def construct(self, x):
        x = self.fc1(x)
        if self.bn is not None:
            x = self.bn(x)
        return self.fc2(ops.relu(x))


def mlp(batch_norm: bool = False) -> nn.Cell:
    """The MLP with seeded, non-zero weights; in training mode when it has BatchNorm (statistics update)."""
    net = MLP(batch_norm)
    rng = np.random.default_rng(7)
    for param in net.trainable_params():
        param.set_data(rng.normal(0, 0.5, param.shape).astype(np.float32))
    return net.set_train(batch_norm)


def train_step(net: nn.Cell, optimizer: str) -> nn.Cell:
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if optimizer == "momentum":
        opt = nn.Momentum(net.trainable_params(), learning_rate=0.1, momentum=0.9)
    else:
        opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    return nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)


def export_training(directory, optimizer: str = "momentum", batch_norm: bool = False):
    """(artifact path, the exported TrainOneStepCell, its initial parameters by name)."""
    step = train_step(mlp(batch_norm), optimizer)
    x, y = batches()[0]
    path = aotnn.export(step, aotnn.Tensor(x), aotnn.Tensor(y), file_name=str(directory / f"{optimizer}{batch_norm}"))
    return path, step, {p.name: p.asnumpy().copy() for p in step.get_parameters()}


def in_process(step: nn.Cell) -> tuple[list[float], dict[str, np.ndarray]]:
    losses = [float(step(aotnn.Tensor(x), aotnn.Tensor(y)).asnumpy()) for x, y in batches()]
    return losses, {p.name: p.asnumpy() for p in step.get_parameters()}


def on_device(path: str) -> tuple[list[float], dict[str, np.ndarray]]:
    module = aotnn_runtime.load(path)
    losses = []
    for x, y in batches():
        out = module.run(x, y)
        assert len(out) == 1 and out[0].shape == ()  # the loss only, as TrainOneStepCell returns
        losses.append(float(out[0]))
    return losses, module.parameters()


def torch_reference(initial: dict[str, np.ndarray], optimizer: str) -> tuple[list[float], dict[str, np.ndarray]]:
    """The same training with torch.optim (MindSpore's Momentum is torch's SGD momentum, no dampening)."""
    p = {name: torch.tensor(initial[name], requires_grad=True) for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")}
    opt = (torch.optim.SGD(p.values(), lr=0.1, momentum=0.9) if optimizer == "momentum"
           else torch.optim.Adam(p.values(), lr=0.01, eps=1e-8))
    losses = []
    for x, y in batches():
        hidden = F.relu(F.linear(torch.tensor(x), p["fc1.weight"], p["fc1.bias"]))
        loss = F.cross_entropy(F.linear(hidden, p["fc2.weight"], p["fc2.bias"]), torch.tensor(y, dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses, {name: value.detach().numpy() for name, value in p.items()}


@pytest.fixture(scope="module")
def momentum_artifact(tmp_path_factory):
    return export_training(tmp_path_factory.mktemp("train"), "momentum")


@pytest.mark.parametrize("optimizer, batch_norm", [("momentum", False), ("adam", False), ("momentum", True)])
def test_stepping_the_artifact_trains_like_aotnn(tmp_path, momentum_artifact, optimizer, batch_norm):
    path, step, initial = (momentum_artifact if (optimizer, batch_norm) == ("momentum", False)
                           else export_training(tmp_path, optimizer, batch_norm))
    module = aotnn_runtime.load(path)
    state = set(module["train_step"].updated_parameters)
    expected_state = {"momentum": {"moments.fc1.weight"}, "adam": {"moment1.fc1.weight", "moment2.fc1.weight"}}[optimizer]
    assert expected_state <= state and "fc1.weight" in state
    if batch_norm:
        assert {"bn.moving_mean", "bn.moving_variance"} <= state
    assert set(module.parameters()) <= set(initial)  # all but what the step never reads (global_step)
    for name, value in module.parameters().items():
        np.testing.assert_array_equal(value, initial[name])

    device_losses, device_params = on_device(path)
    local_losses, local_params = in_process(step)
    np.testing.assert_allclose(device_losses, local_losses, rtol=1e-5, atol=1e-5)
    assert len(set(device_losses)) == STEPS  # the weights did change between steps
    for name in device_params:
        np.testing.assert_allclose(device_params[name], local_params[name], rtol=1e-5, atol=1e-5, err_msg=name)
    changed = {name for name in state if not np.array_equal(device_params[name], initial[name])}
    assert {"fc1.weight", "fc2.weight", "fc2.bias"} | expected_state <= changed  # (BatchNorm cancels fc1.bias')
    if batch_norm:
        assert {"bn.moving_mean", "bn.moving_variance"} <= changed
    if not batch_norm:
        torch_losses, torch_params = torch_reference(initial, optimizer)
        np.testing.assert_allclose(device_losses, torch_losses, rtol=1e-5, atol=1e-5)
        for name, value in torch_params.items():
            np.testing.assert_allclose(device_params[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_params_mapping_is_updated_in_place(momentum_artifact):
    path, _, initial = momentum_artifact
    module = aotnn_runtime.load(path)
    stored_before = module.parameters()
    mine = {name: value.copy() for name, value in initial.items()}
    losses = [float(module.run(x, y, params=mine)[0]) for x, y in batches()]
    assert losses == pytest.approx(on_device(path)[0], rel=1e-6, abs=1e-6)
    assert not np.array_equal(mine["fc1.weight"], initial["fc1.weight"])
    for name, value in module.parameters().items():  # the stored weights were not touched
        np.testing.assert_array_equal(value, stored_before[name])
    frozen = {name: value.copy() for name, value in initial.items()}
    frozen["fc1.weight"].setflags(write=False)
    with pytest.raises(InputError, match="'fc1.weight'.*writable numpy array"):
        module.run(*batches()[0], params=frozen)


@pytest.mark.parametrize("label, message", [
    (np.zeros(BATCH, np.int64), "dtype int32, got int64"),
    (np.zeros(BATCH, np.float32), "dtype int32, got float32"),
    (np.zeros((BATCH, 1), np.int32), "shape"),
    (np.zeros(BATCH + 1, np.int32), "shape"),
])
def test_bad_label_raises_and_changes_nothing(momentum_artifact, label, message):
    module = aotnn_runtime.load(momentum_artifact[0])
    before = module.parameters()
    with pytest.raises(InputError, match=message):
        module.run(batches()[0][0], label)
    with pytest.raises(InputError, match="expected 2 input"):
        module.run(batches()[0][0])
    for name, value in module.parameters().items():
        np.testing.assert_array_equal(value, before[name])


def test_trained_weights_are_saved_and_resumed(momentum_artifact, tmp_path):
    path = str(tmp_path / "copy.aot")
    shutil.copytree(momentum_artifact[0], path)
    data = batches()
    module = aotnn_runtime.load(path)
    for x, y in data[:2]:
        module.run(x, y)
    module.save_weights(tmp_path / "trained.npz")
    module.save_weights()  # into the artifact: a new weights file, then the manifest naming it
    rest = [float(module.run(x, y)[0]) for x, y in data[2:]]

    resumed = aotnn_runtime.load(path)  # the hashes were updated too: the artifact loads cleanly
    assert [float(resumed.run(x, y)[0]) for x, y in data[2:]] == rest
    assert len([f for f in os.listdir(path) if f.endswith(".bin")]) == 1

    fresh = aotnn_runtime.load(momentum_artifact[0])
    fresh.load_weights(tmp_path / "trained.npz")
    assert [float(fresh.run(x, y)[0]) for x, y in data[2:]] == rest
    np.testing.assert_array_equal(fresh.get_parameter("fc2.bias"), resumed.get_parameter("fc2.bias"))
    with pytest.raises(KeyError, match="nope"):
        fresh.get_parameter("nope")
    np.savez(tmp_path / "bad.npz", **{"fc1.weight": np.zeros((2, 2), np.float32)})
    with pytest.raises(InputError, match="'fc1.weight'"):
        fresh.load_weights(tmp_path / "bad.npz")


@pytest.mark.skipif(shutil.which("cc") is None or shutil.which("make") is None, reason="needs a C compiler and make")
def test_training_bundle_steps_like_the_artifact(tmp_path):
    """A training step as a hosted C bundle (it was refused before): the example program runs one step
    and writes the loss, the step's only output, as the artifact's first step computes it."""
    import subprocess
    step = train_step(mlp(), "momentum")
    x, y = batches()[0]
    example = (aotnn.Tensor(x), aotnn.Tensor(y))
    bundle = aotnn.export(step, *example, file_name=str(tmp_path / "b"), file_format="BUNDLE")
    expected = float(aotnn_runtime.load(aotnn.export(step, *example, file_name=str(tmp_path / "a"))).run(x, y)[0])
    subprocess.run(["make", "-s"], cwd=bundle, check=True, capture_output=True)
    x.tofile(tmp_path / "x.bin")
    y.tofile(tmp_path / "y.bin")
    subprocess.run([os.path.join(bundle, "model"), str(tmp_path / "x.bin"), str(tmp_path / "y.bin")], cwd=tmp_path,
                   check=True, capture_output=True)
    (loss,) = np.fromfile(tmp_path / "output0.bin", dtype=np.float32)  # only the loss is an output
    np.testing.assert_allclose(loss, expected, rtol=1e-6)


def _gpu_available(kind: str) -> bool:
    if kind == "cuda":
        from schedules.cuda import detect_arch
        return detect_arch() is not None
    try:
        from aotnn_runtime.vulkan import vulkan_adapter
        vulkan_adapter()
        return True
    except aotnn_runtime.DeviceUnavailableError:  # test_vulkan.py fails the run where CI lacks it
        return False


@pytest.mark.parametrize("kind", ["vulkan", "cuda"])
def test_gpu_executors_write_updates_back(tmp_path, kind):
    step = train_step(mlp(True), "momentum")  # (Adam would amplify the rounding noise of fc1.bias' zero gradient)
    x, y = batches()[0]
    path = aotnn.export(step, aotnn.Tensor(x), aotnn.Tensor(y), file_name=str(tmp_path / kind), target=kind)
    with open(os.path.join(path, "manifest.json"), encoding="utf-8") as stream:
        record = json.load(stream)["entries"]["train_step"]
    updated = {record["params"][u["param"]]["name"] for u in record["param_updates"]}
    assert {"fc1.weight", "moments.fc2.bias", "bn.moving_mean"} <= updated
    if not _gpu_available(kind):
        pytest.skip(f"no {kind} device on this machine: compile-only here")
    device_losses, device_params = on_device(path)
    local_losses, local_params = in_process(step)
    np.testing.assert_allclose(device_losses, local_losses, rtol=1e-5, atol=1e-5)
    for name, value in device_params.items():
        np.testing.assert_allclose(value, local_params[name], rtol=1e-5, atol=1e-5, err_msg=name)
