"""ONNX QOperator models (onnxruntime's quantizer) imported into the integer graph, against onnxruntime.

The models are small float CNNs / matrix products written with ``onnx.helper`` and quantized by
``onnxruntime.quantization``. Statically quantized models must equal onnxruntime's outputs bit for bit
(the requantization formula is the same: float32 multiplier ``x_scale * w_scale / y_scale``, round half
to even, saturate; QLinearAdd's ``a_scale / c_scale`` and ``b_scale / c_scale``). Dynamically quantized
ones (DynamicQuantizeLinear + MatMulInteger/ConvInteger, then float Mul) are compared at float tolerance:
the integer products are exact, the float scaling after them may round the last bit differently.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                      quantize_static)

import aotnn
from relay_frontend.onnx_import import OnnxImportError

RNG = np.random.default_rng(26)
SHAPE = (1, 3, 12, 12)


def _init(name: str, shape: tuple[int, ...], spread: float = 0.3) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.normal(0, spread, shape).astype(np.float32), name)


def _model(nodes, inits, out_shape, in_shape=SHAPE) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def cnn() -> onnx.ModelProto:
    """conv-relu-maxpool-conv-relu-flatten-gemm."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("Flatten", ["r2"], ["f"]),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    inits = [_init("w1", (8, 3, 3, 3)), _init("b1", (8,)), _init("w2", (16, 8, 3, 3), 0.15), _init("b2", (16,)),
             _init("w3", (10, 144), 0.1), _init("b3", (10,))]
    return _model(nodes, inits, (1, 10))


def residual() -> onnx.ModelProto:
    """conv-relu, conv, add of both, global average pool, flatten, gemm."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["r1", "c2"], ["s"]),
             helper.make_node("GlobalAveragePool", ["s"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], transB=1)]
    inits = [_init("w1", (8, 3, 3, 3)), _init("b1", (8,)), _init("w2", (8, 8, 3, 3), 0.15), _init("b2", (8,)),
             _init("w3", (5, 8)), _init("b3", (5,))]
    return _model(nodes, inits, (1, 5))


def matmul() -> onnx.ModelProto:
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    return _model(nodes, [_init("w", (24, 7))], (2, 5, 7), (2, 5, 24))


class _Reader(CalibrationDataReader):
    def __init__(self, shape):
        self.batches = iter([{"x": np.random.default_rng(i).normal(0, 1, shape).astype(np.float32)} for i in range(6)])

    def get_next(self):
        return next(self.batches, None)


def _host_has_vnni() -> bool:
    with open("/proc/cpuinfo", encoding="utf-8") as stream:
        flags = next((line.split() for line in stream if line.startswith("flags")), [])
    return "avx512_vnni" in flags or "avx_vnni" in flags


# onnxruntime's uint8 x int8 kernels without VNNI add product pairs in saturating int16 (vpmaddubsw): with
# full-range weights its results then depend on the host. 7-bit weights (reduce_range) never saturate.
FULL_RANGE = pytest.param(False, marks=pytest.mark.skipif(not _host_has_vnni(), reason="the host has no VNNI"))


def _quantized(tmp_path, model, shape, per_channel=False, activation=QuantType.QUInt8, dynamic=False,
               reduce_range=True) -> str:
    src, dst = str(tmp_path / "float.onnx"), str(tmp_path / "int8.onnx")
    if isinstance(model, onnx.ModelProto):
        onnx.save(model, src)
    else:
        src = model
    if dynamic:
        quantize_dynamic(src, dst, per_channel=per_channel, reduce_range=reduce_range, weight_type=QuantType.QInt8)
    else:
        quantize_static(src, dst, _Reader(shape), quant_format=QuantFormat.QOperator, per_channel=per_channel,
                        reduce_range=reduce_range, activation_type=activation, weight_type=QuantType.QInt8)
    return dst


def _both(path: str, shape, seeds=(100, 101)):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    net = aotnn.load_onnx(path)
    for seed in seeds:
        x = np.random.default_rng(seed).normal(0, 1.2, shape).astype(np.float32)
        yield session.run(None, {"x": x})[0], net(aotnn.Tensor(x)).asnumpy()


def _op_types(path: str) -> set[str]:
    return {node.op_type for node in onnx.load(path).graph.node}


@pytest.mark.parametrize("per_channel, activation, reduce_range", [
    (False, QuantType.QUInt8, True), (True, QuantType.QUInt8, True), (True, QuantType.QInt8, True),
    (True, QuantType.QUInt8, FULL_RANGE)])
def test_cnn_qoperator_matches_onnxruntime_bit_exact(tmp_path, per_channel, activation, reduce_range):
    path = _quantized(tmp_path, cnn(), SHAPE, per_channel, activation, reduce_range=reduce_range)
    assert {"QLinearConv", "QGemm", "QuantizeLinear", "DequantizeLinear"} <= _op_types(path)
    for expected, got in _both(path, SHAPE):
        # the output is DequantizeLinear of the int8 grid: equal floats mean equal integers
        assert np.ptp(expected) > 0
        np.testing.assert_array_equal(got, expected)


def test_pytorch_cnn_qoperator_matches_onnxruntime_bit_exact(tmp_path):
    """conv-relu-pool-conv-relu-flatten-linear exported by PyTorch, then quantized per channel."""
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(8, 16, 3, stride=2, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 3 * 3, 10)).eval()
    src = str(tmp_path / "torch.onnx")
    torch.onnx.export(model, (torch.zeros(SHAPE),), src, input_names=["x"], output_names=["y"], opset_version=13,
                      dynamo=False)
    path = _quantized(tmp_path, src, SHAPE, per_channel=True)
    assert {"QLinearConv", "QGemm", "MaxPool"} <= _op_types(path)
    for expected, got in _both(path, SHAPE):
        np.testing.assert_array_equal(got, expected)


def test_residual_qlinear_add_and_global_pool_match_onnxruntime(tmp_path):
    """Bit-exact on the hosts tried; onnxruntime's QLinearAdd kernels differ per ISA, so the check allows
    one output step (a 1-LSB difference at a rounding tie of the add, carried through the pool)."""
    path = _quantized(tmp_path, residual(), SHAPE)
    assert {"QLinearAdd", "QLinearGlobalAveragePool"} <= _op_types(path)
    step = float(numpy_helper.to_array(next(t for t in onnx.load(path).graph.initializer if t.name == "y_scale")))
    for expected, got in _both(path, SHAPE):
        assert np.abs(got - expected).max() <= step * 1.001


def test_qlinear_matmul_3d_matches_onnxruntime(tmp_path):
    path = _quantized(tmp_path, matmul(), (2, 5, 24), per_channel=False)
    assert "QLinearMatMul" in _op_types(path)
    for expected, got in _both(path, (2, 5, 24)):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("build, shape, op", [(matmul, (2, 5, 24), "MatMulInteger"), (cnn, SHAPE, "ConvInteger")])
def test_dynamic_quantization_matches_onnxruntime(tmp_path, build, shape, op):
    path = _quantized(tmp_path, build(), shape, dynamic=True)
    assert {"DynamicQuantizeLinear", op} <= _op_types(path)
    for expected, got in _both(path, shape):
        # the integer products are exact; the float scaling after them may round the last bit differently
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


# -- malformed models --------------------------------------------------------------------------------
def _qlinear_conv(x_scale_as_input=False, zero_dtype=np.uint8, drop_scale=False) -> onnx.ModelProto:
    consts = {"xs": np.array(0.05, np.float32), "xz": np.array(3, zero_dtype), "w": np.ones((2, 3, 1, 1), np.int8),
              "ws": np.array(0.1, np.float32), "wz": np.array(0, np.int8), "ys": np.array(0.2, np.float32),
              "yz": np.array(0, np.uint8)}
    inputs = [helper.make_tensor_value_info("x", TensorProto.UINT8, (1, 3, 4, 4))]
    if x_scale_as_input:
        del consts["xs"]
        inputs.append(helper.make_tensor_value_info("xs", TensorProto.FLOAT, ()))
    names = ["x", "" if drop_scale else "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    node = helper.make_node("QLinearConv", names, ["y"], name="qconv")
    output = helper.make_tensor_value_info("y", TensorProto.UINT8, (1, 2, 4, 4))
    graph = helper.make_graph([node], "g", inputs, [output], [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("kwargs, words", [
    ({"x_scale_as_input": True}, ("'qconv'", "'x_scale'", "constant")),
    ({"zero_dtype": np.int32}, ("'qconv'", "'x_zero_point'", "uint8", "int32")),
    ({"drop_scale": True}, ("'qconv'", "'x_scale'", "missing")),
])
def test_malformed_qlinear_conv_names_node_and_input(kwargs, words):
    model = _qlinear_conv(**kwargs)
    with pytest.raises(OnnxImportError) as err:
        aotnn.load_onnx(model.SerializeToString())
    for word in words:
        assert word in str(err.value)


def test_qlinear_conv_matches_numpy_formula():
    """The ONNX formula by hand: int32 accumulate, float32 multiplier, round half to even, saturate."""
    model = _qlinear_conv()
    x = np.random.default_rng(1).integers(0, 256, (1, 3, 4, 4)).astype(np.uint8)
    got = aotnn.load_onnx(model.SerializeToString())(aotnn.Tensor(x)).asnumpy()
    acc = (x.astype(np.int64) - 3).sum(axis=1, keepdims=True).repeat(2, axis=1)
    multiplier = np.float32(0.05) * np.float32(0.1) / np.float32(0.2)
    expected = np.clip(np.rint(acc.astype(np.float32) * multiplier), 0, 255).astype(np.uint8)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_add_node_within_one_step_of_onnxruntime(dtype):
    """onnxruntime's vector QLinearAdd rounds a few ties differently from the scalar formula (about 5 in a
    million elements on the hosts tried): at most 1 step apart, on < 0.1% of the elements."""
    info, onnx_type = np.iinfo(dtype), helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    rng = np.random.default_rng(5)
    zeros = [info.min + 128 + offset for offset in (0, -20, 5)]  # mid-range: the sums mostly fit
    params = {"sa": np.float32(0.021), "za": zeros[0], "sb": np.float32(0.013), "zb": zeros[1],
              "sc": np.float32(0.029), "zc": zeros[2]}
    inits = [numpy_helper.from_array(np.array(v, np.float32 if k.startswith("s") else dtype), k)
             for k, v in params.items()]
    node = helper.make_node("QLinearAdd", ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"], ["c"],
                            domain="com.microsoft", name="qadd")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", onnx_type, (4, 64, 64)),
                                            helper.make_tensor_value_info("b", onnx_type, (64, 1))],
                              [helper.make_tensor_value_info("c", onnx_type, (4, 64, 64))], inits)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    a = rng.integers(info.min, info.max + 1, (4, 64, 64)).astype(dtype)
    b = rng.integers(info.min, info.max + 1, (64, 1)).astype(dtype)
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"a": a, "b": b})[0].astype(np.int64)
    got = aotnn.load_onnx(model.SerializeToString())(aotnn.Tensor(a), aotnn.Tensor(b)).asnumpy()
    assert got.dtype == np.dtype(dtype)
    steps = np.abs(got.astype(np.int64) - expected)
    assert steps.max() <= 1 and (steps > 0).mean() < 1e-3
    assert np.ptp(expected) > 150
