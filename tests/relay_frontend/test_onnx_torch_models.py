"""Real models exported by PyTorch (torch.onnx.export, opset 17) compile with the path of
``aotnn compile model.onnx`` and match onnxruntime: MobileNetV2 (Clip), EfficientNet-B0 (SiLU,
squeeze-and-excitation), ResNet-18 and a transformer encoder block. Reduced input sizes and widths keep
them fast; the layouts are the full models'."""
from __future__ import annotations

import warnings

import numpy as np
import onnxruntime as ort
import pytest
import torch

import aotnn_runtime
from aotnn.cli.compile_cmd import compile_model

from .torch_models.efficientnet import EfficientNetB0
from .torch_models.mobilenetv2 import MobileNetV2
from .torch_models.resnet import ResNet18
from .torch_models.transformer import EncoderBlock


def randomize_batch_norms(model: torch.nn.Module, seed: int) -> None:
    """Non-trivial running statistics, so that folding batch norms is exercised."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.copy_(torch.randn(module.num_features, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(module.num_features, generator=generator) + 0.5)


def export(model: torch.nn.Module, x: np.ndarray, path) -> str:
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.from_numpy(x),), str(path), opset_version=17, dynamo=False,
                          input_names=["input"], output_names=["output"])
    return str(path)


def compile_and_compare(model: torch.nn.Module, x: np.ndarray, tmp_path, tol: float = 1e-4) -> None:
    torch.manual_seed(0)
    randomize_batch_norms(model, 1)
    onnx_path = export(model, x, tmp_path / "model.onnx")
    artifact = compile_model(onnx_path, (), "llvm", None, str(tmp_path / "model.aot"), False)
    got = aotnn_runtime.load(artifact).run(x)[0]
    session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"input": x})[0]
    assert got.shape == expected.shape
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale)


@pytest.mark.parametrize("name, make, shape", [
    ("mobilenetv2", lambda: MobileNetV2(width=0.35, num_classes=10), (1, 3, 64, 64)),
    ("efficientnet_b0", lambda: EfficientNetB0(width=0.25, depth=0.5, num_classes=10), (1, 3, 64, 64)),
    ("resnet18", lambda: ResNet18(width=8, num_classes=10), (1, 3, 64, 64)),
    ("transformer_encoder", lambda: EncoderBlock(d_model=32, nhead=4, dim_feedforward=64), (2, 8, 32)),
])
def test_pytorch_export_compiles_and_matches_onnxruntime(name, make, shape, tmp_path):
    torch.manual_seed(0)
    model = make()
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    compile_and_compare(model, x, tmp_path)
