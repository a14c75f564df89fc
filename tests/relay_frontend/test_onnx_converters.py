"""aotnn's own ONNX converters (relay_frontend/onnx_converters.py) against onnxruntime: LayerNormalization's
Mean/InvStdDev outputs, TopK and CumSum in the form exported models hold them (K and axis as initializers)."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import aotnn
from relay_frontend.onnx_import import OnnxImportError, import_onnx


def one_node_model(op_type: str, x: np.ndarray, outputs: list[tuple[str, int]], initializers: dict, opset: int = 17,
                   **attrs) -> bytes:
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), list(x.shape))]
    node = helper.make_node(op_type, ["x", *initializers], [name for name, _ in outputs], name="n0", **attrs)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info(n, t, [None] * x.ndim) for n, t in outputs],
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()


def run_both(model: bytes, x: np.ndarray) -> tuple[list, list]:
    got = aotnn.load_onnx(model)(aotnn.Tensor(x))
    got = [np.asarray(t.asnumpy()) for t in (got if isinstance(got, (tuple, list)) else [got])]
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})
    return got, expected


def assert_same(got: list, expected: list, tol: float = 1e-5) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [1, -1, 0])
def test_layer_normalization_mean_and_inv_std_dev(axis):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 3, 4)) * 2 + 1).astype(np.float32)
    normalized = x.shape[axis % 3:]
    weights = {"scale": rng.standard_normal(normalized).astype(np.float32),
               "bias": rng.standard_normal(normalized).astype(np.float32)}
    model = one_node_model("LayerNormalization", x, [("y", TensorProto.FLOAT), ("mean", TensorProto.FLOAT),
                                                     ("inv_std", TensorProto.FLOAT)], weights, axis=axis, epsilon=1e-3)
    got, expected = run_both(model, x)
    assert got[1].shape == x.shape[:axis % 3] + (1,) * (3 - axis % 3)
    assert_same(got, expected)


@pytest.mark.parametrize("largest, axis", [(1, 1), (0, 0)])
def test_top_k_values_and_indices_with_ties(largest, axis):
    x = np.array([[3, 1, 3, 2, 1], [0, 5, 5, 5, 4], [2, 2, 7, 0, 7]], np.float32)
    model = one_node_model("TopK", x, [("values", TensorProto.FLOAT), ("indices", TensorProto.INT64)],
                           {"k": np.array([2], np.int64)}, axis=axis, largest=largest)
    got, expected = run_both(model, x)
    assert_same(got, expected)


@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum_against_numpy(exclusive, reverse):
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) * np.float32(0.5)
    model = one_node_model("CumSum", x, [("y", TensorProto.FLOAT)], {"axis": np.array(1, np.int32)},
                           exclusive=exclusive, reverse=reverse)
    got, expected = run_both(model, x)
    reference = np.flip(x, 1) if reverse else x
    reference = np.cumsum(reference, axis=1) - (reference if exclusive else 0)
    reference = np.flip(reference, 1) if reverse else reference
    np.testing.assert_allclose(got[0], reference, rtol=1e-6)
    assert_same(got, expected)


def test_top_k_with_k_from_a_data_input_names_node_and_input():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])
    k = helper.make_tensor_value_info("k", TensorProto.INT64, [1])
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top")
    graph = helper.make_graph([node], "g", [x, k], [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, None]),
                                                    helper.make_tensor_value_info("i", TensorProto.INT64, [2, None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(OnnxImportError, match=r"node 'top' \(TopK\): input 'K' must be a constant"):
        import_onnx(model)


@pytest.mark.parametrize("op_type, attrs", [
    ("Celu", {"alpha": 1.5}),
    ("LpNormalization", {"axis": 1, "p": 1}),
    ("LpNormalization", {"axis": 0, "p": 2}),
    ("IsInf", {"detect_negative": 0}),
    ("IsInf", {"detect_positive": 0}),
])
def test_unary_converters_match_onnxruntime(op_type, attrs):
    x = np.array([[-2.0, -0.5, 0.0, 0.0], [0.25, 3.0, 0.0, -1.0]], np.float32)
    if op_type == "IsInf":
        x = np.array([[-np.inf, 1.0, np.inf, np.nan], [0.0, np.inf, -np.inf, -3.0]], np.float32)
    out_type = TensorProto.BOOL if op_type == "IsInf" else TensorProto.FLOAT
    model = one_node_model(op_type, x, [("y", out_type)], {}, opset=18, **attrs)
    got, expected = run_both(model, x)
    assert_same(got, expected)


@pytest.mark.parametrize("base, exponent", [
    (np.array([[1.5, 2.0, -3.0]], np.float32), np.array([2, 3, 2], np.int64)),
    (np.array([[2, 3, -4]], np.int32), np.array([3.0, 0.5, 2.0], np.float32)),
    (np.array([[2, 3, -4]], np.int64), np.array([3, 2, 1], np.int64)),
])
def test_pow_of_mixed_and_integer_types_matches_numpy(base, exponent):
    model = one_node_model("Pow", base, [("y", helper.np_dtype_to_tensor_dtype(base.dtype))], {"e": exponent},
                           opset=15)
    got, expected = run_both(model, base)
    assert_same(got, expected)
    np.testing.assert_array_equal(got[0], np.power(base.astype(np.float64), exponent).astype(base.dtype))


def test_one_hot_with_float_depth_and_values_matches_onnxruntime():
    x = np.array([[0, 2, -1], [5, 1, -4]], np.int64)  # -1 counts from the end, 5 and -4 are out of range
    model = one_node_model("OneHot", x, [("y", TensorProto.FLOAT)],
                           {"depth": np.array(4.0, np.float32), "values": np.array([-1.5, 2.0], np.float32)},
                           axis=1)
    model_proto = onnx.load_from_string(model)
    model_proto.graph.output[0].type.tensor_type.shape.dim.add()  # rank 3
    model = model_proto.SerializeToString()
    got, expected = run_both(model, x)
    assert_same(got, expected)
    reference = np.full((2, 4, 3), -1.5, np.float32)
    for (i, j), v in np.ndenumerate(x):
        if -4 <= v < 4:
            reference[i, v % 4, j] = 2.0
    np.testing.assert_array_equal(got[0], reference)


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [0, 1, -2])
def test_softmax_along_an_inner_axis_is_computed_on_the_last_axis(op_type, axis):
    """Opset 13's Softmax along a non-last axis: the values match onnxruntime, and the imported graph
    reduces along the last axis between two transposes (TVM's kernel along an inner axis re-reduces per
    output element: 0.6 s for a 1536x200 map instead of 2 ms)."""
    x = np.random.default_rng(8).standard_normal((3, 40, 24)).astype(np.float32)
    model = one_node_model(op_type, x, [("y", TensorProto.FLOAT)], {}, opset=13, axis=axis)
    assert_same(*run_both(model, x))
    text = import_onnx(model).function.script()
    name = "log_softmax" if op_type == "LogSoftmax" else "softmax"
    assert f"R.nn.{name}(" in text and "axis=2)" in text.split(f"R.nn.{name}(")[1].split("\n")[0], text
    assert text.count("R.permute_dims(") == 2, text


def test_softmax_before_opset_13_keeps_the_flattened_semantics():
    """Opset 11: softmax over all axes from ``axis`` on (the input coerced to 2-D), as onnxruntime."""
    x = np.random.default_rng(9).standard_normal((2, 5, 6)).astype(np.float32)
    model = one_node_model("Softmax", x, [("y", TensorProto.FLOAT)], {}, opset=11, axis=1)
    assert_same(*run_both(model, x))
