"""The command line: compile, run and inspect, with one-line errors."""
from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from aotnn.cli import main


def test_compile_run_inspect(tmp_path):
    runner = CliRunner()
    out = tmp_path / "lenet.aot"
    result = runner.invoke(main, ["compile", "aotnn.models:lenet5", "--input", "x:1,1,32,32", "-o", str(out)])
    assert result.exit_code == 0, result.output
    np.save(tmp_path / "x.npy", np.ones((1, 1, 32, 32), np.float32))
    result = runner.invoke(main, ["run", str(out), "--input", str(tmp_path / "x.npy"),
                                  "--output", str(tmp_path / "y.npy"), "--repeat", "3"])
    assert result.exit_code == 0, result.output
    assert np.load(tmp_path / "y.npy").shape == (1, 10)
    result = runner.invoke(main, ["inspect", str(out)])
    assert result.exit_code == 0, result.output
    assert "arena:" in result.output and "input  x: float32[1, 1, 32, 32]" in result.output


def test_errors_are_one_line(tmp_path):
    runner = CliRunner()
    np.save(tmp_path / "x.npy", np.ones((1, 1, 32, 32), np.float32))
    result = runner.invoke(main, ["run", str(tmp_path / "missing.aot"), "--input", str(tmp_path / "x.npy")])
    assert result.exit_code != 0
    assert "ArtifactError" in result.output and "Traceback" not in result.output
    result = runner.invoke(main, ["compile", "aotnn.models:nothing", "--input", "x:1", "-o", str(tmp_path / "o")])
    assert result.exit_code != 0 and "has no attribute 'nothing'" in result.output
