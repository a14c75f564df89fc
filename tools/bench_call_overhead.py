"""What a compiled Cell's call costs beyond running its artifact: ``net(Tensor(x))`` minus
``aotnn_runtime`` running the same artifact on the same array.

Both run the same kernels; the difference is the Cell call path (signature lookup, parameter
checks, Tensor wrapping, output copies). The two take turns in blocks of calls so a busy machine
slows them alike; the overhead is the median Cell call minus the median runtime call, over all
blocks, in microseconds.

Usage:
    python tools/bench_call_overhead.py [lenet5 resnet18] [--calls 2000] [--block 50]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

MODELS = {"lenet5": (1, 1, 32, 32), "resnet18": (1, 3, 224, 224)}


def _timed_block(call: Callable[[], object], count: int, into: list[float]) -> None:
    call()  # untimed: the other engine's block left its own data in the caches
    for _ in range(count):
        start = time.perf_counter()
        call()
        into.append(time.perf_counter() - start)


def overhead(name: str, calls: int, block: int) -> tuple[float, float, float]:
    """(median Cell call, median runtime call, their difference), in microseconds."""
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
    cell_times: list[float] = []
    runtime_times: list[float] = []
    done = 0
    while done < calls:
        count = min(block, calls - done)
        _timed_block(lambda: net(tensor), count, cell_times)
        _timed_block(lambda: module.run(x), count, runtime_times)
        done += count
    cell_us, runtime_us = np.median(cell_times) * 1e6, np.median(runtime_times) * 1e6
    return float(cell_us), float(runtime_us), float(cell_us - runtime_us)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", default=list(MODELS), help=f"some of {list(MODELS)}")
    parser.add_argument("--calls", type=int, default=2000, help="timed calls per path (default 2000)")
    parser.add_argument("--block", type=int, default=50, help="calls per turn (default 50)")
    args = parser.parse_args(argv)
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"models: expected some of {list(MODELS)}, got {unknown}")
    if args.calls < 1 or args.block < 1:
        parser.error("--calls and --block: expected positive integers")
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.calls} calls per path, blocks of {args.block}")
    for name in args.models:
        cell_us, runtime_us, extra = overhead(name, args.calls, args.block)
        print(f"{name}: Cell call {cell_us:.1f} us, aotnn_runtime {runtime_us:.1f} us, overhead {extra:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
