"""int8 ResNet-18 and MobileNetV2 from the zoo (``aotnn.models``), calibrated here, timed against float32.

A stop-gap until the compression package's post-training quantization lands: the float network's
BatchNorms are folded into the convolutions, weights quantized per output channel (symmetric int8),
and every activation gets an asymmetric uint8 grid from its min/max over a calibration batch (forward
hooks). The int8 network mirrors the float one with integer tensors between layers:
``int8_conv2d`` + ``int8_requantize`` (ReLU/ReLU6 as the clamp), residual additions as one
element-wise requantization of both operands, max pooling on uint8; the head dequantizes before
global average pooling and the float classifier.

Both networks are exported and timed with the runtime (median of alternating calls), then profiled
per kernel; the output agreement (argmax and cosine similarity of the logits) on random inputs is printed.

    python tools/int8_zoo.py [--models resnet18,mobilenetv2] [--size 224] [--repeats 30] [--profile]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

import aotnn
import aotnn_runtime
from aotnn import Tensor, nn, ops
from aotnn.common.parameter import Parameter
from aotnn.models import mobilenetv2, resnet18

Grid = tuple  # (scale, zero point) of a uint8 grid


def grid_of(low: float, high: float) -> Grid:
    """The uint8 grid over [min(low, 0), max(high, 0)]."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    scale = (high - low) / 255.0 if high > low else 1.0
    return np.float32(scale), int(np.clip(round(-low / scale), 0, 255))


def _const(values, dtype, name: str) -> Parameter:
    return Parameter(Tensor(np.ascontiguousarray(values, dtype=dtype)), name=name, requires_grad=False)


def _folded(conv: nn.Conv2d, bn: nn.BatchNorm2d | None) -> tuple[np.ndarray, np.ndarray]:
    w = conv.weight.asnumpy().astype(np.float64)
    b = conv.bias.asnumpy().astype(np.float64) if getattr(conv, "has_bias", False) else np.zeros(w.shape[0])
    if bn is None:
        return w, b
    factor = bn.gamma.asnumpy() / np.sqrt(bn.moving_variance.asnumpy() + float(bn.eps))
    return w * factor[:, None, None, None], (b - bn.moving_mean.asnumpy()) * factor + bn.beta.asnumpy()


class QConv(nn.Cell):
    """uint8 in, uint8 out: a convolution (BatchNorm folded) with its requantization and clamp."""

    def __init__(self, conv: nn.Conv2d, bn, x_grid: Grid, y_grid: Grid, act: str | None):
        super().__init__()
        w, b = _folded(conv, bn)
        w_scale = np.maximum(np.abs(w).reshape(w.shape[0], -1).max(axis=1), 1e-12) / 127.0
        wq = np.clip(np.round(w / w_scale[:, None, None, None]), -127, 127)
        acc_scale = float(x_grid[0]) * w_scale
        zx, zy = x_grid[1], y_grid[1]
        self.weight = _const(wq, np.int8, "weight")
        self.bias = _const(np.round(b / acc_scale) - zx * wq.reshape(w.shape[0], -1).sum(axis=1), np.int32, "bias")
        self.multiplier = _const(acc_scale / float(y_grid[0]), np.float32, "multiplier")
        self.zx, self.zy = zx, zy
        self.low = zy if act in ("relu", "relu6") else 0
        self.high = min(255, zy + int(round(6.0 / float(y_grid[0])))) if act == "relu6" else 255
        self.stride, self.padding, self.group = conv.stride, conv.padding, int(conv.group)

    def construct(self, x):
        acc = ops.int8_conv2d(x, self.weight, self.zx, None, self.stride, "pad", self.padding, 1, self.group, True)
        return ops.int8_requantize(acc, self.bias, self.multiplier, self.zy, self.low, self.high, "uint8")


class QAdd(nn.Cell):
    """``a + b`` of two uint8 tensors on their grids, onto ``y_grid`` (with ReLU: clamped at its zero)."""

    def __init__(self, a_grid: Grid, b_grid: Grid, y_grid: Grid, relu: bool):
        super().__init__()
        self.a_ratio = _const([a_grid[0] / y_grid[0]], np.float32, "a_ratio")
        self.b_ratio = _const([b_grid[0] / y_grid[0]], np.float32, "b_ratio")
        self.one = _const([1.0], np.float32, "one")
        self.za, self.zb, self.zy = a_grid[1], b_grid[1], y_grid[1]
        self.low = self.zy if relu else 0

    def construct(self, a, b):
        total = ops.int8_dequantize(a, self.a_ratio, self.za) + ops.int8_dequantize(b, self.b_ratio, self.zb)
        return ops.int8_quantize(total, self.one, self.zy, self.low, 255, "uint8")


class QInput(nn.Cell):
    def __init__(self, grid: Grid):
        super().__init__()
        self.scale = _const([grid[0]], np.float32, "scale")
        self.zp = grid[1]

    def construct(self, x):
        return ops.int8_quantize(x, self.scale, self.zp, 0, 255, "uint8")


class QHead(nn.Cell):
    """Dequantize, global average pooling, the float classifier."""

    def __init__(self, grid: Grid, dense: nn.Dense):
        super().__init__()
        self.scale = _const([grid[0]], np.float32, "scale")
        self.zp = grid[1]
        self.dense = dense

    def construct(self, x):
        return self.dense(ops.mean(ops.int8_dequantize(x, self.scale, self.zp), (2, 3), False))


# ---------------------------------------------------------------- calibration

def record_ranges(net: nn.Cell, cells: dict, x: np.ndarray) -> dict:
    """{name: (min, max)} of the outputs of ``cells`` (name -> Cell) over one call of ``net`` on ``x``."""
    ranges: dict = {}
    handles = []
    for name, cell in cells.items():
        def hook(cell_, args, output, name=name):
            values = output.asnumpy()
            low, high = ranges.get(name, (np.inf, -np.inf))
            ranges[name] = (min(low, float(values.min())), max(high, float(values.max())))
        handles.append(cell.register_forward_hook(hook))
    net.set_train(False)
    try:
        net(Tensor(x))
    finally:
        for handle in handles:
            handle.remove()
    return ranges


def randomize_batchnorms(net: nn.Cell, seed: int = 0) -> nn.Cell:
    """Non-trivial inference statistics for every BatchNorm2d (fresh ones fold to the identity)."""
    rng = np.random.default_rng(seed)
    for _, cell in net.cells_and_names():
        if isinstance(cell, nn.BatchNorm2d):
            c = cell.gamma.shape[0]
            cell.gamma.set_data(Tensor(rng.uniform(0.5, 1.5, c).astype(np.float32)))
            cell.beta.set_data(Tensor(rng.normal(0, 0.2, c).astype(np.float32)))
            cell.moving_mean.set_data(Tensor(rng.normal(0, 0.2, c).astype(np.float32)))
            cell.moving_variance.set_data(Tensor(rng.uniform(0.5, 2.0, c).astype(np.float32)))
    return net


class Int8ResNet(nn.Cell):
    """The zoo's ResNet-18 on uint8 tensors (see the module docstring)."""

    def __init__(self, net, calib: np.ndarray):
        super().__init__()
        blocks = [b for stage in (net.layer1, net.layer2, net.layer3, net.layer4) for b in stage]
        cells = {"stem": net.bn1}
        for i, b in enumerate(blocks):
            cells.update({f"{i}.bn1": b.bn1d, f"{i}.bn2": b.bn2d, f"{i}.out": b})
            if b.down_sample:
                cells[f"{i}.down"] = b.down_sample_layer
        r = record_ranges(net, cells, calib)
        x_grid = grid_of(calib.min(), calib.max())
        self.quant = QInput(x_grid)
        stem_grid = grid_of(0, r["stem"][1])
        self.stem = QConv(net.conv1, net.bn1, x_grid, stem_grid, "relu")
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        grid = stem_grid
        convs1, convs2, downs, adds = [], [], [], []
        self.down_flags = []
        for i, b in enumerate(blocks):
            g1 = grid_of(0, r[f"{i}.bn1"][1])
            g2 = grid_of(*r[f"{i}.bn2"])
            convs1.append(QConv(b.conv1, b.bn1d, grid, g1, "relu"))
            convs2.append(QConv(b.conv2, b.bn2d, g1, g2, None))
            identity = grid
            if b.down_sample:
                identity = grid_of(*r[f"{i}.down"])
                conv, bn = b.down_sample_layer[0], b.down_sample_layer[1]
                downs.append(QConv(conv, bn, grid, identity, None))
            self.down_flags.append(b.down_sample)
            out = grid_of(0, r[f"{i}.out"][1])
            adds.append(QAdd(g2, identity, out, relu=True))
            grid = out
        self.convs1, self.convs2 = nn.CellList(convs1), nn.CellList(convs2)
        self.downs, self.adds = nn.CellList(downs), nn.CellList(adds)
        self.head = QHead(grid, net.end_point)

    def construct(self, x):
        x = self.maxpool(self.stem(self.quant(x)))
        d = 0
        for i in range(len(self.adds)):
            out = self.convs2[i](self.convs1[i](x))
            if self.down_flags[i]:
                identity = self.downs[d](x)
                d += 1
            else:
                identity = x
            x = self.adds[i](out, identity)
        return self.head(x)


class Int8MobileNetV2(nn.Cell):
    """The zoo's MobileNetV2 on uint8 tensors (see the module docstring)."""

    def __init__(self, net, calib: np.ndarray):
        super().__init__()
        features = list(net.backbone.features)
        cells = {}
        for i, f in enumerate(features):
            cells[f"{i}.out"] = f
            if hasattr(f, "use_res_connect"):
                cells[f"{i}.project"] = f.conv[len(f.conv) - 1]
                for j, inner in enumerate(list(f.conv)[:-2]):
                    cells[f"{i}.{j}"] = inner
        r = record_ranges(net, cells, calib)
        grid = grid_of(calib.min(), calib.max())
        self.quant = QInput(grid)
        layers, self.kinds = [], []
        for i, f in enumerate(features):
            if not hasattr(f, "use_res_connect"):  # ConvBNReLU
                out = grid_of(0, min(6.0, r[f"{i}.out"][1]))
                layers.append(QConv(f.features[0], f.features[1], grid, out, "relu6"))
                self.kinds.append("conv")
                grid = out
                continue
            block_in, inner = grid, []
            for j, cbr in enumerate(list(f.conv)[:-2]):
                out = grid_of(0, min(6.0, r[f"{i}.{j}"][1]))
                inner.append(QConv(cbr.features[0], cbr.features[1], grid, out, "relu6"))
                grid = out
            project = grid_of(*r[f"{i}.project"])
            inner.append(QConv(f.conv[len(f.conv) - 2], f.conv[len(f.conv) - 1], grid, project, None))
            grid = project
            if f.use_res_connect:
                out = grid_of(*r[f"{i}.out"])
                inner.append(QAdd(block_in, project, out, relu=False))
                grid = out
                self.kinds.append("residual")
            else:
                self.kinds.append("block")
            layers.append(nn.CellList(inner))
        self.layers = nn.CellList(layers)
        self.head = QHead(grid, net.head.dense)

    def construct(self, x):
        x = self.quant(x)
        for i in range(len(self.kinds)):
            layer = self.layers[i]
            if self.kinds[i] == "conv":
                x = layer(x)
            elif self.kinds[i] == "block":
                for cell in layer:
                    x = cell(x)
            else:
                y = x
                for j in range(len(layer) - 1):
                    y = layer[j](y)
                x = layer[len(layer) - 1](x, y)
        return self.head(x)


MODELS = {"resnet18": (resnet18, Int8ResNet), "mobilenetv2": (mobilenetv2, Int8MobileNetV2)}


def build(name: str, size: int, calib_count: int = 4, seed: int = 0) -> tuple[nn.Cell, nn.Cell]:
    """(float network, its int8 form calibrated on ``calib_count`` random inputs)."""
    make, int8_cls = MODELS[name]
    aotnn.set_seed(seed)
    net = randomize_batchnorms(make(), seed)
    net.set_train(False)
    calib = np.random.default_rng(seed + 1).standard_normal((calib_count, 3, size, size)).astype(np.float32)
    q = int8_cls(net, calib)
    q.set_train(False)
    return net, q


def timed(modules: dict, x: np.ndarray, repeats: int) -> dict:
    """Median ms per call of each runtime module, calls alternating between them."""
    for module in modules.values():
        module.run(x)
    times: dict = {name: [] for name in modules}
    for _ in range(repeats):
        for name, module in modules.items():
            start = time.perf_counter()
            module.run(x)
            times[name].append(time.perf_counter() - start)
    return {name: 1e3 * float(np.median(v)) for name, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--checks", type=int, default=8, help="random inputs for the agreement check")
    parser.add_argument("--profile", action="store_true", help="print the slowest int8 kernels")
    args = parser.parse_args(argv)
    x = np.random.default_rng(5).standard_normal((1, 3, args.size, args.size)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            net, q = build(name, args.size)
            modules = {}
            for kind, cell in (("float", net), ("int8", q)):
                path = aotnn.export(cell, Tensor(x), file_name=os.path.join(tmp, f"{name}_{kind}"))
                modules[kind] = aotnn_runtime.load(path)
            checks = np.random.default_rng(9).standard_normal((args.checks, 1, 3, args.size, args.size))
            agree, cosines = 0, []
            for sample in checks.astype(np.float32):
                a, b = (np.asarray(modules[k].run(sample)[0]).reshape(-1) for k in ("float", "int8"))
                agree += int(np.argmax(a) == np.argmax(b))
                cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
            ms = timed(modules, x, args.repeats)
            load = os.getloadavg()[0]
            print(f"{name} {args.size}x{args.size}: float {ms['float']:.3f} ms  int8 {ms['int8']:.3f} ms  "
                  f"int8/float {ms['int8'] / ms['float']:.2f}  (load average {load:.2f}); argmax agreement "
                  f"{agree}/{args.checks}, logit cosine min {min(cosines):.4f}", flush=True)
            if args.profile:
                from aotnn_runtime.profile import format_table
                totals = {}
                for kind in ("float", "int8"):
                    records = modules[kind].profile(x, repeat=10)
                    totals[kind] = sum(float(np.median(r.durations_ns)) for r in records) / 1e6
                    print(f"-- {name} {kind}: kernels {totals[kind]:.3f} ms (sum of per-kernel medians)")
                    print("\n".join(line[:60] + line[-70:] for line in format_table(records).splitlines()[:16]))
                print(f"{name}: kernel time int8/float {totals['int8'] / totals['float']:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
