"""int8 top-1 agreement with float32 on TRAINED ImageNet-architecture networks (the zoo's ResNet-18 and
MobileNetV2, ImageNet stem and head, 10 classes), beside onnxruntime's int8.

Random-weight networks on random inputs (``bench_quant.py --models``) have no top-1 margins: float32 itself
with input noise of one quantization step agrees only 94% (ResNet-18) / 70% (MobileNetV2) with itself
(``ptq_layer_error.py``), so their agreement measures the random network, not quantization. Here each network
is trained with aotnn's own training (momentum SGD, batch 32) on scikit-learn's digits as 3x32x32 images
(``digits_data.py``, 8x8 upsampled; the training split), quantized by ``PostTrainingQuantization`` from 100
training images, converted to int8 kernels, and compared with float32 on the 450 held-out digits: float and
int8 accuracy, top-1 agreement, and the same for onnxruntime's ``quantize_static`` (QDQ, per-channel int8
weights, uint8 activations, min/max on the same 100 images) of aotnn's ONNX export of the trained network.

    python tools/quant_trained_agreement.py [--models resnet18,mobilenetv2] [--epochs 3] [--observer minmax]

Measured (znver5, 2 cores, about a minute of training per model): ResNet-18 float 97.6%, int8 97.6%, agreement
100.0% (onnxruntime's int8 99.8%); MobileNetV2 float 93.1%, int8 93.3%, agreement 99.6% (95.3%).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import aotnn
from aotnn import Tensor, models, nn
from aotnn.compression.quant import PostTrainingQuantization
from aotnn.compression.quant.export_int8 import export_int8
from aotnn.train import Model

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_data import ShuffledBatches, digits, split  # noqa: E402
from quant_vs_onnxruntime import _ort_int8  # noqa: E402

CALIBRATION = 100


def _images() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    images, labels = digits()
    images = np.repeat((images - 0.5) / 0.5, 3, axis=1)  # 3 channels, centred
    train_idx, test_idx = split(len(labels))
    return images[train_idx], labels[train_idx], images[test_idx], labels[test_idx]


def _train(name: str, x: np.ndarray, y: np.ndarray, epochs: int, lr: float) -> nn.Cell:
    aotnn.set_seed(0)
    net = models.resnet18(class_num=10) if name == "resnet18" else models.mobilenetv2(num_classes=10)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=0.9)
    Model(net, loss, optimizer).train(epochs, ShuffledBatches(x, y, 32, 1))
    net.set_train(False)
    return net


def _top1(run, x: np.ndarray) -> np.ndarray:
    return np.array([int(np.argmax(np.asarray(run(x[i:i + 1])).reshape(-1))) for i in range(len(x))])


def run_one(name: str, args, workdir: str) -> dict:
    import aotnn_runtime
    import onnxruntime as ort

    train_x, train_y, test_x, test_y = _images()
    start = time.perf_counter()
    net = _train(name, train_x, train_y, args.epochs, args.lr)
    train_s = time.perf_counter() - start
    calibration = train_x[:CALIBRATION]
    fake_quant = PostTrainingQuantization(args.observer).apply(net, [calibration[i:i + 25]
                                                                    for i in range(0, CALIBRATION, 25)])
    example = Tensor(test_x[:1])
    float_module = aotnn_runtime.load(aotnn.export(net, example, file_name=os.path.join(workdir, f"{name}_f")))
    int8_module = aotnn_runtime.load(export_int8(fake_quant, example, file_name=os.path.join(workdir, f"{name}_q")))
    float_onnx = aotnn.export(net, example, file_name=os.path.join(workdir, f"{name}.onnx"), file_format="ONNX")
    int8_onnx = os.path.join(workdir, f"{name}_int8.onnx")
    _ort_int8(float_onnx, int8_onnx, calibration)
    session = ort.InferenceSession(int8_onnx, providers=["CPUExecutionProvider"])
    input_name = session.get_inputs()[0].name
    top1 = {"float": _top1(float_module.run, test_x), "int8": _top1(int8_module.run, test_x),
            "ort int8": _top1(lambda v: session.run(None, {input_name: v})[0], test_x)}
    return {"model": name, "train_s": train_s,
            "accuracy": {key: float(np.mean(value == test_y)) for key, value in top1.items()},
            "agreement": {key: float(np.mean(top1[key] == top1["float"])) for key in ("int8", "ort int8")}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--observer", default="minmax", choices=("minmax", "percentile", "mse"))
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for name in [m for m in args.models.split(",") if m]:
            row = run_one(name, args, workdir)
            rows.append(row)
            print(f"{name}: done ({row['train_s']:.0f} s training)", flush=True)
    print(f"digits 3x32x32, {args.epochs} epochs, PTQ {args.observer} on {CALIBRATION} training images, "
          f"450 held-out digits")
    print("| model | float acc | int8 acc | ort int8 acc | top-1 agree int8 | top-1 agree ort int8 |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        acc, agree = row["accuracy"], row["agreement"]
        print(f"| {row['model']} | {acc['float']:.1%} | {acc['int8']:.1%} | {acc['ort int8']:.1%} | "
              f"{agree['int8']:.1%} | {agree['ort int8']:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
