"""ONNX QOperator models from onnxruntime's quantizer, imported by aotnn, against onnxruntime side by side.

A PyTorch ResNet-18 (random weights, batch norms with non-trivial statistics, folded by the export) is
exported to ONNX, quantized by ``onnxruntime.quantization.quantize_static(..., QuantFormat.QOperator)``
(per-channel int8 weights; uint8 or int8 activations; calibrated on random inputs), imported with
``aotnn.load_onnx`` and run beside onnxruntime on the same inputs: the largest difference in output
quantization steps, the share of outputs that differ, and the median latency of each (alternating
calls, same thread count).

Usage:
    python3 tools/onnx_qoperator.py [--activations uint8|int8] [--size 224] [--threads 2] [--repeat 30]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np


def resnet18():
    """torchvision's ResNet-18 layout written out (torchvision is not a dependency), in eval mode."""
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
            self.c2, self.b2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
            self.down = None if stride == 1 and cin == cout else nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    layers, cin = [], 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    model = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1),
                          *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)).eval()
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.data.uniform_(-0.1, 0.1)
            module.running_var.data.uniform_(0.5, 1.5)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.1, 0.1)
    return model


def quantized_model(workdir: str, size: int, activations: str) -> str:
    import torch
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    shape = (1, 3, size, size)
    src, dst = os.path.join(workdir, "float.onnx"), os.path.join(workdir, "int8.onnx")
    torch.onnx.export(resnet18(), (torch.zeros(shape),), src, input_names=["x"], output_names=["y"],
                      opset_version=13, dynamo=False)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": np.random.default_rng(i).standard_normal(shape, np.float32)} for i in range(8)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QOperator, per_channel=True,
                    activation_type=QuantType.QUInt8 if activations == "uint8" else QuantType.QInt8,
                    weight_type=QuantType.QInt8)
    return dst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--activations", choices=("uint8", "int8"), default="uint8")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    import aotnn

    with tempfile.TemporaryDirectory(prefix="aotnn-qoperator-") as workdir:
        path = quantized_model(workdir, args.size, args.activations)
        model = onnx.load(path)
        kinds: dict[str, int] = {}
        for node in model.graph.node:
            kinds[node.op_type] = kinds.get(node.op_type, 0) + 1
        print("ops:", ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
        step = float(numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "y_scale")))
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        started = time.perf_counter()
        net = aotnn.load_onnx(path)  # the Cell compiles on its first call
        shape = (1, 3, args.size, args.size)
        net(aotnn.Tensor(np.zeros(shape, np.float32)))
        print(f"aotnn import + compile: {time.perf_counter() - started:.1f} s")
        worst, differing, total = 0.0, 0, 0
        for seed in range(4):
            x = np.random.default_rng(100 + seed).standard_normal(shape, np.float32)
            theirs, ours = session.run(None, {"x": x})[0], net(aotnn.Tensor(x)).asnumpy()
            steps = np.abs(ours - theirs) / step
            worst, differing, total = max(worst, float(steps.max())), differing + int((steps > 0.5).sum()), \
                total + steps.size
        print(f"largest difference: {worst:.0f} output steps; outputs differing: {differing} of {total}")
        import aotnn_runtime

        artifact = aotnn.export(net, aotnn.Tensor(x), file_name=os.path.join(workdir, "artifact"))
        module = aotnn_runtime.load(artifact)
        module.set_num_threads(args.threads)
        ours_s, theirs_s = [], []
        for _ in range(args.repeat):
            started = time.perf_counter()
            module.run(x)
            ours_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            session.run(None, {"x": x})
            theirs_s.append(time.perf_counter() - started)
        ours_ms, theirs_ms = 1e3 * np.median(ours_s), 1e3 * np.median(theirs_s)
        print(f"median latency, {args.threads} threads: aotnn {ours_ms:.2f} ms, onnxruntime {theirs_ms:.2f} ms "
              f"({ours_ms / theirs_ms:.2f}x)")


if __name__ == "__main__":
    main()
