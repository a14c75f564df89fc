"""ONNX import: models built without aotnn (onnx.helper, PyTorch's exporter) and aotnn's exported zoo
compile through TVM's Relax ONNX frontend into the usual pipeline and match onnxruntime; bad models
fail with an error naming the node."""
from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import aotnn
import aotnn_runtime
import schedules
from aotnn import Tensor
from aotnn.onnx import to_onnx_model
from relay_frontend.onnx_import import OnnxImportError, import_onnx

RNG = np.random.default_rng(11)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8,
                             producer_name="onnx.helper")


def value(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def run_ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_close(got, expected, tol=1e-5):
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64),
                               rtol=tol, atol=tol * scale)


def check_against_ort(model, feeds, shape_dict=None, tol=1e-5):
    net = aotnn.load_onnx(model.SerializeToString(), shape_dict=shape_dict)
    outputs = net(*[Tensor(a) for a in feeds.values()])
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = run_ort(model, feeds)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert got.shape == want.shape
        assert_close(got.asnumpy(), want, tol)
    return net


# -- graphs built with onnx.helper ----------------------------------------------------------------------
def mlp_model():
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2", transB=1, alpha=0.5),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    inits = [init("shape", np.array([2, -1], np.int64)), init("w1", normal(16, 12)), init("b1", normal(16)),
             init("w2", normal(5, 16)), init("b2", normal(5))]
    return make_model(nodes, [value("x", [2, 3, 4])], [value("probs", [2, 5])], inits)


def test_helper_mlp_matches_onnxruntime():
    net = check_against_ort(mlp_model(), {"x": normal(2, 3, 4)})
    # float initializers are the Cell's parameters, under their ONNX names; the int64 shape is a constant
    assert sorted(name for name, _ in net.parameters_and_names()) == ["b1", "b2", "w1", "w2"]


def test_helper_cnn_matches_onnxruntime():
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["n"], name="bn", epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc"),
    ]
    inits = [init("w", normal(6, 3, 3, 3, scale=0.5)), init("b", normal(6)), init("gamma", normal(6)),
             init("beta", normal(6)), init("mean", normal(6)), init("var", np.abs(normal(6)) + 0.5),
             init("fc", normal(6, 4))]
    model = make_model(nodes, [value("x", [1, 3, 16, 16])], [value("y", [1, 4])], inits)
    check_against_ort(model, {"x": normal(1, 3, 16, 16)})


def test_helper_multi_input_output_and_dynamic_batch():
    nodes = [
        helper.make_node("Add", ["a", "b"], ["s"], name="add"),
        helper.make_node("Transpose", ["s"], ["t"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("Split", ["t", "sizes"], ["u", "v"], name="split", axis=1),
        helper.make_node("Mul", ["u", "v"], ["m"], name="mul"),
        helper.make_node("ReduceMean", ["m"], ["mean"], name="mean", axes=[2], keepdims=0),
        helper.make_node("Concat", ["u", "v"], ["cat"], name="concat", axis=2),
    ]
    model = make_model(nodes, [value("a", ["N", 3, 4]), value("b", ["N", 3, 4])],
                       [value("mean", ["N", 2]), value("cat", ["N", 2, 6])],
                       [init("sizes", np.array([2, 2], np.int64))])
    with pytest.raises(OnnxImportError, match="input 'a' has a dynamic dimension 'N'"):
        import_onnx(model)
    feeds = {"a": normal(5, 3, 4), "b": normal(5, 3, 4)}
    check_against_ort(model, feeds, shape_dict={"a": (5, 3, 4), "b": (5, 3, 4)})


def test_pytorch_exported_model_matches_onnxruntime():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                                 torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 5)).eval()
    stream = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(module, torch.randn(1, 3, 8, 8), stream, dynamo=False, input_names=["input"],
                              output_names=["logits"])
        except Exception as err:  # the TorchScript exporter is deprecated upstream
            pytest.skip(f"torch.onnx.export unavailable: {err}")
    model = onnx.load_model_from_string(stream.getvalue())
    x = normal(1, 3, 8, 8)
    check_against_ort(model, {"input": x})
    np.testing.assert_allclose(run_ort(model, {"input": x})[0], module(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


# -- aotnn's zoo, exported then imported --------------------------------------------------------------
def randomized(net, scale):
    for param in net.get_parameters():
        value = RNG.standard_normal(param.shape) * scale
        if "variance" in param.name:
            value = np.abs(value) + 0.5
        param.set_data(Tensor(value.astype(np.float32)))
    return net


@pytest.mark.parametrize("name,shape,scale", [("lenet5", (2, 1, 32, 32), 0.2), ("resnet18", (1, 3, 32, 32), 0.1)])
def test_zoo_roundtrip_through_import(name, shape, scale):
    net = randomized(getattr(aotnn.models, name)(), scale)
    x = normal(*shape)
    model = to_onnx_model(net, Tensor(x))
    imported = check_against_ort(model, {"x": x}, tol=1e-4)
    assert {n for n, _ in imported.parameters_and_names()} == {p.name for p in net.get_parameters()}


def test_graph_builds_with_schedules_build(tmp_path):
    """The imported function feeds schedules.build directly (data inputs + parameters)."""
    model = mlp_model()
    graph = import_onnx(model)
    path = schedules.build(graph.module(), graph.input_names, graph.param_names, output_dir=str(tmp_path / "mlp.aot"),
                           weights=graph.weights)
    x = normal(2, 3, 4)
    got = aotnn_runtime.load(path).run(x)[0]
    assert_close(got, run_ort(model, {"x": x})[0])


def test_checkpoint_loads_into_imported_cell(tmp_path):
    net = randomized(aotnn.models.lenet5(), 0.2)
    x = normal(1, 1, 32, 32)
    model = to_onnx_model(net, Tensor(x))
    other = randomized(aotnn.models.lenet5(), 0.2)
    aotnn.save_checkpoint(other, str(tmp_path / "other.ckpt"))
    imported = aotnn.load_onnx(model.SerializeToString())
    aotnn.load_checkpoint(str(tmp_path / "other.ckpt"), net=imported)
    assert_close(imported(Tensor(x)).asnumpy(), other(Tensor(x)).asnumpy(), 1e-4)


def test_imported_cell_checks_its_inputs():
    net = aotnn.load_onnx(mlp_model().SerializeToString())
    with pytest.raises(ValueError, match="input 'x'.*float32\\[2, 3, 4\\]"):
        net(Tensor(normal(1, 3, 4)))


# -- bad models ------------------------------------------------------------------------------------------
def test_missing_truncated_and_garbage_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        aotnn.load_onnx(str(tmp_path / "missing.onnx"))
    data = mlp_model().SerializeToString()
    (tmp_path / "cut.onnx").write_bytes(data[: len(data) // 2])
    with pytest.raises(OnnxImportError, match="not a valid ONNX model"):
        aotnn.load_onnx(str(tmp_path / "cut.onnx"))
    (tmp_path / "junk.onnx").write_bytes(b"\xff\x00 this is not protobuf" * 10)
    with pytest.raises(OnnxImportError, match="not a valid ONNX model"):
        aotnn.load_onnx(str(tmp_path / "junk.onnx"))


def test_malformed_graph_names_the_node():
    nodes = [helper.make_node("Relu", ["nowhere"], ["y"], name="relu7")]
    model = make_model(nodes, [value("x", [2])], [value("y", [2])])
    with pytest.raises(OnnxImportError, match="malformed ONNX model: node 'relu7' \\(Relu\\)"):
        import_onnx(model)


def test_unsupported_op_names_the_node():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Det", ["r"], ["y"], name="det3")]
    model = make_model(nodes, [value("x", [3, 3])], [value("y", [])])
    with pytest.raises(OnnxImportError, match="node 'det3' \\(Det\\).*not supported"):
        import_onnx(model)


def test_conversion_failure_names_the_node():
    # sizes for two of four axes: TVM's Resize converter takes sizes for every axis only
    nodes = [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize1", mode="nearest", axes=[2, 3])]
    model = make_model(nodes, [value("x", [1, 1, 2, 2])], [value("y", [1, 1, 4, 4])],
                       [numpy_helper.from_array(np.array([4, 4], np.int64), "sizes")], opset=18)
    with pytest.raises(OnnxImportError, match="node 'resize1' \\(Resize\\): TVM cannot import it"):
        import_onnx(model)


def test_shape_dict_with_unknown_input():
    with pytest.raises(OnnxImportError, match="not inputs of the model"):
        import_onnx(mlp_model(), shape_dict={"y": (1, 2)})
