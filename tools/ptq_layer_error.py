"""Where post-training quantization loses accuracy: per-layer error of the fake-quantized network against float32.

For a zoo model prepared as ``bench_quant.py --models`` prepares it (random weights, BatchNorm
statistics re-estimated: ``trained_like.py``), calibrates ``PostTrainingQuantization`` on
``--calibration`` random inputs, then runs the float network and the fake-quantized one on
``--held-out`` other inputs, each as ONE compiled graph returning every activation
(``WatchedNetwork``), and prints for each activation call site, in call order, the relative error
``||fake - float|| / ||float||`` there (the error accumulated up to that point) and the growth over
the previous site (the error that site's layer and quantization add), beside the error float32
itself reaches there when the first activation's relative quantization error is put on its input as
Gaussian noise instead (how much the network amplifies any small error); then the logits' relative
error, the median top-1 margin of float32 against the median logit error, and the top-1 agreement of
the fake-quantized network with float32.

    python tools/ptq_layer_error.py --model mobilenetv2 [--size 224] [--observer minmax|percentile]
        [--per-tensor-weights] [--top 10]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aotnn.compression.quant import PostTrainingQuantization  # noqa: E402
from aotnn.compression.quant.watch import WatchedNetwork  # noqa: E402


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def site_errors(float_net, fake_quant_net, names: list[str], inputs: np.ndarray,
                chunk: int = 10) -> tuple[list, np.ndarray, np.ndarray]:
    """([(site, relative error)] in call order, float logits, fake-quantized logits); the inputs run
    ``chunk`` at a time (every activation of a chunk is held at once). ``fake_quant_net`` may be the
    float network itself (on other inputs: see :func:`perturbed_errors`)."""
    return _errors(float_net, fake_quant_net, names, inputs, inputs, chunk)


def perturbed_errors(float_net, names: list[str], inputs: np.ndarray, noise: float,
                     chunk: int = 10) -> tuple[list, np.ndarray, np.ndarray]:
    """As :func:`site_errors`, float32 against itself on inputs with Gaussian noise of ``noise`` times
    their RMS added: how much the network alone amplifies a small relative error."""
    rng = np.random.default_rng(1)
    rms = float(np.sqrt(np.mean(inputs.astype(np.float64) ** 2)))
    noisy = (inputs + noise * rms * rng.standard_normal(inputs.shape)).astype(np.float32)
    return _errors(float_net, float_net, names, inputs, noisy, chunk)


def _errors(float_net, other_net, names: list[str], inputs: np.ndarray, other_inputs: np.ndarray,
            chunk: int) -> tuple[list, np.ndarray, np.ndarray]:
    float_cells, fake_cells = dict(float_net.cells_and_names()), dict(other_net.cells_and_names())
    float_run = WatchedNetwork(float_net, [(n, float_cells[n]) for n in names], inputs_of=[])
    fake_run = float_run if other_net is float_net else \
        WatchedNetwork(other_net, [(n, fake_cells[n]) for n in names], inputs_of=[])
    sites: list[str] = []
    noise: list[float] = []
    signal: list[float] = []
    logits: tuple[list, list] = ([], [])
    for start in range(0, len(inputs), chunk):
        float_out, float_calls = float_run(inputs[start:start + chunk])
        fake_out, fake_calls = fake_run(other_inputs[start:start + chunk])
        if [c.name for c in float_calls] != [c.name for c in fake_calls]:
            raise RuntimeError("the float and fake-quantized networks call their activations in different orders")
        if not sites:
            seen: dict[str, int] = {}
            for call in float_calls:
                seen[call.name] = seen.get(call.name, -1) + 1
                sites.append(f"{call.name}#{seen[call.name]}")
            noise, signal = [0.0] * len(sites), [0.0] * len(sites)
        for i, (f, q) in enumerate(zip(float_calls, fake_calls)):
            noise[i] += float(np.sum((q.y.astype(np.float64) - f.y) ** 2))
            signal[i] += float(np.sum(f.y.astype(np.float64) ** 2))
        logits[0].append(float_out.asnumpy())
        logits[1].append(fake_out.asnumpy())
    errors = [float(np.sqrt(n / max(s, 1e-30))) for n, s in zip(noise, signal)]
    return list(zip(sites, errors)), np.concatenate(logits[0]), np.concatenate(logits[1])


def main(argv: list[str] | None = None) -> int:
    from quant_vs_onnxruntime import SHAPES, _model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="mobilenetv2", choices=sorted(SHAPES))
    parser.add_argument("--size", type=int, default=0, help="input height and width (default: the model's)")
    parser.add_argument("--calibration", type=int, default=100)
    parser.add_argument("--held-out", type=int, default=50)
    parser.add_argument("--observer", default="minmax", choices=("minmax", "percentile"))
    parser.add_argument("--percentile", type=float, default=99.99)
    parser.add_argument("--per-tensor-weights", action="store_true")
    parser.add_argument("--top", type=int, default=10, help="sites with the largest error growth to list")
    args = parser.parse_args(argv)
    shape = SHAPES[args.model]
    if args.size:
        shape = (shape[0], args.size, args.size)
        SHAPES[args.model] = shape
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((args.calibration, *shape)).astype(np.float32)
    held_out = rng.standard_normal((args.held_out, *shape)).astype(np.float32)
    net = _model(args.model)
    ptq = PostTrainingQuantization(args.observer, args.percentile, per_channel=(not args.per_tensor_weights, False))
    fake_quant_net = ptq.apply(net, [calibration[i:i + 25] for i in range(0, len(calibration), 25)])
    names = [name for name, cell in net.cells_and_names() if type(cell).__name__ in ("ReLU", "ReLU6")]
    sites, float_logits, fake_logits = site_errors(net, fake_quant_net, names, held_out)
    noise = sites[0][1]  # the first activation's quantization error, put on the input instead
    noisy_sites, _, noisy_logits = perturbed_errors(net, names, held_out, noise)
    previous = 0.0
    growth = []
    print(f"{args.model} {shape}, observer {args.observer}, weights per {'tensor' if args.per_tensor_weights else 'channel'}")
    print(f"| site | relative error | growth | float32 with {100 * noise:.2f}% input noise |")
    print("|---|---|---|---|")
    for (site, error), (_, noisy) in zip(sites, noisy_sites):
        growth.append((error - previous, site))
        print(f"| {site} | {error:.4f} | {error - previous:+.4f} | {noisy:.4f} |")
        previous = error
    print(f"largest growth: {', '.join(f'{site} {g:+.4f}' for g, site in sorted(growth, reverse=True)[:args.top])}")
    top2 = np.sort(float_logits, axis=1)[:, -2:]
    margin = float(np.median(top2[:, 1] - top2[:, 0]))
    logit_error = float(np.median(np.abs(fake_logits - float_logits).max(axis=1)))
    agreement = float(np.mean(np.argmax(fake_logits, 1) == np.argmax(float_logits, 1)))
    classes = len(set(np.argmax(float_logits, 1).tolist()))
    print(f"logits: relative error {_relative(fake_logits, float_logits):.4f}, median float top-1 margin {margin:.4g}, "
          f"median max |logit error| {logit_error:.4g}; fake-quant top-1 agreement {100 * agreement:.1f}% "
          f"({classes} float classes)")
    noisy_agreement = float(np.mean(np.argmax(noisy_logits, 1) == np.argmax(float_logits, 1)))
    print(f"float32 with {100 * noise:.2f}% input noise: logits relative error "
          f"{_relative(noisy_logits, float_logits):.4f}, top-1 agreement {100 * noisy_agreement:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
