"""Post-training quantization of an ONNX model (PyTorch's export): as nn layers it matches onnxruntime,
quantized it stays close to float32 and agrees with onnxruntime's own int8 of the same calibration data."""
from __future__ import annotations

import io

import numpy as np
import pytest

from aotnn import Tensor
from aotnn.compression.quant import OnnxLayers, PostTrainingQuantization
from aotnn.compression.quant.export_int8 import Int8Layer, convert_to_int8

torch = pytest.importorskip("torch")
ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(11)
CALIBRATION = RNG.standard_normal((32, 3, 16, 16)).astype(np.float32)
HELD_OUT = RNG.standard_normal((16, 3, 16, 16)).astype(np.float32)


class TorchNet(torch.nn.Module):
    """Conv+BN+ReLU stem, max-pool with padding, a residual block, a ReLU6 convolution, global pool, Linear."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8),
                                        torch.nn.ReLU())
        self.pool = torch.nn.MaxPool2d(3, 2, padding=1)
        self.conv1 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 1)
        self.conv3 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2)
        self.fc = torch.nn.Linear(16, 6)

    def forward(self, x):
        x = self.pool(self.stem(x))
        x = torch.relu(x + self.conv2(torch.relu(self.conv1(x))))
        x = torch.nn.functional.relu6(self.conv3(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


@pytest.fixture(scope="module")
def onnx_model() -> bytes:
    torch.manual_seed(0)
    net = TorchNet().eval()
    with torch.no_grad():
        bn = net.stem[1]
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
        buffer = io.BytesIO()
        torch.onnx.export(net, torch.from_numpy(HELD_OUT[:1]), buffer, input_names=["x"], opset_version=17,
                          dynamo=False, do_constant_folding=False,
                          dynamic_axes={"x": {0: "batch"}})
    return buffer.getvalue()


def test_onnx_layers_match_onnxruntime(onnx_model):
    net = OnnxLayers(onnx_model)
    kinds = sorted({type(cell).__name__ for _, cell in net.cells_and_names() if cell is not net})
    assert "Conv2d" in kinds and "Dense" in kinds and "ReLU6" in kinds
    session = ort.InferenceSession(onnx_model, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": HELD_OUT})[0]
    np.testing.assert_allclose(net(Tensor(HELD_OUT)).asnumpy(), expected, rtol=1e-4, atol=1e-5)


def test_ptq_of_onnx_model_close_to_float_and_onnxruntime_int8(onnx_model, qdq_model):
    net = OnnxLayers(onnx_model)
    int8 = PostTrainingQuantization().quantize(net, [CALIBRATION[i:i + 8] for i in range(0, 32, 8)])
    layers = [cell for _, cell in int8.cells_and_names() if isinstance(cell, Int8Layer)]
    assert len(layers) == 5
    reference = net(Tensor(HELD_OUT)).asnumpy()
    out = int8(Tensor(HELD_OUT)).asnumpy()
    assert np.linalg.norm(out - reference) <= 0.05 * np.linalg.norm(reference)
    session = ort.InferenceSession(qdq_model, providers=["CPUExecutionProvider"])
    theirs = np.concatenate([session.run(None, {"x": HELD_OUT[i:i + 1]})[0] for i in range(len(HELD_OUT))])
    # same calibration, same scheme: our int8 is no further from float32 than twice onnxruntime's
    assert np.linalg.norm(out - reference) <= 2 * np.linalg.norm(theirs - reference) + 1e-6


@pytest.fixture(scope="module")
def qdq_model(onnx_model, tmp_path_factory) -> str:
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter({"x": CALIBRATION[i:i + 1]} for i in range(len(CALIBRATION)))

        def get_next(self):
            return next(self.items, None)

    folder = tmp_path_factory.mktemp("qdq")
    (folder / "float.onnx").write_bytes(onnx_model)
    quantize_static(str(folder / "float.onnx"), str(folder / "int8.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    return str(folder / "int8.onnx")


def test_qdq_model_imports_into_the_int8_graph(qdq_model):
    """onnxruntime's QDQ model, as nn layers, converts to our int8 layers and computes what onnxruntime does."""
    fake_quant_net = OnnxLayers(qdq_model)
    kinds = [type(cell).__name__ for _, cell in fake_quant_net.cells_and_names()]
    assert kinds.count("Conv2dQuant") == 4 and kinds.count("DenseQuant") == 1 and kinds.count("ActQuant") >= 4
    int8 = convert_to_int8(fake_quant_net, Tensor(HELD_OUT[:1]))
    layers = [cell for _, cell in int8.cells_and_names() if isinstance(cell, Int8Layer)]
    assert len(layers) == 5 and all(layer.in_qparams is not None for layer in layers)
    assert [layer.fused for layer in layers] == [True] * 5
    session = ort.InferenceSession(qdq_model, providers=["CPUExecutionProvider"])
    theirs = np.concatenate([session.run(None, {"x": HELD_OUT[i:i + 1]})[0] for i in range(len(HELD_OUT))])
    out = int8(Tensor(HELD_OUT)).asnumpy()
    step = float(layers[-1].y_scale.asnumpy()[0])  # the output's grid: both engines end on it
    assert np.abs(out - theirs).max() <= 3 * step, (np.abs(out - theirs).max(), step)
    assert np.mean(np.abs(out - theirs) <= step * 1.01) >= 0.9
