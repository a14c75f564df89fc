"""An exported artifact runs in a virtual environment that holds only the runtime (no apache-tvm)."""
from __future__ import annotations

import os
import subprocess
import venv

import numpy as np
import pytest

from .test_training_artifact import batches, export_training, in_process

RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "runtime")
NO_TVM = ("import sys, numpy as np, importlib.util\n"
          "assert importlib.util.find_spec('tvm') is None, 'apache-tvm must not be installed here'\n"
          "import aotnn_runtime\n")


@pytest.fixture(scope="module")
def runtime_python(tmp_path_factory) -> str:
    """The python of a fresh venv with only runtime/ (and its dependencies) installed."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", os.path.abspath(RUNTIME_DIR)],
                             capture_output=True, text=True)
    if install.returncode != 0:
        pytest.fail(f"installing the runtime into a fresh venv failed:\n{install.stderr[-2000:]}")
    return python


def test_artifact_runs_without_tvm(lenet_artifact, runtime_python, tmp_path):
    path, _, x, expected = lenet_artifact
    np.save(tmp_path / "x.npy", x)
    script = NO_TVM + (
        "out = aotnn_runtime.load(sys.argv[1]).run(np.load(sys.argv[2]))[0]\n"
        "np.save(sys.argv[3], out)\n"
    )
    subprocess.run([runtime_python, "-c", script, str(path), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                   check=True, cwd=tmp_path)
    out = np.load(tmp_path / "y.npy")
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_training_artifact_steps_without_tvm(runtime_python, tmp_path):
    """On-device training: the runtime alone steps an exported TrainOneStepCell like aotnn trains."""
    path, step, _ = export_training(tmp_path, "adam")
    data = batches()
    np.savez(tmp_path / "batches.npz", **{f"x{i}": x for i, (x, _) in enumerate(data)},
             **{f"y{i}": y for i, (_, y) in enumerate(data)})
    script = NO_TVM + (
        "module = aotnn_runtime.load(sys.argv[1])\n"
        "data = np.load(sys.argv[2])\n"
        "losses = [module.run(data[f'x{i}'], data[f'y{i}'])[0] for i in range(len(data.files) // 2)]\n"
        "module.save_weights(sys.argv[4])\n"
        "np.save(sys.argv[3], np.array(losses))\n"
    )
    subprocess.run([runtime_python, "-c", script, path, str(tmp_path / "batches.npz"), str(tmp_path / "losses.npy"),
                    str(tmp_path / "trained.npz")], check=True, cwd=tmp_path)
    expected_losses, expected_params = in_process(step)
    np.testing.assert_allclose(np.load(tmp_path / "losses.npy"), expected_losses, rtol=1e-5, atol=1e-5)
    with np.load(tmp_path / "trained.npz") as trained:
        assert {"fc1.weight", "moment1.fc1.weight", "moment2.fc2.bias"} <= set(trained.files)
        for name in trained.files:
            np.testing.assert_allclose(trained[name], expected_params[name], rtol=1e-5, atol=1e-5, err_msg=name)
