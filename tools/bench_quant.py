"""int8 against float32: quantization-aware training and post-training quantization, beside onnxruntime's int8.

LeNet5 on scikit-learn's digits (8x8 upsampled to 32x32): trains a float LeNet5 and a LeNet5 built
from quantization-aware layers (Conv2dQuant, DenseQuant, ActQuant), converts the QAT network to int8
kernels (``convert_to_int8``), quantizes the float network after training from 320 training images
(``PostTrainingQuantization``), and prints the held-out accuracy of the float, QAT, QAT int8 and PTQ
int8 networks.

With ``--models`` (resnet18, mobilenetv2, lenet5: random weights, random BatchNorm statistics),
each float model is quantized by ``PostTrainingQuantization`` from ``--calibration`` random inputs
and by onnxruntime's ``quantize_static`` (QDQ, per-channel int8 weights, uint8 activations, min/max
calibration on the same inputs) from aotnn's ONNX export of the same float model; the table gives
the latencies at batch 1 (``--threads`` threads, engines taking turns in blocks with a pause
between), the ratios int8/float (ours) and ours/onnxruntime int8, and the top-1 agreement of each
int8 model with our float32 on ``--held-out`` other random inputs (the LeNet5 row: the digits).

    python tools/bench_quant.py [--epochs 8] [--batch 1] [--repeats 50] [--out lenet5_int8.aot]
    python tools/bench_quant.py --models resnet18,mobilenetv2,lenet5 [--threads 2] [--repeats 50]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import aotnn
from aotnn import Tensor, nn
from aotnn.common.initializer import HeUniform, initializer
from aotnn.compression.quant import PostTrainingQuantization
from aotnn.compression.quant.export_int8 import convert_to_int8, export_int8
from aotnn.models import LeNet5
from aotnn.train import Model

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from digits_data import ShuffledBatches, digits, split  # noqa: E402


class LeNet5Quant(nn.Cell):
    """LeNet5 from quantization-aware layers: each ReLU is an ActQuant with its own activation range."""

    def __init__(self, num_class: int = 10, num_channel: int = 1):
        super().__init__()
        config = create_quant_config(per_channel=(True, False), symmetric=(True, False))
        self.conv1 = nn.Conv2dQuant(num_channel, 6, 5, pad_mode="valid", has_bias=True, quant_config=config)
        self.act1 = nn.ActQuant(nn.ReLU(), ema=True, ema_decay=0.99, quant_config=config)
        self.conv2 = nn.Conv2dQuant(6, 16, 5, pad_mode="valid", has_bias=True, quant_config=config)
        self.act2 = nn.ActQuant(nn.ReLU(), ema=True, ema_decay=0.99, quant_config=config)
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.flatten = nn.Flatten()
        self.fc1 = nn.DenseQuant(16 * 5 * 5, 120, quant_config=config)
        self.act3 = nn.ActQuant(nn.ReLU(), ema=True, ema_decay=0.99, quant_config=config)
        self.fc2 = nn.DenseQuant(120, 84, quant_config=config)
        self.act4 = nn.ActQuant(nn.ReLU(), ema=True, ema_decay=0.99, quant_config=config)
        self.fc3 = nn.DenseQuant(84, num_class, quant_config=config)

    def construct(self, x):
        x = self.max_pool2d(self.act1(self.conv1(x)))
        x = self.max_pool2d(self.act2(self.conv2(x)))
        x = self.flatten(x)
        x = self.act3(self.fc1(x))
        x = self.act4(self.fc2(x))
        return self.fc3(x)


def create_quant_config(**kwargs):
    from aotnn.compression.quant import create_quant_config as create

    return create(**kwargs)


def train(net: nn.Cell, images: np.ndarray, labels: np.ndarray, epochs: int, seed: int = 1) -> nn.Cell:
    """Momentum SGD (lr 0.01, momentum 0.9, batch 32) from HeUniform weights, as tests/train does."""
    for param in net.trainable_params():
        if param.name.endswith("weight"):
            param.set_data(initializer(HeUniform(), param.shape))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    Model(net, loss, optimizer).train(epochs, ShuffledBatches(images, labels, 32, seed))
    net.set_train(False)
    return net


def accuracy(net: nn.Cell, images: np.ndarray, labels: np.ndarray) -> float:
    logits = net(Tensor(images)).asnumpy()
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def ptq_calibration(images: np.ndarray, count: int = 320, batch: int = 32) -> list[np.ndarray]:
    """The first ``count`` images in batches: the calibration set of post-training quantization."""
    return [images[i:i + batch] for i in range(0, min(count, len(images)), batch)]


def train_all(epochs: int) -> dict:
    """Float LeNet5, QAT LeNet5 and its int8 conversion, trained on the training split, and the float
    LeNet5 quantized after training from 320 training images ("ptq")."""
    images, labels = digits()
    train_idx, test_idx = split(len(labels))
    aotnn.set_seed(0)
    float_net = train(LeNet5(10, 1), images[train_idx], labels[train_idx], epochs)
    aotnn.set_seed(0)
    qat_net = train(LeNet5Quant(10, 1), images[train_idx], labels[train_idx], epochs)
    int8_net = convert_to_int8(qat_net, Tensor(images[train_idx[:64]]))
    ptq_net = PostTrainingQuantization().quantize(float_net, ptq_calibration(images[train_idx]))
    test_x, test_y = images[test_idx], labels[test_idx]
    nets = {"float": float_net, "qat": qat_net, "int8": int8_net, "ptq": ptq_net}
    return {**nets, "train": images[train_idx], "test": (test_x, test_y),
            "accuracy": {name: accuracy(net, test_x, test_y) for name, net in nets.items()}}


def latency(nets: dict, batch: np.ndarray, repeats: int) -> dict:
    """Median ms per call of each net, calls alternating between the nets."""
    x = Tensor(batch)
    for net in nets.values():
        net(x)
    times: dict = {name: [] for name in nets}
    for _ in range(repeats):
        for name, net in nets.items():
            start = time.perf_counter()
            net(x).asnumpy()
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * float(np.median(values)) for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=1, help="batch of the latency measurement")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--out", default="", help="write the int8 artifact here (and an aarch64 bundle beside it)")
    parser.add_argument("--models", default="", help="comma-separated: resnet18, mobilenetv2, lenet5 (PTQ vs "
                                                     "onnxruntime's int8); empty: the digits QAT/PTQ run")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--calibration", type=int, default=100, help="calibration inputs (--models)")
    parser.add_argument("--held-out", type=int, default=200, help="inputs of the top-1 agreement (--models)")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between timing blocks (--models)")
    parser.add_argument("--observer", default="minmax", choices=("minmax", "percentile", "mse"),
                        help="PTQ activation observer (--models)")
    parser.add_argument("--percentile", type=float, default=99.99, help="with --observer percentile")
    parser.add_argument("--cle", action="store_true", help="PTQ cross-layer equalization (--models)")
    parser.add_argument("--bias-correction", action="store_true", help="PTQ bias correction (--models)")
    parser.add_argument("--margin", type=float, default=0.1, help="'clear' inputs: float top-1 margin >= this "
                                                                   "times the logits' std (--models)")
    args = parser.parse_args(argv)
    if args.models:
        from quant_vs_onnxruntime import run_models

        return run_models([m for m in args.models.split(",") if m], args)
    result = train_all(args.epochs)
    acc = result["accuracy"]
    print(f"held-out accuracy: float {acc['float']:.4f}  qat {acc['qat']:.4f}  int8 {acc['int8']:.4f}  "
          f"ptq int8 {acc['ptq']:.4f}")
    test_x = result["test"][0]
    if args.out:
        path = export_int8(result["qat"], Tensor(test_x[:args.batch]), file_name=args.out)
        print(f"int8 artifact: {path}")
    ms = latency({"float": result["float"], "int8": result["int8"], "ptq": result["ptq"]}, test_x[:args.batch],
                 args.repeats)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"| batch | float ms | QAT int8 ms | PTQ int8 ms | QAT int8/float | PTQ int8/float |   "
          f"(load average {load:.2f})")
    print(f"| {args.batch} | {ms['float']:.3f} | {ms['int8']:.3f} | {ms['ptq']:.3f} | {ms['int8'] / ms['float']:.2f} "
          f"| {ms['ptq'] / ms['float']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
