"""Quantization-aware training to int8 deployment on scikit-learn's digits, measured in one run.

Trains a float LeNet5 and a LeNet5 built from quantization-aware layers (Conv2dQuant, DenseQuant,
ActQuant) on the 8x8 digits upsampled to 32x32, converts the QAT network to int8 kernels
(``convert_to_int8``), exports it, and prints the held-out accuracy of the float, QAT (fake-quant
float) and int8 networks, then float vs int8 latency (same process, alternating calls) and their ratio.

    python tools/bench_quant.py [--epochs 8] [--batch 1] [--repeats 50] [--out lenet5_int8.aot]
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


def train_all(epochs: int) -> dict:
    """Float LeNet5, QAT LeNet5 and its int8 conversion, trained on the training split."""
    images, labels = digits()
    train_idx, test_idx = split(len(labels))
    aotnn.set_seed(0)
    float_net = train(LeNet5(10, 1), images[train_idx], labels[train_idx], epochs)
    aotnn.set_seed(0)
    qat_net = train(LeNet5Quant(10, 1), images[train_idx], labels[train_idx], epochs)
    int8_net = convert_to_int8(qat_net, Tensor(images[train_idx[:64]]))
    test_x, test_y = images[test_idx], labels[test_idx]
    return {"float": float_net, "qat": qat_net, "int8": int8_net, "test": (test_x, test_y),
            "accuracy": {name: accuracy(net, test_x, test_y)
                         for name, net in (("float", float_net), ("qat", qat_net), ("int8", int8_net))}}


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
    args = parser.parse_args(argv)
    result = train_all(args.epochs)
    acc = result["accuracy"]
    print(f"held-out accuracy: float {acc['float']:.4f}  qat {acc['qat']:.4f}  int8 {acc['int8']:.4f}")
    test_x = result["test"][0]
    if args.out:
        path = export_int8(result["qat"], Tensor(test_x[:args.batch]), file_name=args.out)
        print(f"int8 artifact: {path}")
    ms = latency({"float": result["float"], "int8": result["int8"]}, test_x[:args.batch], args.repeats)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"| batch | float ms | int8 ms | int8/float |   (load average {load:.2f})")
    print(f"| {args.batch} | {ms['float']:.3f} | {ms['int8']:.3f} | {ms['int8'] / ms['float']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
