"""Top-1 agreement with float32 of post-training quantization with each accuracy method on and off.

For each zoo model prepared as ``bench_quant.py --models`` prepares it (random weights, BatchNorm
statistics re-estimated: ``trained_like.py``), calibrates ``PostTrainingQuantization`` on
``--calibration`` random inputs with each configuration of ``--configs`` (``+``-joined among
``minmax``, ``percentile``, ``mse`` (the observer), ``cle`` (cross-layer equalization) and ``bc``
(bias correction)) and runs the fake-quantized network (the int8 network's grids, in float) and
float32 on ``--held-out`` other random inputs. Printed per configuration: the issue's measure (argmax
agreement over all held-out inputs), a better-posed one (the agreement over the inputs whose float32
top-1 margin is at least ``--margin`` times the standard deviation of their logits: the others are
near-ties that any rounding flips), and the mean cosine similarity of the logits.

    python tools/ptq_methods.py [--models resnet18,mobilenetv2] [--size 224]
        [--configs minmax,mse,minmax+cle,minmax+bc,mse+cle+bc]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from aotnn import Tensor  # noqa: E402
from aotnn.compression.quant import PostTrainingQuantization  # noqa: E402

_OBSERVERS = ("minmax", "percentile", "mse")


def ptq_for(config: str, percentile: float = 99.99) -> PostTrainingQuantization:
    """The PostTrainingQuantization of a ``+``-joined configuration, e.g. 'mse+cle+bc'."""
    parts = config.split("+")
    unknown = [p for p in parts if p not in _OBSERVERS + ("cle", "bc")]
    observers = [p for p in parts if p in _OBSERVERS]
    if unknown or len(observers) > 1:
        raise SystemExit(f"--configs: expected '+'-joined {_OBSERVERS + ('cle', 'bc')} with one observer at most, "
                         f"got {config!r}")
    return PostTrainingQuantization(observers[0] if observers else "minmax", percentile,
                                    cross_layer_equalization="cle" in parts, bias_correction="bc" in parts)


def logits_of(net, inputs: np.ndarray, chunk: int = 20) -> np.ndarray:
    return np.concatenate([net(Tensor(inputs[i:i + chunk])).asnumpy() for i in range(0, len(inputs), chunk)])


def clear_inputs(reference: np.ndarray, margin: float) -> np.ndarray:
    """Which rows of ``reference`` (float32 logits) have a top-1 margin of at least ``margin`` times their std."""
    top2 = np.sort(reference, axis=1)[:, -2:]
    return (top2[:, 1] - top2[:, 0]) >= margin * reference.std(axis=1)


def measures(reference: np.ndarray, logits: np.ndarray, margin: float) -> dict[str, float]:
    """{'agreement', 'clear agreement', 'clear count', 'cosine'} of ``logits`` against ``reference``."""
    clear = clear_inputs(reference, margin)
    same = np.argmax(logits, 1) == np.argmax(reference, 1)
    cosine = np.sum(reference * logits, 1) / (np.linalg.norm(reference, axis=1) * np.linalg.norm(logits, axis=1))
    return {"agreement": float(same.mean()),
            "clear agreement": float(same[clear].mean()) if clear.any() else float("nan"),
            "clear count": int(clear.sum()), "cosine": float(cosine.mean())}


def main(argv: list[str] | None = None) -> int:
    from quant_vs_onnxruntime import SHAPES, _model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet18,mobilenetv2")
    parser.add_argument("--size", type=int, default=0, help="input height and width (default: the model's)")
    parser.add_argument("--calibration", type=int, default=100)
    parser.add_argument("--held-out", type=int, default=200)
    parser.add_argument("--configs", default="minmax,mse,minmax+cle,minmax+bc,mse+cle+bc")
    parser.add_argument("--percentile", type=float, default=99.99)
    parser.add_argument("--margin", type=float, default=0.1, help="float top-1 margin / logits std of 'clear' inputs")
    args = parser.parse_args(argv)
    configs = [c for c in args.configs.split(",") if c]
    ptqs = {config: ptq_for(config, args.percentile) for config in configs}
    print(f"| model | PTQ methods | top-1 agreement | agreement, margin >= {args.margin} std (inputs) | "
          f"logits cosine | s |")
    print("|---|---|---|---|---|---|")
    for name in [m for m in args.models.split(",") if m]:
        if args.size:
            SHAPES[name] = (SHAPES[name][0], args.size, args.size)
        rng = np.random.default_rng(0)  # the inputs bench_quant.py draws
        calibration = rng.standard_normal((args.calibration, *SHAPES[name])).astype(np.float32)
        held_out = rng.standard_normal((args.held_out, *SHAPES[name])).astype(np.float32)
        net = _model(name)
        reference = logits_of(net, held_out)
        for config, ptq in ptqs.items():
            start = time.perf_counter()
            fake_quant_net = ptq.apply(net, [calibration[i:i + 25] for i in range(0, len(calibration), 25)])
            m = measures(reference, logits_of(fake_quant_net, held_out), args.margin)
            print(f"| {name} | {config} | {100 * m['agreement']:.1f}% | {100 * m['clear agreement']:.1f}% "
                  f"({m['clear count']}) | {m['cosine']:.4f} | {time.perf_counter() - start:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
