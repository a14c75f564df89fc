"""Tune a zoo model, then time its default and tuned builds side by side.

Usage:
    python tools/tune_zoo.py lenet5 --trials 64 --db tuned/
    python tools/tune_zoo.py resnet18 --trials 2000 --minutes 10 --db tuned/

The tuning run is ``schedules.tune`` (records go to --db, resumable, a convergence plot beside
them). The builds are the artifacts users get (``aotnn.export`` with and without
``tuning_db``); they take turns call by call, so a busy machine slows them alike. The median
and the fastest call are both shown: on a shared machine the fastest is the steadier figure.
Comparisons with onnxruntime and PyTorch: ``tools/bench.py MODEL --tuning-db DIR``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="zoo model: lenet5, resnet18, mobilenetv2, ...")
    parser.add_argument("--db", required=True, help="tuning database directory")
    parser.add_argument("--trials", type=int, default=64, help="trials in all, counting those already in --db")
    parser.add_argument("--minutes", type=float, help="stop tuning after this long")
    parser.add_argument("--repeat", type=int, default=30, help="timed calls per build")
    parser.add_argument("--threads", type=int, default=0, help="threads (default: all cores)")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between timed calls")
    args = parser.parse_args(argv)

    import aotnn
    import aotnn_runtime
    import schedules
    from aotnn.jit.compiled import capture_function
    from bench import _zoo, make_inputs, randomize, scaled_error
    from schedules.target import host_cores

    threads = args.threads or host_cores()
    entry = _zoo()[args.model]
    net = entry.make()
    net.set_train(False)
    randomize(net)
    arrays = make_inputs(entry)
    names = [name for name, _, _ in entry.inputs]
    mod, _, _, _ = capture_function(lambda *xs: net(*xs), [(n, s, d) for n, s, d in entry.inputs])

    start = time.perf_counter()
    result = schedules.tune(mod, names, db=args.db, trials=args.trials, num_threads=threads,
                            time_budget=args.minutes * 60 if args.minutes else None, model_name=args.model)
    tune_s = time.perf_counter() - start

    engines = {}
    with tempfile.TemporaryDirectory() as work:
        tensors = [aotnn.Tensor(a) for a in arrays]
        for label, db in (("default", None), ("tuned", args.db)):
            path = aotnn.export(net, *tensors, file_name=os.path.join(work, label), tuning_db=db)
            module = aotnn_runtime.load(path)
            module.set_num_threads(threads)
            engines[label] = (lambda m=module: m.run(*arrays))
        reference = engines["default"]()
        for label, call in engines.items():
            error = scaled_error(np.asarray(call()[0]), np.asarray(reference[0]))
            if error > 1e-3:
                print(f"warning: {label} output differs from the default build by {error:.2e}")
        times = {label: [] for label in engines}
        for _ in range(3):
            for call in engines.values():
                call()
        order = list(engines)
        for n in range(args.repeat):
            for label in order[n % len(order):] + order[:n % len(order)]:  # rotate who goes first
                time.sleep(args.pause)
                begin = time.perf_counter()
                engines[label]()
                times[label].append(time.perf_counter() - begin)

    median = {label: float(np.median(t)) * 1e3 for label, t in times.items()}
    fastest = {label: float(np.min(t)) * 1e3 for label, t in times.items()}
    print(f"\n{args.model}: {result.new_trials} new trials in {tune_s:.0f} s "
          f"({tune_s / max(result.new_trials, 1):.2f} s per trial; {result.trials} in the database)")
    print(f"kernel estimate: default {result.default_latency * 1e3:.3f} ms -> tuned {result.latency * 1e3:.3f} ms "
          f"({result.speedup:.2f}x), {sum(t.applied for t in result.tasks)}/{len(result.tasks)} kernels tuned")
    for name, stat in (("median", median), ("fastest", fastest)):
        line = ", ".join(f"{label} {value:.3f} ms" for label, value in stat.items())
        print(f"end to end ({name} of {args.repeat}, {threads} threads): {line}; "
              f"tuned/default {stat['tuned'] / stat['default']:.3f}")
    if result.plot_path:
        print(f"convergence plot: {result.plot_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
