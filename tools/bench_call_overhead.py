"""What a compiled Cell's call costs beyond running its artifact: ``net(Tensor(x))`` minus
``aotnn_runtime`` running the same artifact on the same array.

Both run the same kernels; the difference is the Cell call path (signature lookup, parameter
checks, Tensor wrapping, output copies). The two take turns in blocks of calls so a busy machine
slows them alike. Two figures per model, in microseconds:

- outside the kernels: each call's time minus the time its one native run of the kernels took
  (timed around ``NativeSteps.run`` in both paths), median Cell call minus median runtime call.
  The kernels' own time, and what load does to it, cancels call by call: this is the figure
  checked against the issue's goal (``--limit-us``, 100 us for ResNet-18).
- whole calls: the median Cell call minus the median runtime call. On a busy machine the
  kernels' spread (milliseconds for ResNet-18) swamps the difference; shown for reference.

Usage:
    python tools/bench_call_overhead.py [lenet5 resnet18] [--calls 2000] [--block 50] [--limit-us 100]

Exits 1 when a model's overhead outside the kernels exceeds ``--limit-us``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

MODELS = {"lenet5": (1, 1, 32, 32), "resnet18": (1, 3, 224, 224)}


class _KernelClock:
    """Wraps an entry point's native runner: accumulates the seconds its kernels ran."""

    def __init__(self, native) -> None:
        self.seconds = 0.0
        run = native.run

        def timed_run() -> None:
            start = time.perf_counter()
            try:
                run()
            finally:
                self.seconds += time.perf_counter() - start

        native.run = timed_run  # an instance attribute: this entry point only


def _timed_block(call: Callable[[], object], clock: _KernelClock, count: int,
                 whole: list[float], outside: list[float]) -> None:
    call()  # untimed: the other engine's block left its own data in the caches
    for _ in range(count):
        clock.seconds = 0.0
        start = time.perf_counter()
        call()
        elapsed = time.perf_counter() - start
        whole.append(elapsed)
        outside.append(elapsed - clock.seconds)


def _native_of(entry):
    native = entry._native
    if native is None:
        raise RuntimeError(f"{entry.name}: runs its steps in Python (no native runner); the kernel time "
                           f"cannot be separated from the call path")
    return native


def overhead(name: str, calls: int, block: int) -> dict[str, float]:
    """Medians in microseconds: ``cell``/``runtime`` whole calls, ``cell_outside``/``runtime_outside``
    the same calls less their kernels' time, and the differences ``whole`` and ``outside``."""
    import aotnn
    import aotnn_runtime

    net = getattr(aotnn.models, name)()
    net.set_train(False)
    x = np.random.default_rng(0).standard_normal(MODELS[name]).astype(np.float32)
    tensor = aotnn.Tensor(x)
    net(tensor)  # compiles (or loads the cached artifact)
    compiled = next(iter(net._jit_cache.values()))
    module = aotnn_runtime.load(compiled.artifact)  # a second load: its own arena and buffers
    for param_name, param in zip(compiled.param_names, compiled.params):
        module.weights[param_name] = aotnn_runtime.as_aligned(param.asnumpy())  # stored, as an export has them
    module.run(x)
    cell_clock = _KernelClock(_native_of(compiled.entry))
    runtime_clock = _KernelClock(_native_of(module[module.entry_points[0]]))
    times: dict[str, list[float]] = {k: [] for k in ("cell", "cell_outside", "runtime", "runtime_outside")}
    done = 0
    while done < calls:
        count = min(block, calls - done)
        _timed_block(lambda: net(tensor), cell_clock, count, times["cell"], times["cell_outside"])
        _timed_block(lambda: module.run(x), runtime_clock, count, times["runtime"], times["runtime_outside"])
        done += count
    result = {k: float(np.median(v) * 1e6) for k, v in times.items()}
    result["whole"] = result["cell"] - result["runtime"]
    result["outside"] = result["cell_outside"] - result["runtime_outside"]
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=list(MODELS), help=f"some of {list(MODELS)}")
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per path (default 2000)")
    parser.add_argument("--block", type=int, default=50, help="calls per turn (default 50)")
    parser.add_argument("--limit-us", type=float, default=100.0,
                        help="largest overhead outside the kernels that passes, in us "
                             "(default 100: the issue's 0.1 ms)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"models: expected some of {list(MODELS)}, got {unknown}")
    if args.calls < 1 or args.block < 1:
        parser.error("--calls and --block: expected positive integers")
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.calls} calls per path, blocks of {args.block}")
    failed = False
    for name in args.models:
        us = overhead(name, args.calls, args.block)
        verdict = "PASS" if us["outside"] <= args.limit_us else "FAIL"
        failed |= verdict == "FAIL"
        print(f"{name}: outside the kernels Cell call {us['cell_outside']:.1f} us, aotnn_runtime "
              f"{us['runtime_outside']:.1f} us, overhead {us['outside']:.1f} us: {verdict} "
              f"(limit {args.limit_us:g} us); "
              f"whole calls {us['cell']:.1f} vs {us['runtime']:.1f} us ({us['whole']:+.1f} us)")
    print(f"load average {os.getloadavg()[0]:.1f} after")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
