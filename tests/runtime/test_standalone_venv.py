"""An exported artifact runs in a virtual environment that holds only the runtime (no apache-tvm)."""
from __future__ import annotations

import os
import subprocess
import sys
import venv

import numpy as np
import pytest

RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "runtime")


def test_artifact_runs_without_tvm(lenet_artifact, tmp_path):
    path, _, x, expected = lenet_artifact
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    install = subprocess.run([python, "-m", "pip", "install", "-q", os.path.abspath(RUNTIME_DIR)],
                             capture_output=True, text=True)
    if install.returncode != 0:
        pytest.fail(f"installing the runtime into a fresh venv failed:\n{install.stderr[-2000:]}")
    np.save(tmp_path / "x.npy", x)
    script = (
        "import sys, numpy as np, importlib.util\n"
        "assert importlib.util.find_spec('tvm') is None, 'apache-tvm must not be installed here'\n"
        "import aotnn_runtime\n"
        "out = aotnn_runtime.load(sys.argv[1]).run(np.load(sys.argv[2]))[0]\n"
        "np.save(sys.argv[3], out)\n"
    )
    subprocess.run([python, "-c", script, str(path), str(tmp_path / "x.npy"), str(tmp_path / "y.npy")],
                   check=True, cwd=tmp_path)
    out = np.load(tmp_path / "y.npy")
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
