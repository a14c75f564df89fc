"""ONNX export: the zoo and every layer ONNX can express, checked with onnx.checker and run by
onnxruntime; outputs must match aotnn's own. Ops ONNX cannot express raise an error naming them."""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import tvm
from tvm import relax

import aotnn
from aotnn import Tensor, nn
from aotnn.onnx import to_onnx_model
from relay_frontend.onnx_export import UnsupportedOnnxOpError, supported_ops, to_onnx

RNG = np.random.default_rng(7)


def normal(*shape, dtype="float32", scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def uniform(*shape, low=0.0, high=1.0, dtype="float32"):
    return RNG.uniform(low, high, shape).astype(dtype)


def ints(*shape, high=10, dtype="int32"):
    return RNG.integers(0, high, shape).astype(dtype)


def randomize(net, scale=0.5):
    """Non-trivial weights (biases, BatchNorm statistics...): default initializers give zeros and ones."""
    for param in net.get_parameters():
        value = RNG.standard_normal(param.shape) * scale
        if "variance" in param.name:
            value = np.abs(value) + 0.5
        param.set_data(Tensor(value.astype(param.dtype.name)))
    return net


def assert_close(got, expected, tol=1e-5):
    """Within ``tol`` relative to each element and to the output's scale (float32 sums of many
    products differ in the last bits between kernel libraries)."""
    got, expected = np.asarray(got, np.float64), np.asarray(expected, np.float64)
    scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale)


def run_onnx(model: onnx.ModelProto, arrays) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays)})


def flat_outputs(out) -> list[np.ndarray]:
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in flat_outputs(item)]
    return [out.asnumpy()]


def check_roundtrip(net, *arrays, rtol=1e-5, atol=1e-5):
    """Export ``net`` for ``arrays``, check the model, run it with onnxruntime, compare with aotnn."""
    tensors = [Tensor(a) for a in arrays]
    model = to_onnx_model(net, *tensors)
    onnx.checker.check_model(model, full_check=True)
    expected = flat_outputs(net(*tensors))
    got = run_onnx(model, arrays)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        assert_close(g, e, max(rtol, atol))
    return model


# -- the zoo ------------------------------------------------------------------------------------------
def test_lenet5_roundtrip_and_names(tmp_path):
    net = randomize(aotnn.models.lenet5(), 0.3)
    x = normal(2, 1, 32, 32)
    path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "lenet"), file_format="ONNX")
    assert path.endswith("lenet.onnx")
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["x"]
    names = {t.name for t in model.graph.initializer}
    assert {p.name for p in net.get_parameters()} == names  # MindSpore parameter names, nothing else
    assert_close(run_onnx(model, [x])[0], net(Tensor(x)).asnumpy())


def test_resnet18_roundtrip():
    net = randomize(aotnn.models.resnet18(), 0.1)
    model = check_roundtrip(net, normal(1, 3, 64, 64), rtol=1e-4, atol=1e-4)
    ops = {node.op_type for node in model.graph.node}
    assert {"Conv", "MaxPool", "MatMul"} <= ops


@pytest.mark.parametrize("name,x", [("mobilenetv2", normal(1, 3, 32, 32)),
                                    ("bert_encoder", ints(2, 8, high=1000))])
def test_more_zoo_models_roundtrip(name, x):
    net = getattr(aotnn.models, name)()
    model = check_roundtrip(net, x, rtol=1e-4, atol=1e-4)
    assert {t.name for t in model.graph.initializer} == {p.name for p in net.get_parameters()}


# -- layers ------------------------------------------------------------------------------------------
X4 = normal(2, 3, 6, 6)
X3 = normal(2, 3, 8)
LAYERS = {
    # activations
    "ReLU": (nn.ReLU, [X4]), "ReLU6": (nn.ReLU6, [X4 * 4]), "LeakyReLU": (lambda: nn.LeakyReLU(0.1), [X4]),
    "PReLU": (lambda: nn.PReLU(3, 0.3), [X4]), "ELU": (nn.ELU, [X4]), "CELU": (lambda: nn.CELU(0.5), [X4]),
    "GELU": (nn.GELU, [X4]), "GELU-erf": (lambda: nn.GELU(approximate=False), [X4]), "FastGelu": (nn.FastGelu, [X4]),
    "SiLU": (nn.SiLU, [X4]), "Mish": (nn.Mish, [X4]), "Sigmoid": (nn.Sigmoid, [X4]), "Tanh": (nn.Tanh, [X4]),
    "Softsign": (nn.Softsign, [X4]), "Softmax": (lambda: nn.Softmax(1), [X4]), "Softmin": (nn.Softmin, [X4]),
    "LogSoftmax": (nn.LogSoftmax, [X4]), "LogSigmoid": (nn.LogSigmoid, [X4]), "HSigmoid": (nn.HSigmoid, [X4 * 4]),
    "HSwish": (nn.HSwish, [X4 * 4]), "HShrink": (nn.HShrink, [X4]), "SoftShrink": (nn.SoftShrink, [X4]),
    "Hardtanh": (nn.Hardtanh, [X4 * 2]), "Threshold": (lambda: nn.Threshold(0.1, 20.0), [X4]),
    "Tanhshrink": (nn.Tanhshrink, [X4]), "Softmax2d": (nn.Softmax2d, [X4]),
    # convolutions
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3, stride=2, has_bias=True), [X3]),
    "Conv2d-same": (lambda: nn.Conv2d(3, 4, 3, stride=2, has_bias=True), [X4]),
    "Conv2d-pad-group-dilation": (lambda: nn.Conv2d(4, 6, 3, pad_mode="pad", padding=1, group=2, dilation=2),
                                  [normal(1, 4, 9, 9)]),
    "Conv3d": (lambda: nn.Conv3d(3, 2, 2, has_bias=True), [normal(1, 3, 4, 4, 4)]),
    "Conv1dTranspose": (lambda: nn.Conv1dTranspose(3, 4, 3, stride=2, pad_mode="pad", padding=1), [X3]),
    "Conv2dTranspose": (lambda: nn.Conv2dTranspose(3, 4, 3, stride=2, has_bias=True), [X4]),
    "Conv3dTranspose": (lambda: nn.Conv3dTranspose(3, 2, 2, stride=2), [normal(1, 3, 3, 3, 3)]),
    # pooling
    "MaxPool1d": (lambda: nn.MaxPool1d(3, 2), [X3]), "MaxPool2d-same": (lambda: nn.MaxPool2d(3, 2, "same"), [X4]),
    "AvgPool1d": (lambda: nn.AvgPool1d(2, 2), [X3]), "AvgPool2d-same": (lambda: nn.AvgPool2d(3, 2, "same"), [X4]),
    "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(4), [X3]),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((3, 2)), [X4]),
    "AdaptiveAvgPool2d-global": (lambda: nn.AdaptiveAvgPool2d(1), [X4]),
    "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d(2), [normal(1, 2, 4, 4, 4)]),
    "AdaptiveMaxPool1d": (lambda: nn.AdaptiveMaxPool1d(4), [X3]),
    "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(3), [X4]),
    # normalisation
    "BatchNorm1d": (lambda: nn.BatchNorm1d(3), [normal(4, 3)]), "BatchNorm2d": (lambda: nn.BatchNorm2d(3), [X4]),
    "BatchNorm3d": (lambda: nn.BatchNorm3d(3), [normal(1, 3, 2, 3, 3)]),
    "LayerNorm": (lambda: nn.LayerNorm((6, 6), begin_norm_axis=2, begin_params_axis=2), [X4]),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), [normal(2, 4, 3, 3)]),
    "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3), [X4]),
    "GlobalBatchNorm": (lambda: nn.GlobalBatchNorm(3), [X4]), "SyncBatchNorm": (lambda: nn.SyncBatchNorm(3), [X4]),
    # dense, shape and utility layers
    "Dense-relu": (lambda: nn.Dense(5, 4, activation="relu"), [normal(3, 5)]), "Flatten": (nn.Flatten, [X4]),
    "Dropout-eval": (lambda: nn.Dropout(p=0.5), [X4]),
    "Embedding": (lambda: nn.Embedding(10, 4), [ints(2, 3)]),
    "EmbeddingLookup": (lambda: nn.EmbeddingLookup(10, 4), [ints(2, 3)]),
    "MultiFieldEmbeddingLookup": (lambda: nn.MultiFieldEmbeddingLookup(10, 4, 3, operator="MEAN"),
                                  [ints(2, 5), normal(2, 5), ints(2, 5, high=3)]),
    "OneHot": (lambda: nn.OneHot(depth=5), [ints(2, 3, high=5)]),
    "Pad": (lambda: nn.Pad(((0, 0), (0, 0), (1, 2), (2, 1))), [X4]),
    "Pad-reflect": (lambda: nn.Pad(((0, 0), (0, 0), (1, 1), (2, 2)), mode="REFLECT"), [X4]),
    "ResizeBilinear": (nn.ResizeBilinear, [X4], {"size": (9, 7)}),
    "Unfold": (lambda: nn.Unfold([1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1]), [X4]),
    "CentralCrop": (lambda: nn.CentralCrop(0.5), [normal(1, 3, 8, 8)]),
    "Roll": (lambda: nn.Roll(2, 1), [normal(3, 5)]),
    "Tril": (nn.Tril, [normal(4, 4)]), "Triu": (nn.Triu, [normal(4, 4)]),
    "MatrixDiag": (nn.MatrixDiag, [normal(2, 3)]), "MatrixDiagPart": (nn.MatrixDiagPart, [normal(2, 3, 3)]),
    "MatrixSetDiag": (nn.MatrixSetDiag, [normal(2, 3, 3), normal(2, 3)]),
    "MatDet": (nn.MatDet, [normal(2, 3, 3)]),
    "MatInverse": (nn.MatInverse, [normal(3, 3) + 3 * np.eye(3, dtype="float32")]),
    "Norm": (lambda: nn.Norm(axis=1), [normal(3, 4)]), "ClipByNorm": (nn.ClipByNorm, [normal(3, 4), np.float32(1.0)]),
    "Moments": (lambda: nn.Moments(axis=1, keep_dims=True), [normal(3, 4)]),
    "ReduceLogSumExp": (lambda: nn.ReduceLogSumExp(1), [normal(3, 4)]),
    "ImageGradients": (nn.ImageGradients, [normal(1, 2, 4, 4)]),
    "L1Regularizer": (lambda: nn.L1Regularizer(0.5), [normal(3, 4)]),
    "MatMul": (lambda: nn.MatMul(transpose_x2=True), [normal(2, 3, 4), normal(2, 5, 4)]),
    "DenseBnAct": (lambda: nn.DenseBnAct(4, 3, has_bn=True, activation="relu"), [normal(5, 4)]),
    "Conv2dBnAct": (lambda: nn.Conv2dBnAct(3, 4, 3, has_bn=True, activation="relu"), [X4]),
    "TimeDistributed": (lambda: nn.TimeDistributed(nn.Dense(4, 3), time_axis=1), [normal(2, 5, 4)]),
    "SequentialCell": (lambda: nn.SequentialCell([nn.Conv2d(3, 2, 3), nn.ReLU(), nn.Flatten()]), [X4]),
    "DiGamma": (nn.DiGamma, [uniform(3, 4, low=0.5, high=4)]), "LGamma": (nn.LGamma, [uniform(3, 4, low=0.5, high=4)]),
    "LBeta": (nn.LBeta, [uniform(3, 4, low=0.5, high=4), uniform(3, 4, low=0.5, high=4)]),
    "IGamma": (nn.IGamma, [uniform(3, 4, low=0.5, high=4), uniform(3, 4, low=0.5, high=4)]),
    "PSNR": (nn.PSNR, [uniform(1, 3, 8, 8), uniform(1, 3, 8, 8)]),
    "SSIM": (nn.SSIM, [uniform(1, 3, 16, 16), uniform(1, 3, 16, 16)]),
    "MSSSIM": (lambda: nn.MSSSIM(power_factors=(0.5, 0.5), filter_size=3),
               [uniform(1, 3, 16, 16), uniform(1, 3, 16, 16)]),
    # losses
    "L1Loss": (nn.L1Loss, [normal(3, 4), normal(3, 4)]), "MSELoss": (nn.MSELoss, [normal(3, 4), normal(3, 4)]),
    "SmoothL1Loss": (nn.SmoothL1Loss, [normal(3, 4), normal(3, 4)]),
    "SoftmaxCrossEntropyWithLogits-sparse": (lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
                                             [normal(4, 5), ints(4, high=5)]),
    "BCEWithLogitsLoss": (nn.BCEWithLogitsLoss, [normal(3, 4), uniform(3, 4)]),
    "BCELoss": (nn.BCELoss, [uniform(3, 4, low=0.05, high=0.95), uniform(3, 4)]),
    "SoftMarginLoss": (nn.SoftMarginLoss, [normal(3, 4), np.sign(normal(3, 4))]),
    "CosineEmbeddingLoss": (nn.CosineEmbeddingLoss, [normal(3, 4), normal(3, 4), np.sign(normal(3))]),
    "FocalLoss": (nn.FocalLoss, [normal(3, 4), ints(3, 1, high=4)]),
    "DiceLoss": (nn.DiceLoss, [uniform(3, 4), uniform(3, 4)]),
    "RMSELoss": (nn.RMSELoss, [normal(3, 4), normal(3, 4)]),
    "MultiClassDiceLoss": (nn.MultiClassDiceLoss, [uniform(3, 4), np.eye(4, dtype="float32")[[0, 2, 3]]]),
    "SoftmaxCrossEntropyExpand": (lambda: nn.SoftmaxCrossEntropyExpand(sparse=True), [normal(4, 5), ints(4, high=5)]),
    # recurrent cells
    "RNNCell": (lambda: nn.RNNCell(4, 5), [normal(3, 4), normal(3, 5)]),
    "GRUCell": (lambda: nn.GRUCell(4, 5), [normal(3, 4), normal(3, 5)]),
}


# float32 chains of powers and divisions (MS-SSIM's scales) drift further between kernel libraries
TOLERANCE = {"MSSSIM": 2e-4}


class _WithKwargs(nn.Cell):
    def __init__(self, layer, kwargs):
        super().__init__()
        self.layer = layer
        self.kwargs = kwargs

    def construct(self, x):
        return self.layer(x, **self.kwargs)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_roundtrip(name):
    factory, arrays, *kwargs = LAYERS[name]
    net = factory()
    if kwargs:
        net = _WithKwargs(net, kwargs[0])
    randomize(net)
    net.set_train(False)
    tol = TOLERANCE.get(name, 2e-5)
    check_roundtrip(net, *[np.asarray(a) for a in arrays], rtol=tol, atol=tol)


def test_rrelu_samples_slopes_in_onnx():
    net = nn.RReLU(0.1, 0.3)
    model = to_onnx_model(net, Tensor(X4))
    y = run_onnx(model, [X4])[0]
    positive = X4 >= 0
    np.testing.assert_array_equal(y[positive], X4[positive])
    slopes = y[~positive] / X4[~positive]
    assert np.all((slopes >= 0.1 - 1e-6) & (slopes <= 0.3 + 1e-6)) and slopes.std() > 0


# RNN/GRU/LSTM stacks: aotnn's compiled result differs from TVM's own VM on the same Relax module
# (a build/runtime issue outside the exporter); ONNX agrees with TVM's VM.
@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM", "lstm_model"])
def test_recurrent_stack_matches_tvm_vm(name):
    if name == "lstm_model":  # the zoo's LSTM: one layer, (seq, batch, features), zero initial state
        net = randomize(aotnn.models.lstm_model(8, 6))
        x = normal(5, 2, 8)
        model = to_onnx_model(net, Tensor(x))
        assert_vm_agrees(model, net, [x])
        return
    layer = getattr(nn, name)(4, 5, num_layers=2, batch_first=True)
    randomize(layer)
    x, h = normal(3, 6, 4), normal(2, 3, 5)
    hx = (Tensor(h), Tensor(h * 0.5)) if name == "LSTM" else Tensor(h)
    model = to_onnx_model(layer, Tensor(x), hx)
    arrays = [x, h, h * 0.5] if name == "LSTM" else [x, h]
    assert_vm_agrees(model, lambda *xs: layer(xs[0], (xs[1], xs[2]) if name == "LSTM" else xs[1]), arrays)


def assert_vm_agrees(model, call, arrays):
    """onnxruntime on ``model`` against TVM's own VM on the captured Relax module of ``call``."""
    from aotnn.jit.compiled import capture_function

    got = run_onnx(model, arrays)
    mod, capture, _, _ = capture_function(call, [(f"i{i}", a.shape, "float32") for i, a in enumerate(arrays)])
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    expected = vm["main"](*[tvm.runtime.tensor(a) for a in arrays],
                          *[tvm.runtime.tensor(p.asnumpy()) for p in capture.param_keys])
    for i, g in enumerate(got):
        assert_close(g, expected[i].numpy())


def test_float16_layers():
    net = nn.SequentialCell([nn.Dense(6, 4), nn.Sigmoid()]).to_float(aotnn.float16)
    randomize(net)
    check_roundtrip(net, normal(3, 6).astype("float16"), rtol=2e-3, atol=2e-3)
    check_roundtrip(nn.Softmax(), normal(3, 6).astype("float16"), rtol=2e-3, atol=2e-3)


# -- modes, multiple outputs, names --------------------------------------------------------------------
def test_training_mode_exports_outputs_only():
    net = randomize(nn.BatchNorm2d(3))
    net.set_train(True)
    model = to_onnx_model(net, Tensor(X4))  # moving-statistic updates are not graph outputs
    assert [o.name for o in model.graph.output] == ["output"]
    got = run_onnx(model, [X4])[0]
    mean = X4.mean(axis=(0, 2, 3), keepdims=True)
    var = X4.var(axis=(0, 2, 3), keepdims=True)
    gamma, beta = net.gamma.asnumpy().reshape(1, 3, 1, 1), net.beta.asnumpy().reshape(1, 3, 1, 1)
    np.testing.assert_allclose(got, (X4 - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-4)


def test_dropout_training_uses_random_uniform():
    net = nn.Dropout(p=0.5)
    net.set_train(True)
    model = to_onnx_model(net, Tensor(X4))
    assert "RandomUniform" in {n.op_type for n in model.graph.node}
    y = run_onnx(model, [X4])[0]
    kept = y != 0
    np.testing.assert_allclose(y[kept], X4[kept] * 2, rtol=1e-6)
    assert 0 < kept.mean() < 1


def test_nested_inputs_and_outputs():
    cell = randomize(nn.LSTMCell(4, 5))
    x, h, c = normal(3, 4), normal(3, 5), normal(3, 5)
    model = to_onnx_model(cell, Tensor(x), (Tensor(h), Tensor(c)))
    assert [i.name for i in model.graph.input] == ["x", "hx_0", "hx_1"]
    expected = flat_outputs(cell(Tensor(x), (Tensor(h), Tensor(c))))
    for g, e in zip(run_onnx(model, [x, h, c]), expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_export_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="inputs"):
        aotnn.export(nn.ReLU(), file_name=str(tmp_path / "r"), file_format="ONNX")
    with pytest.raises(TypeError, match="inputs\\[0\\]"):
        aotnn.export(nn.ReLU(), "not a tensor", file_name=str(tmp_path / "r"), file_format="ONNX")


# -- what ONNX cannot express -------------------------------------------------------------------------
def test_unsupported_relax_op_is_named():
    x = relax.Var("x", relax.TensorType([4], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.cumprod(x, axis=0), "cumprod")
            out = bb.emit_output(relax.Tuple([y]))
        bb.emit_func_output(out)
    with pytest.raises(UnsupportedOnnxOpError, match=r"relax\.cumprod.*aotnn op 'cumprod'"):
        to_onnx(bb.get(), ["x"], [], {})


def test_custom_kernel_is_named():
    loss = nn.SampledSoftmaxLoss(num_sampled=2, num_classes=5)
    with pytest.raises(UnsupportedOnnxOpError, match="custom kernel"):
        to_onnx_model(loss, Tensor(normal(5, 3)), Tensor(normal(5)), Tensor(ints(2, 1, high=5)),
                      Tensor(normal(2, 3)))


def test_supported_ops_cover_the_zoo():
    ops = set(supported_ops())
    assert {"relax.nn.conv2d", "relax.matmul", "relax.add", "relax.permute_dims", "relax.reshape",
            "relax.nn.max_pool2d", "relax.mean", "relax.nn.softmax", "relax.split", "relax.take",
            "relax.astype", "relax.where", "relax.strided_slice"} <= ops


# -- single Relax ops, against TVM's own VM on the same module -----------------------------------------
R = relax.op
OPS_RNG = np.random.default_rng(3)
F = OPS_RNG.standard_normal((2, 3, 4)).astype(np.float32)
I32 = OPS_RNG.integers(-7, 8, (2, 3, 4)).astype(np.int32)
J32 = (OPS_RNG.integers(1, 4, (2, 3, 4)) * OPS_RNG.choice([-1, 1], (2, 3, 4))).astype(np.int32)  # signed divisors
IMG = OPS_RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
G4 = OPS_RNG.standard_normal((2, 4, 3, 3)).astype(np.float32)
W1 = OPS_RNG.standard_normal((5, 3, 2)).astype(np.float32)
WT = OPS_RNG.standard_normal((3, 2, 3)).astype(np.float32)
IDX = OPS_RNG.integers(0, 3, (2, 3, 4)).astype(np.int64)
V2, V2B = np.array([1.5, 0.5], np.float32), np.array([2.0, 0.5], np.float32)
C = relax.const
RELAX_CASES = {
    # element-wise
    "floor_divide_int": (lambda a, b: R.floor_divide(a, b), I32, J32),
    "floor_mod_int": (lambda a, b: R.floor_mod(a, b), I32, J32),
    "floor_mod_float": (lambda a, b: R.floor_mod(a, b), F, np.abs(F) + 0.5),
    "mod_int": (lambda a, b: R.mod(a, b), I32, J32),
    "trunc": (lambda a: R.trunc(R.multiply(a, C(3.0))), F),
    "round": (lambda a: R.round(R.multiply(a, C(4.0))), F),
    "isfinite": (lambda a: R.isfinite(R.log(a)), F),
    "rsqrt": (lambda a: R.rsqrt(R.add(R.abs(a), C(0.1))), F),
    "where_mixed": (lambda a, b: R.where(R.greater(a, C(0.0)), a, b), F, F * 3),
    "clip_int": (lambda a: R.clip(a, -2, 3), I32),
    "astype_bool": (lambda a: R.astype(a, "bool"), I32),
    "matmul_int": (lambda a, b: R.matmul(a, b), I32[0], I32[0].T.copy()),
    "einsum": (lambda a, b: R.einsum([a, b], "bij,bkj->bik"), F, F),
    "outer": (lambda a, b: R.outer(a, b), F[0, 0], F[1, 1]),
    # shapes and indexing
    "tile": (lambda a: R.tile(a, [2, 1, 3]), F),
    "flip": (lambda a: R.flip(a, 1), F),
    "pad": (lambda a: R.nn.pad(a, [0, 0, 1, 2, 0, 1], "constant", 1.5), F),
    "pad_reflect": (lambda a: R.nn.pad(a, [0, 0, 1, 1, 2, 2], "reflect"), F),
    "broadcast_to": (lambda a: R.broadcast_to(a, [3, 2, 3, 4]), F),
    "squeeze_expand": (lambda a: R.squeeze(R.expand_dims(a, [0, 3])), F),
    "concat": (lambda a, b: R.concat([a, b], axis=-1), F, F),
    "stack": (lambda a, b: R.stack([a, b], axis=1), F, F),
    "split_indices": (lambda a: R.split(a, [1, 3], axis=2), F),
    "strided_slice_negative": (lambda a: R.strided_slice(a, axes=[2], begin=[3], end=[-5], strides=[-1]), F),
    "strided_slice_two_axes": (lambda a: R.strided_slice(a, axes=[1, 2], begin=[-2, 0], end=[3, 10],
                                                         strides=[1, 3]), F),
    "take_wrap": (lambda a, i: R.take(a, i, axis=2, mode="wrap"), F, np.array([-1, 5, 2], np.int64)),
    "take_flat": (lambda a, i: R.take(a, i), F.reshape(-1), np.array([0, 23, 7], np.int64)),
    "repeat": (lambda a: R.repeat(a, 2, axis=1), F),
    "tril": (lambda a: R.tril(a, 1), F), "triu": (lambda a: R.triu(a, -1), F),
    "gather_elements": (lambda a, b: R.gather_elements(a, b, axis=1), F, IDX),
    "gather_nd": (lambda a, b: R.gather_nd(a, b), F, np.array([[0, 1], [1, 2]], np.int64)),
    "scatter_elements": (lambda a, b, c: R.scatter_elements(a, b, c, axis=2), F,
                         np.tile(np.arange(4), (2, 3, 1)), F * 2),
    "one_hot": (lambda a: R.one_hot(a, relax.prim_value(2.0), relax.prim_value(-1.0), 5, -1), IDX[0]),
    "topk": (lambda a: R.topk(a, 2, axis=-1, ret_type="both"), F),
    "sort_descending": (lambda a: R.sort(a, axis=1, descending=True), F),
    "argsort": (lambda a: R.argsort(a, axis=2, dtype="int32"), F),
    "cumsum": (lambda a: R.cumsum(a, axis=1), F),
    "cumsum_exclusive": (lambda a: R.cumsum(a, axis=2, exclusive=True), F),
    # creation
    "zeros": (lambda a: R.add(a, R.zeros([2, 3, 4], "float32")), F),
    "full_like": (lambda a: R.full_like(a, C(3.0)), F),
    "arange": (lambda a: R.add(a, R.arange(0, 8, 2, "float32")), F),
    "eye": (lambda a: R.add(a, R.astype(R.eye(3, 4), "float32")), F),
    # reductions
    "variance": (lambda a: R.variance(a, axis=[1, 2], keepdims=False), F),
    "std": (lambda a: R.std(a, axis=[0]), F),
    "prod": (lambda a: R.prod(a, axis=[1]), F), "min_all": (lambda a: R.min(a), F),
    "max_keepdims": (lambda a: R.max(a, axis=[2], keepdims=True), F),
    "argmin_all": (lambda a: R.argmin(a), F),
    # neural network ops
    "conv1d": (lambda a, w: R.nn.conv1d(a, w, strides=2, padding=[1, 0]), F, W1),
    "conv1d_transpose": (lambda a, w: R.nn.conv1d_transpose(a, w, strides=2, padding=[1, 1], output_padding=1), F, WT),
    "max_pool2d_ceil": (lambda a: R.nn.max_pool2d(a, 2, 2, ceil_mode=True), IMG),
    "avg_pool2d_pad": (lambda a: R.nn.avg_pool2d(a, 3, 2, padding=1, count_include_pad=True), IMG),
    "max_pool1d_dilated": (lambda a: R.nn.max_pool1d(a, 2, 1, dilation=2), F),
    "adaptive_avg_pool2d": (lambda a: R.nn.adaptive_avg_pool2d(a, 1), IMG),
    "resize_linear": (lambda a: R.image.resize2d(a, [7, 9]), IMG),
    "resize_nearest": (lambda a: R.image.resize2d(a, [10, 10], method="nearest_neighbor",
                                                  coordinate_transformation_mode="asymmetric",
                                                  rounding_method="floor"), IMG),
    "gelu": (lambda a: R.nn.gelu(a), F), "gelu_tanh": (lambda a: R.nn.gelu_tanh(a), F),
    "silu": (lambda a: R.nn.silu(a), F), "selu": (lambda a: R.nn.selu(a), F),
    "softplus": (lambda a: R.nn.softplus(a, 2.0, 1.0), F),
    "relu6": (lambda a: R.nn.relu6(R.multiply(a, C(5.0))), F),
    "prelu": (lambda a, s: R.nn.prelu(a, s, axis=1), F, np.array([0.1, 0.2, 0.3], np.float32)),
    "dropout": (lambda a: R.nn.dropout(a, 0.3), F),
    "batch_norm": (lambda a, g, b, m, v: R.nn.batch_norm(a, g, b, m, v, axis=1, training=False),
                   IMG, V2, V2B, V2, V2B),
    "layer_norm": (lambda a, g, b: R.nn.layer_norm(a, g, b, [2]), F, np.full(4, 2, np.float32), np.ones(4, np.float32)),
    "group_norm": (lambda a, g, b: R.nn.group_norm(a, g, b, 2, 1, [2, 3]), G4, np.arange(4, dtype=np.float32),
                   np.ones(4, np.float32)),
    "instance_norm": (lambda a, g, b: R.nn.instance_norm(a, g, b, 1, [2, 3]), IMG, V2, V2B),
    "rms_norm": (lambda a, w: R.nn.rms_norm(a, w, [2]), F, np.arange(4, dtype=np.float32)),
}

def _relax_module(fn, arrays):
    params = [relax.Var(f"in{i}", relax.TensorType(list(a.shape), str(a.dtype))) for i, a in enumerate(arrays)]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit(fn(*params), "op")
            fields = ([bb.emit(relax.TupleGetItem(out, i)) for i in range(len(out.ty.fields))]
                      if isinstance(out.ty, relax.TupleType) else [out])
            result = bb.emit_output(relax.Tuple(fields))
        bb.emit_func_output(result)
    return bb.get()


@pytest.mark.parametrize("name", sorted(RELAX_CASES))
def test_relax_op_matches_tvm(name):
    fn, *arrays = RELAX_CASES[name]
    mod = _relax_module(fn, arrays)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    expected = vm["main"](*[tvm.runtime.tensor(a) for a in arrays])
    model = to_onnx(mod, [f"in{i}" for i in range(len(arrays))], [], {})
    got = run_onnx(model, arrays)
    for g, e in zip(got, expected):
        e = e.numpy()
        assert g.shape == e.shape and g.dtype == e.dtype
        assert_close(g, e)
