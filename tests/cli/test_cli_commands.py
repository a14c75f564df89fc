"""The command line end to end: MODEL forms (file.py:Name, module:name, .onnx), --ckpt, export formats,
inspect on artifacts, bundles and ONNX files, running bundles, bench rounds, help texts and one-line errors."""
from __future__ import annotations

import json
import shutil
import textwrap

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import aotnn
from aotnn.cli import main

MODEL_SOURCE = textwrap.dedent('''
    from aotnn import nn, ops

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(4, 3)

        def construct(self, x):
            return ops.tanh(self.fc(x))
''')


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A model file, a checkpoint with known weights, an input and the numpy reference output."""
    path = tmp_path_factory.mktemp("cli")
    (path / "net.py").write_text(MODEL_SOURCE)
    rng = np.random.default_rng(5)
    weight, bias = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    namespace: dict = {}
    exec(MODEL_SOURCE, namespace)
    net = namespace["Net"]()
    net.fc.weight.set_data(aotnn.Tensor(weight))
    net.fc.bias.set_data(aotnn.Tensor(bias))
    aotnn.save_checkpoint(net, str(path / "net.ckpt"))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.save(path / "x.npy", x)
    return path, x, np.tanh(x @ weight.T + bias)


def invoke(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result


def ok(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.output


def test_help_texts_have_examples():
    assert "Examples:" in ok("--help")
    for command in ("compile", "run", "inspect", "export"):
        text = ok(command, "--help")
        assert "Example" in text and "aotnn " + command in text


def test_compile_file_model_with_ckpt_and_run(workdir):
    path, x, expected = workdir
    out = path / "net.aot"
    ok("compile", f"{path / 'net.py'}:Net", "--input", "x:2,4", "--ckpt", path / "net.ckpt", "-o", out)
    ok("run", out, "--input", path / "x.npy", "--output", path / "y.npy")
    np.testing.assert_allclose(np.load(path / "y.npy"), expected, rtol=1e-5, atol=1e-6)


def test_export_onnx_with_ckpt(workdir):
    path, x, expected = workdir
    ok("export", f"{path / 'net.py'}:Net", "--input", "x:2,4", "--ckpt", path / "net.ckpt", "--format", "onnx",
       "-o", path / "net.onnx")
    model = onnx.load(path / "net.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert {t.name for t in model.graph.initializer} == {"fc.weight", "fc.bias"}
    session = ort.InferenceSession(str(path / "net.onnx"), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)
    text = ok("inspect", path / "net.onnx")
    assert "input  x: float32[2, 4]" in text and "opset 17" in text and "MatMul" in text


def test_compile_onnx_model_and_inspect(tmp_path):
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Gemm", ["input", "w", "b"], ["h"], name="fc", transB=1),
             helper.make_node("Sigmoid", ["h"], ["out"], name="sigmoid")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 6])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 2])],
                              [numpy_helper.from_array(rng.standard_normal((2, 6)).astype(np.float32), "w"),
                               numpy_helper.from_array(rng.standard_normal(2).astype(np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, tmp_path / "m.onnx")
    result = invoke("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.aot")
    assert result.exit_code != 0 and "dynamic dimension 'N'" in result.output
    ok("compile", tmp_path / "m.onnx", "--input", "input:3,6", "-o", tmp_path / "m.aot")
    x = rng.standard_normal((3, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ok("run", tmp_path / "m.aot", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), session.run(None, {"input": x})[0], rtol=1e-5, atol=1e-6)

    text = ok("inspect", tmp_path / "m.aot")
    assert "host artifact" in text and "input  input: float32[3, 6]" in text
    assert "kernels:" in text and "arena:" in text and "intermediates without reuse" in text
    assert "target: llvm" in text and "kernels.so" in text
    info = json.loads(ok("inspect", tmp_path / "m.aot", "--json"))
    entry = info["entries"]["predict"]
    assert info["kind"] == "artifact" and entry["parameters"] == 2 and entry["arena_bytes"] <= entry["unplanned_bytes"]


def test_zoo_model_without_input_and_aarch64_bundle(tmp_path):
    out = tmp_path / "lenet-arm.aot"
    ok("compile", "aotnn.models:lenet5", "--target", "aarch64", "-o", out)
    text = ok("inspect", out)
    assert "C bundle" in text and "aarch64" in text and "arena:" in text and "kernels.o" in text
    info = json.loads(ok("inspect", out, "--json"))
    assert info["kind"] == "bundle" and info["library"] is None
    if not (shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64") and shutil.which("make")):
        pytest.skip("running an aarch64 bundle needs gcc-aarch64-linux-gnu and qemu-user")
    np.save(tmp_path / "x.npy", np.random.default_rng(1).standard_normal((1, 1, 32, 32)).astype(np.float32))
    text = ok("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert "output 0: shape (1, 10)" in text and np.load(tmp_path / "y.npy").shape == (1, 10)


def test_host_bundle_runs_like_the_artifact(workdir, tmp_path):
    if not (shutil.which("make") and shutil.which("cc")):
        pytest.skip("building a bundle needs make and a C compiler")
    path, x, expected = workdir
    model = f"{path / 'net.py'}:Net"
    ok("export", model, "--input", "x:2,4", "--ckpt", path / "net.ckpt", "--format", "bundle", "-o", tmp_path / "b.aot")
    ok("run", tmp_path / "b.aot", "--input", path / "x.npy", "--output", tmp_path / "y.npy", "--repeat", "2")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-6)


def test_export_aot_format(workdir, tmp_path):
    path, _, expected = workdir
    ok("export", f"{path / 'net.py'}:Net", "--input", "x:2,4", "--ckpt", path / "net.ckpt", "--format", "aot",
       "-o", tmp_path / "n.aot")
    ok("run", tmp_path / "n.aot", "--input", path / "x.npy", "--output", tmp_path / "y.npy")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), expected, rtol=1e-5, atol=1e-6)


def test_errors_are_one_line_and_debug_shows_the_trace(workdir, tmp_path):
    path, _, _ = workdir
    (tmp_path / "bad.onnx").write_bytes(b"definitely not a model")
    result = invoke("compile", tmp_path / "bad.onnx", "-o", tmp_path / "o.aot")
    assert result.exit_code != 0
    assert "OnnxImportError" in result.output and "not a valid ONNX model" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) <= 3
    result = invoke("--debug", "compile", tmp_path / "bad.onnx", "-o", tmp_path / "o.aot")
    assert result.exit_code != 0 and "Traceback" in result.output

    result = invoke("compile", "nothing_here.py:Net", "--input", "x:1")
    assert result.exit_code != 0 and "no such file" in result.output
    result = invoke("compile", f"{path / 'net.py'}:Net")
    assert result.exit_code != 0 and "--input" in result.output
    result = invoke("compile", f"{path / 'net.py'}:Net", "--input", "x:2,four")
    assert result.exit_code != 0 and "comma-separated ints" in result.output
    result = invoke("compile", f"{path / 'net.py'}:Net", "--input", "x:2,4", "--target", "pdp11")
    assert result.exit_code != 0 and "TargetError" in result.output and "Traceback" not in result.output
    result = invoke("inspect", tmp_path / "missing.aot")
    assert result.exit_code != 0 and "ArtifactError" in result.output


def test_corrupt_artifact_is_reported(workdir, tmp_path):
    path, _, _ = workdir
    out = tmp_path / "net.aot"
    ok("compile", f"{path / 'net.py'}:Net", "--input", "x:2,4", "-o", out)
    weights = out / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:-8])
    result = invoke("run", out, "--input", path / "x.npy")
    assert result.exit_code != 0 and "ArtifactError" in result.output and "truncated" in result.output
    result = invoke("inspect", out)
    assert result.exit_code != 0 and "ArtifactError" in result.output


def test_bench_passes_rounds_to_the_benchmark(tmp_path):
    results = tmp_path / "bench.json"
    out = ok("bench", "lenet5", "--repeat", "2", "--warmup", "0", "--rounds", "2", "--threads", "1",
             "--vs", "onnxruntime", "--json", str(results))
    (row,) = json.loads(results.read_text())
    assert len(row["rounds"]) == 2 and row["errors"]["onnxruntime"] < 1e-5
    assert "lenet5 aotnn/onnxruntime per round" in out
    refused = invoke("bench", "lenet5", "--rounds", "0")
    assert refused.exit_code == 2 and "--rounds" in refused.output
