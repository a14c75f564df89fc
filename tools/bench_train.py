"""Benchmark one compiled training step on aotnn against PyTorch CPU, side by side in one process.

A step is forward, softmax cross-entropy (sparse labels, mean), backward and a Momentum update
(lr 0.01, momentum 0.9): on aotnn ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.Momentum(...))``
called on Tensors, i.e. one compiled graph per step plus the parameter write-back, as a user runs
it; on PyTorch the usual ``zero_grad / loss.backward() / SGD(momentum=0.9).step()``. The twin
(tools/bench_twins.py) starts from the same weights, both engines use the same number of threads,
and the first two steps' losses must agree (the first checks the forward pass, the second the
gradients and the update). Engines then take turns in short blocks of steps; the table shows
median step times, the ratio aotnn / PyTorch and aotnn's compile time (capture + build, measured
on an empty artifact cache unless --reuse-cache). ``--profile`` also times every kernel of the
aotnn step and lists those that take the most time.

Usage:
    python tools/bench_train.py [--models lenet5,resnet18] [--repeats 20] [--threads N] [--profile 15]
                                [--json results.json] [--reuse-cache]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Runner as Engine  # noqa: E402  one timed callable per engine (``call()`` steps)
from bench import write_json  # noqa: E402

LEARNING_RATE = 0.01
MOMENTUM = 0.9


@dataclass
class TrainEntry:
    """One benchmark model: the aotnn Cell, its PyTorch twin, the batch shape and the class count."""

    make: Callable[[], Any]
    twin: Callable[[], Any]
    batch_shape: tuple[int, ...]
    classes: int


def _zoo() -> dict[str, TrainEntry]:
    import bench_twins as twins
    from aotnn import models

    return {
        "lenet5": TrainEntry(lambda: models.lenet5(10, 1), lambda: twins.LeNet5(10, 1), (32, 1, 32, 32), 10),
        "resnet18": TrainEntry(lambda: models.resnet18(1000), lambda: twins.ResNet18(1000), (8, 3, 224, 224), 1000),
    }


def reinitialize(net, seed: int = 0) -> None:
    """He-uniform weights and random biases / normalisation parameters: logits far from zero, so that
    the loss depends on every layer (the zoo's small default weights give about log(classes))."""
    import aotnn
    from aotnn.common.initializer import HeUniform, initializer
    from bench import randomize

    aotnn.set_seed(seed)
    for name, param in net.parameters_and_names():
        if name.endswith("weight") and len(param.shape) >= 2:
            param.set_data(initializer(HeUniform(), param.shape))
    randomize(net, seed)


def make_batch(entry: TrainEntry, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.standard_normal(entry.batch_shape).astype(np.float32)
    labels = rng.integers(0, entry.classes, entry.batch_shape[0]).astype(np.int32)
    return images, labels


def aotnn_engine(net, images: np.ndarray, labels: np.ndarray, threads: int) -> tuple[Engine, Any, float]:
    """The compiled training step (built here, timed as compile time) and its loaded artifact."""
    from aotnn import Tensor, nn
    from aotnn.jit.cell_call import compiled_for

    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=LEARNING_RATE, momentum=MOMENTUM)
    train_step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer)
    train_step.set_train(True)
    x, y = Tensor(images), Tensor(labels)
    start = time.perf_counter()
    compiled, _ = compiled_for(train_step, (x, y), {})  # cached on the cell: the calls below reuse it
    compile_s = time.perf_counter() - start
    compiled.module.set_num_threads(threads)
    return Engine("aotnn", lambda: float(train_step(x, y).asnumpy())), compiled, compile_s


def torch_engine(twin, images: np.ndarray, labels: np.ndarray) -> Engine:
    import torch

    twin.train()
    optimizer = torch.optim.SGD(twin.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
    x, y = torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))

    def step() -> float:
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(twin(x), y)
        loss.backward()
        optimizer.step()
        return float(loss.item())

    return Engine("torch", step)


def profile_kernels(compiled, step: Callable[[], float], calls: int = 3) -> list[tuple[str, int, float]]:
    """Time every kernel of the aotnn training step over ``calls`` steps.

    Returns:
        (kernel name, launches per step, ms per step, argument shapes of its first launch) sorted
        by time, largest first; the weight re-layouts that run before the step
        (``prepare_steps``) are included.
    """
    entry = compiled.entry
    record = compiled.module.manifest["entries"][entry.name]
    tables = {"input": record["inputs"], "param": record["params"], "buffer": record["buffers"],
              "output": record["outputs"], "prepared": record.get("prepared", [])}
    totals: dict[str, float] = {}
    counts: dict[str, int] = {}
    shapes: dict[str, str] = {}

    def timed(kernel, name: str):
        def call(*args):
            start = time.perf_counter()
            kernel(*args)
            totals[name] = totals.get(name, 0.0) + time.perf_counter() - start
        return call

    saved = entry._steps, entry._prepare_steps, entry._native
    entry._native = None  # one Python call per kernel, so that each can be timed
    try:
        for attr, steps in (("_steps", record["steps"]), ("_prepare_steps", record.get("prepare_steps", []))):
            loaded = getattr(entry, attr)
            setattr(entry, attr, [(timed(kernel, spec["kernel"]), args) for (kernel, args), spec in zip(loaded, steps)])
            for spec in steps:
                counts[spec["kernel"]] = counts.get(spec["kernel"], 0) + 1
                shapes.setdefault(spec["kernel"], " ".join(
                    "x".join(map(str, tables[ref["kind"]][ref["index"]]["shape"])) or "()" for ref in spec["args"]))
        for _ in range(calls):
            step()
    finally:
        entry._steps, entry._prepare_steps, entry._native = saved
    rows = [(name, counts[name], seconds / calls * 1e3, shapes[name]) for name, seconds in totals.items()]
    return sorted(rows, key=lambda row: -row[2])


def relative_difference(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-30)


def bench_model(name: str, entry: TrainEntry, *, repeats: int, warmup: int, threads: int, profile: int = 0,
                pause: float = 0.05) -> dict[str, Any]:
    """Compile, check and time one model's training step; returns its row of results."""
    import torch

    from bench_twins import copy_weights

    torch.set_num_threads(threads)
    net = entry.make()
    reinitialize(net)
    twin = copy_weights(net, entry.twin())
    images, labels = make_batch(entry)
    ours, compiled, compile_s = aotnn_engine(net, images, labels, threads)
    theirs = torch_engine(twin, images, labels)
    losses = {engine.name: [engine.call(), engine.call()] for engine in (ours, theirs)}
    diffs = [relative_difference(a, b) for a, b in zip(losses["aotnn"], losses["torch"])]
    for engine in (ours, theirs):
        for _ in range(warmup):
            engine.call()
    # Turns in blocks, after a pause and an untimed step, so that background load and the other
    # engine's spinning worker threads hit both alike (as tools/bench.py does).
    block, done = max(1, min(5, repeats)), 0
    while done < repeats:
        count = min(block, repeats - done)
        for engine in (ours, theirs):
            time.sleep(pause)
            engine.call()
            for _ in range(count):
                engine.timed()
        done += count
    row = {"model": name, "batch": list(entry.batch_shape), "threads": threads, "compile_s": compile_s,
           "losses": losses, "loss_rel_diff": diffs, "ms": {e.name: e.median_ms for e in (ours, theirs)},
           "kernels": []}
    if profile:
        rows = profile_kernels(compiled, ours.call)
        row["kernels"] = rows[:profile]
        row["kernel_ms"] = sum(ms for _, _, ms, _ in rows)
        row["kernel_count"] = sum(n for _, n, _, _ in rows)
    return row


def format_table(rows: list[dict[str, Any]], tol: float) -> str:
    heads = ["model", "batch", "aotnn ms/step", "torch ms/step", "aotnn/torch", "loss (step 1)", "loss rel diff",
             "compile s"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    for row in rows:
        diff = max(row["loss_rel_diff"])
        cells = [row["model"], "x".join(str(d) for d in row["batch"]), f"{row['ms']['aotnn']:.2f}",
                 f"{row['ms']['torch']:.2f}", f"{row['ms']['aotnn'] / row['ms']['torch']:.2f}x",
                 f"{row['losses']['torch'][0]:.4f}", f"{diff:.1e}" + ("" if diff <= tol else " FAIL"),
                 f"{row['compile_s']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_profile(row: dict[str, Any]) -> str:
    lines = [f"{row['model']}: {row['kernel_count']} kernel launches, {row['kernel_ms']:.1f} ms of kernels per step "
             f"(step {row['ms']['aotnn']:.1f} ms); the largest:",
             "| kernel | launches | ms/step | share | argument shapes (first launch) |", "|---|---|---|---|---|"]
    for kernel, count, ms, shapes in row["kernels"]:
        lines.append(f"| {kernel} | {count} | {ms:.2f} | {ms / row['kernel_ms']:.0%} | {shapes} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_train", description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="lenet5,resnet18", help="comma-separated (default lenet5,resnet18)")
    parser.add_argument("--repeats", type=int, default=20, help="timed steps per engine (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per engine first (default 2)")
    parser.add_argument("--threads", type=int, default=0, help="threads for both engines (default: all cores)")
    parser.add_argument("--tol", type=float, default=1e-3, help="largest relative loss difference (default 1e-3)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="also list aotnn's N slowest kernels")
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--reuse-cache", action="store_true",
                        help="build into the usual artifact cache (default: an empty one, so compile time is real)")
    args = parser.parse_args(argv)

    from bench import host_description
    from schedules.target import host_cores

    zoo = _zoo()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in zoo]
    if unknown or not names:
        parser.error(f"--models: expected some of {list(zoo)}, got {names}")
    if args.repeats < 1:
        parser.error(f"--repeats: expected a positive int, got {args.repeats}")
    threads = args.threads or host_cores()
    load_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="aotnn-bench-train-") as cache:
        saved_cache = os.environ.get("AOTNN_CACHE_DIR")
        if not args.reuse_cache:
            os.environ["AOTNN_CACHE_DIR"] = cache
        try:
            for name in names:
                print(f"{name}: compiling and timing ...", file=sys.stderr, flush=True)
                rows.append(bench_model(name, zoo[name], repeats=args.repeats, warmup=args.warmup, threads=threads,
                                        profile=args.profile))
        finally:
            if saved_cache is None:
                os.environ.pop("AOTNN_CACHE_DIR", None)
            else:
                os.environ["AOTNN_CACHE_DIR"] = saved_cache
    print(f"{host_description()}; {threads} thread(s) per engine; median of {args.repeats} training steps per "
          f"engine, engines taking turns; load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(format_table(rows, args.tol))
    for row in rows:
        if row["kernels"]:
            print()
            print(format_profile(row))
    if args.json:
        write_json(args.json, rows)
    failed = [r["model"] for r in rows if max(r["loss_rel_diff"]) > args.tol]
    if failed:
        print(f"losses differ beyond {args.tol:g}: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
