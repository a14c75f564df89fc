"""``-o PATH`` of ``aotnn compile`` and ``aotnn export``: writes exactly PATH, never replaces the user's own
files or folders, replaces an existing artifact (or ONNX file) only with ``--force``."""
from __future__ import annotations

import os
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

import aotnn_runtime
from aotnn.cli import main

MODEL_SOURCE = textwrap.dedent('''
    import numpy as np
    from aotnn import Tensor, nn, ops

    class Net(nn.Cell):
        def __init__(self, seed=0):
            super().__init__()
            rng = np.random.default_rng(seed)
            self.fc = nn.Dense(4, 3)
            self.fc.weight.set_data(Tensor(rng.standard_normal((3, 4)).astype(np.float32)))
            self.fc.bias.set_data(Tensor(rng.standard_normal(3).astype(np.float32)))

        def construct(self, x):
            return ops.tanh(self.fc(x))

    def net_seed1():
        return Net(1)
''')
X = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)


def _reference(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    weight, bias = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    return np.tanh(X @ weight.T + bias)


@pytest.fixture()
def model(tmp_path):
    (tmp_path / "net.py").write_text(MODEL_SOURCE)
    return tmp_path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def compile_to(model, out, *extra, factory="Net"):
    return invoke("compile", f"{model / 'net.py'}:{factory}", "--input", "x:2,4", "-o", out, *extra)


def _runs_as(path, seed: int) -> None:
    (out,) = aotnn_runtime.load(str(path)).run(X)
    np.testing.assert_allclose(out, _reference(seed), rtol=1e-5, atol=1e-6)


def _snapshot(path):
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_o_writes_exactly_the_path_given(model):
    result = compile_to(model, model / "plain")
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(model)) == ["net.py", "plain"]  # no '.aot' added, no staging left
    _runs_as(model / "plain", 0)
    result = invoke("export", f"{model / 'net.py'}:Net", "--input", "x:2,4", "--format", "onnx", "-o", model / "m")
    assert result.exit_code == 0, result.output
    session = ort.InferenceSession(str(model / "m"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": X})[0], _reference(0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("force", [False, True])
def test_the_users_own_directory_is_refused_and_intact(model, force):
    mine = model / "mine.aot"
    mine.mkdir()
    (mine / "notes.txt").write_text("three weeks of notes")
    (mine / "sub").mkdir()
    (mine / "sub" / "data.npy").write_bytes(b"precious")
    before = _snapshot(mine)
    result = compile_to(model, mine, *(["--force"] if force else []))
    assert result.exit_code != 0 and "FileExistsError" in result.output and "mine.aot" in result.output
    assert ("not an aotnn artifact" if force else "--force") in result.output
    result = invoke("export", f"{model / 'net.py'}:Net", "--input", "x:2,4", "--format", "aot", "-o", mine,
                    *(["--force"] if force else []))
    assert result.exit_code != 0 and "mine.aot" in result.output
    assert _snapshot(mine) == before
    assert sorted(os.listdir(model)) == ["mine.aot", "net.py"]


def test_the_users_own_file_is_refused_even_with_force(model):
    mine = model / "mine.aot"
    mine.write_text("not an artifact")
    result = compile_to(model, mine, "--force")
    assert result.exit_code != 0 and "is a file" in result.output
    assert mine.read_text() == "not an artifact"


def test_an_existing_artifact_is_replaced_only_with_force(model):
    out = model / "net.aot"
    assert compile_to(model, out).exit_code == 0
    result = compile_to(model, out, factory="net_seed1")
    assert result.exit_code != 0 and "already exists" in result.output and "--force" in result.output
    _runs_as(out, 0)
    result = compile_to(model, out, "--force", factory="net_seed1")
    assert result.exit_code == 0, result.output
    _runs_as(out, 1)
    assert sorted(os.listdir(model)) == ["net.aot", "net.py"]


def test_an_existing_onnx_file_is_replaced_only_with_force(model):
    out = model / "net.onnx"
    args = ("export", f"{model / 'net.py'}:Net", "--input", "x:2,4", "--format", "onnx", "-o", out)
    assert invoke(*args).exit_code == 0
    first = out.read_bytes()
    result = invoke(*args)
    assert result.exit_code != 0 and "--force" in result.output and out.read_bytes() == first
    assert invoke(*args, "--force").exit_code == 0
    folder = model / "folder.onnx"
    folder.mkdir()
    result = invoke("export", f"{model / 'net.py'}:Net", "--input", "x:2,4", "--format", "onnx", "-o", folder,
                    "--force")
    assert result.exit_code != 0 and "is a directory" in result.output and folder.is_dir()
