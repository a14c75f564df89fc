"""``aotnn run --profile/--trace`` and ``aotnn bench`` on a MODEL outside the zoo."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from aotnn.cli import main

MODEL_SOURCE = textwrap.dedent('''
    from aotnn import nn, ops

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(16, 8, has_bias=False)

        def construct(self, x):
            return ops.relu(self.fc(x))
''')


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli-profile")
    (path / "net.py").write_text(MODEL_SOURCE)
    np.save(path / "x.npy", np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
    return path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_run_profile_prints_every_kernel_and_writes_a_trace(workdir):
    art = workdir / "net.aot"
    assert invoke("compile", f"{workdir / 'net.py'}:Net", "--input", "x:4,16", "-o", art).exit_code == 0
    trace = workdir / "trace.json"
    result = invoke("run", art, "--input", workdir / "x.npy", "--repeat", 4, "--profile", "--trace", trace)
    assert result.exit_code == 0, result.output
    steps = json.loads((art / "manifest.json").read_text())["entries"]["predict"]["steps"]
    for step in steps:
        assert step["kernel"] in result.output
    dense = next(step for step in steps if "dense" in step["kernel"])
    assert dense["flops"] >= 2 * 4 * 8 * 16  # the matmul's multiply-adds (the fused relu adds a few)
    events = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]
    assert len(events) == 4 * len(steps)
    assert {e["name"] for e in events} == {step["kernel"] for step in steps}


def test_bench_takes_a_file_model_and_profiles_it(workdir):
    trace = workdir / "bench-trace.json"
    result = invoke("bench", f"{workdir / 'net.py'}:Net", "--input", "x:4,16", "--repeat", 2, "--warmup", 0,
                    "--vs", "onnxruntime", "--profile", "--trace", trace)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("| ") and "net.py:Net" in line)
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert float(cells[-2]) <= 1e-4  # aotnn agrees with onnxruntime running the model's ONNX export
    assert "aotnn per kernel" in result.output and "GFLOP/s" in result.output
    assert len([e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] == "X"]) >= 2


def test_bench_trace_wants_one_model(workdir):
    result = invoke("bench", "lenet5", "resnet18", "--trace", workdir / "t.json")
    assert result.exit_code != 0 and "--trace" in result.output
