"""Per-kernel times of MobileNetV2's depthwise layers: our int8 kernels beside our float32 ones.

Builds MobileNetV2 (random weights, 224x224, batch 1) in float32 and, after post-training quantization
on a few random inputs, in int8 (``export_int8``); profiles both artifacts (``Module.profile``) on
``--threads`` threads and prints, for each depthwise layer in network order, the float32 and int8
kernel medians and their ratio, then the whole-network sums.

    python tools/bench_int8_depthwise.py [--threads 2] [--repeat 50]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def _depthwise_rows(records) -> list[tuple[str, float]]:
    return [(r.kernel, r.median_ms) for r in records if "dwconv" in r.kernel or "depthwise" in r.kernel]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--calibration", type=int, default=8)
    args = parser.parse_args(argv)

    import aotnn
    import aotnn_runtime
    from aotnn import Tensor
    from aotnn.compression.quant import PostTrainingQuantization, export_int8
    from quant_vs_onnxruntime import _model

    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((args.calibration, 3, 224, 224)).astype(np.float32)
    example = calibration[:1]
    net = _model("mobilenetv2")
    fake_quant = PostTrainingQuantization("minmax").apply(net, [calibration])
    with tempfile.TemporaryDirectory() as workdir:
        paths = {"float32": aotnn.export(net, Tensor(example), file_name=os.path.join(workdir, "float")),
                 "int8": export_int8(fake_quant, Tensor(example), file_name=os.path.join(workdir, "int8"))}
        profiles = {}
        for key, path in paths.items():
            module = aotnn_runtime.load(path)
            module.set_num_threads(args.threads)
            profiles[key] = module.profile(example, repeat=args.repeat)
    float_rows, int8_rows = _depthwise_rows(profiles["float32"]), _depthwise_rows(profiles["int8"])
    print(f"load average {os.getloadavg()[0]:.2f}; {args.threads} threads; medians of {args.repeat} calls (ms)")
    print(f"{'layer':>5} {'float32 kernel':<40} {'ms':>7} {'int8 kernel':<40} {'ms':>7} {'int8/f32':>8}")
    for index, ((fname, fms), (iname, ims)) in enumerate(zip(float_rows, int8_rows)):
        print(f"{index:>5} {fname[:40]:<40} {fms:7.3f} {iname[:40]:<40} {ims:7.3f} {ims / fms:8.2f}")
    fsum, isum = sum(ms for _, ms in float_rows), sum(ms for _, ms in int8_rows)
    print(f"depthwise total: float32 {fsum:.3f} ms, int8 {isum:.3f} ms ({isum / fsum:.2f}x)")
    totals = {key: sum(r.median_ms for r in records) for key, records in profiles.items()}
    print(f"all kernels: float32 {totals['float32']:.3f} ms, int8 {totals['int8']:.3f} ms "
          f"({totals['int8'] / totals['float32']:.2f}x)")
    if len(float_rows) != len(int8_rows):
        print(f"note: {len(float_rows)} float32 and {len(int8_rows)} int8 depthwise kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
