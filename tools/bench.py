"""Benchmark the model zoo on aotnn against onnxruntime and PyTorch, side by side in one process.

Every model runs with the same weights on every engine: the aotnn model's parameters are copied
into a PyTorch twin (tools/bench_twins.py); onnxruntime runs the twin exported with
``torch.onnx.export``. Engines take turns in short blocks of calls (after a pause that lets the
previous engine's spinning threads sleep), so that a busy machine slows them alike; the table
shows medians and the ratios aotnn / peer, and the header the machine's load average. Outputs must agree within ``--tol``
(largest difference over the largest magnitude of the reference).

On a shared machine one run's ratio moves with the minute it ran in (neighbours take cores, caches
and memory bandwidth, and not from every engine alike). ``--rounds N`` times every engine N times
over, ``--round-pause`` seconds apart, and prints each round's ratios with their median and range;
the table then shows the medians over the rounds.

Usage:
    python tools/bench.py [MODEL ...] [--repeat 30] [--threads N] [--vs onnxruntime,torch]
    python tools/bench.py mobilenetv2 --tuning-db tuned/   # the tuned build, the default beside it
    python tools/bench.py mobilenetv2 --vs onnxruntime --rounds 10 --round-pause 30
    python tools/bench.py my_net.py:Net --input x:1,3,64,64 --profile --trace net.trace.json
    python tools/bench.py model.onnx --vs onnxruntime
    aotnn bench [MODEL ...] [same options]
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import warnings

import numpy as np

warnings.filterwarnings("ignore")  # torch.onnx's export chatter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PEERS = ("onnxruntime", "torch")


@dataclass
class ZooEntry:
    """One benchmark model: how to build it, its PyTorch twin and its inputs."""

    make: Callable[[], Any]                                  # the aotnn Cell
    twin: Callable[[], Any]                                  # the PyTorch module with the same names
    inputs: list[tuple[str, tuple[int, ...], str]]           # (name, shape, dtype)
    int_high: int = 2                                        # exclusive bound of integer inputs


def _zoo() -> dict[str, ZooEntry]:
    import bench_twins as twins
    from aotnn import models

    zoo = {
        "lenet5": ZooEntry(models.lenet5, twins.LeNet5, [("x", (1, 1, 32, 32), "float32")]),
        "resnet18": ZooEntry(models.resnet18, twins.ResNet18, [("x", (1, 3, 224, 224), "float32")]),
        "mobilenetv2": ZooEntry(models.mobilenetv2, twins.MobileNetV2, [("x", (1, 3, 224, 224), "float32")]),
    }
    zoo["bert"] = ZooEntry(models.bert_encoder, twins.BertEncoder, [("input_ids", (1, 128), "int64")],
                           int_high=30522)
    zoo["lstm"] = ZooEntry(models.lstm_model, twins.LSTMModel, [("x", (32, 1, 256), "float32")])
    return zoo


def randomize(net, seed: int = 0) -> None:
    """Give normalisation statistics and biases random values, so that every parameter matters."""
    rng = np.random.default_rng(seed)
    for name, param in net.parameters_and_names():
        shape, dtype = param.shape, param.asnumpy().dtype
        if name.endswith(("moving_variance", "variance")):
            value = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("gamma"):
            value = rng.uniform(0.5, 1.5, shape)
        elif name.endswith(("beta", "mean", "bias")):
            value = rng.normal(0.0, 0.1, shape)
        else:
            continue
        param.set_data(value.astype(dtype))


def make_inputs(entry: ZooEntry, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for _, shape, dtype in entry.inputs:
        if np.dtype(dtype).kind in "iu":
            arrays.append(rng.integers(0, entry.int_high, shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def scaled_error(actual: np.ndarray, expected: np.ndarray) -> float:
    """max |actual - expected| / max |expected| (inf on a shape mismatch)."""
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if actual.shape != expected.shape:
        return float("inf")
    scale = max(float(np.abs(expected).max(initial=0.0)), 1e-30)
    return float(np.abs(actual - expected).max(initial=0.0)) / scale


class Runner:
    """One engine's callable for one model, with its outputs as numpy arrays."""

    def __init__(self, name: str, call: Callable[[], list[np.ndarray]]):
        self.name = name
        self.call = call
        self.times: list[float] = []
        self.module: Any = None  # the aotnn_runtime module an aotnn engine runs

    def timed(self) -> None:
        start = time.perf_counter()
        self.call()
        self.times.append(time.perf_counter() - start)

    @property
    def median_ms(self) -> float:
        return float(np.median(self.times)) * 1e3


def aotnn_runner(net, arrays: list[np.ndarray], threads: int, workdir: str, target: str | None,
                 tuning_db: str | None = None, name: str = "aotnn") -> tuple[Runner, float]:
    import aotnn
    import aotnn_runtime

    start = time.perf_counter()
    path = aotnn.export(net, *[aotnn.Tensor(a) for a in arrays], file_name=os.path.join(workdir, name),
                        file_format="AOT", target=target, tuning_db=tuning_db)
    compile_s = time.perf_counter() - start
    module = aotnn_runtime.load(path)
    module.set_num_threads(threads)
    runner = Runner(name, lambda: module.run(*arrays))
    runner.module = module  # for --profile
    return runner, compile_s


def torch_runner(twin, arrays: list[np.ndarray]) -> Runner:
    import torch

    tensors = [torch.from_numpy(a) for a in arrays]

    def call():
        with torch.inference_mode():
            out = twin(*tensors)
            return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]

    return Runner("torch", call)


def onnxruntime_runner(twin, arrays: list[np.ndarray], entry: ZooEntry, threads: int) -> Runner:
    import onnxruntime as ort
    import torch

    buffer = io.BytesIO()
    names = [name for name, _, _ in entry.inputs]
    with torch.no_grad():
        torch.onnx.export(twin, tuple(torch.from_numpy(a) for a in arrays), buffer, input_names=names,
                          opset_version=17, dynamo=False)
    return onnx_session_runner(buffer.getvalue(), arrays, threads)


def onnx_session_runner(model: bytes, arrays: list[np.ndarray], threads: int) -> Runner:
    """onnxruntime running the ONNX ``model`` (serialized) on ``arrays``, its inputs in order."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feed = {graph_input.name: array for graph_input, array in zip(session.get_inputs(), arrays)}
    return Runner("onnxruntime", lambda: session.run(None, feed))


def bench_model(name: str, entry: ZooEntry, *, repeat: int, warmup: int, threads: int, peers: Sequence[str],
                target: str | None = None, pause: float = 0.05, tuning_db: str | None = None,
                rounds: int = 1, round_pause: float = 0.0, profile_repeat: int = 0) -> dict[str, Any]:
    """Compile, check and time one zoo model; returns its row of results.

    With ``tuning_db`` the "aotnn" engine is the tuned build and the default build is timed beside
    it as "untuned". Each of ``rounds`` rounds times every engine ``repeat`` times; the row's
    ``"rounds"`` holds each round's medians and ``"ms"`` their medians; with ``profile_repeat``,
    ``"profile"`` holds the aotnn build's per-kernel records over that many calls.
    """
    import torch

    from bench_twins import copy_weights

    torch.set_num_threads(threads)
    net = entry.make()
    net.set_train(False)
    randomize(net)
    arrays = make_inputs(entry)
    twin = copy_weights(net, entry.twin())
    with tempfile.TemporaryDirectory(prefix="aotnn-bench-") as workdir:
        ours, compile_s = aotnn_runner(net, arrays, threads, workdir, target, tuning_db)
        runners = [ours]
        if tuning_db:
            runners.append(aotnn_runner(net, arrays, threads, workdir, target, None, "untuned")[0])
        if "torch" in peers:
            runners.append(torch_runner(twin, arrays))
        if "onnxruntime" in peers:
            runners.append(onnxruntime_runner(twin, arrays, entry, threads))
        reference = torch_runner(twin, arrays).call()
        errors = {}
        mine = ours.call()
        for runner in runners[1:]:
            theirs = runner.call()
            errors[runner.name] = max(scaled_error(a, b) for a, b in zip(mine, theirs))
        if "torch" not in peers:
            errors["torch"] = max(scaled_error(a, b) for a, b in zip(mine, reference))
        ms, per_round = time_rounds(runners, warmup=warmup, repeat=repeat, pause=pause, rounds=rounds,
                                    round_pause=round_pause)
        row = {"model": name, "compile_s": compile_s, "errors": errors, "threads": threads, "ms": ms,
               "rounds": per_round}
        if profile_repeat:
            row["profile"] = ours.module.profile(*arrays, repeat=profile_repeat)
    return row


def time_rounds(runners: Sequence[Runner], *, warmup: int, repeat: int, pause: float, rounds: int,
                round_pause: float) -> tuple[dict[str, float], list[dict[str, float]]]:
    """Warm every engine up, then time ``rounds`` rounds (:func:`time_round`) ``round_pause`` s apart;
    returns each engine's median over the rounds (ms) and each round's medians."""
    for runner in runners:
        for _ in range(warmup):
            runner.call()
    per_round = []
    for index in range(rounds):
        if index:
            time.sleep(round_pause)
        per_round.append(time_round(runners, repeat, pause))
    return {r.name: float(np.median([times[r.name] for times in per_round])) for r in runners}, per_round


def bench_user_model(name: str, net: Any, arrays: list[np.ndarray], *, repeat: int, warmup: int, threads: int,
                     peers: Sequence[str], onnx_file: str | None = None, pause: float = 0.05,
                     tuning_db: str | None = None, rounds: int = 1, round_pause: float = 0.0,
                     profile_repeat: int = 0) -> dict[str, Any]:
    """Compile, check and time a model the CLI loaded (``file.py:Cell``, ``module:name``, ``.onnx``).

    There is no PyTorch twin of an arbitrary model: the only peer is onnxruntime, running the
    ONNX file itself (``onnx_file``) or the Cell as ``aotnn.export(file_format="ONNX")`` writes it
    (a model that cannot be exported to ONNX is timed alone). Returns its row of results, with
    ``"skipped"`` naming the peers it could not run and why.
    """
    import aotnn

    skipped = {}
    if "torch" in peers:
        skipped["torch"] = "no PyTorch twin of this model"
    with tempfile.TemporaryDirectory(prefix="aotnn-bench-") as workdir:
        ours, compile_s = aotnn_runner(net, arrays, threads, workdir, None, tuning_db)
        runners = [ours]
        if tuning_db:
            runners.append(aotnn_runner(net, arrays, threads, workdir, None, None, "untuned")[0])
        if "onnxruntime" in peers:
            try:
                if onnx_file is None:
                    onnx_file = aotnn.export(net, *[aotnn.Tensor(a) for a in arrays],
                                             file_name=os.path.join(workdir, "model.onnx"), file_format="ONNX")
                with open(onnx_file, "rb") as stream:
                    runners.append(onnx_session_runner(stream.read(), arrays, threads))
            except Exception as err:  # noqa: BLE001 - the model is still timed on aotnn
                skipped["onnxruntime"] = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
        mine = ours.call()
        errors = {runner.name: max(scaled_error(a, b) for a, b in zip(mine, runner.call()))
                  for runner in runners[1:]}
        ms, per_round = time_rounds(runners, warmup=warmup, repeat=repeat, pause=pause, rounds=rounds,
                                    round_pause=round_pause)
        row = {"model": name, "compile_s": compile_s, "errors": errors, "threads": threads, "ms": ms,
               "rounds": per_round, "skipped": skipped}
        if profile_repeat:
            row["profile"] = ours.module.profile(*arrays, repeat=profile_repeat)
    return row


def time_round(runners: Sequence[Runner], repeat: int, pause: float) -> dict[str, float]:
    """Time every engine ``repeat`` times; returns each one's median in ms.

    Engines take turns in blocks, so that background load hits every engine alike. A pause and an
    untimed call before each block let the previous engine's spinning worker threads (onnxruntime's
    and OpenMP's spin-wait) go to sleep instead of competing with this one.
    """
    for runner in runners:
        runner.times.clear()
    block = max(1, min(5, repeat))
    done = 0
    while done < repeat:
        count = min(block, repeat - done)
        for runner in runners:
            time.sleep(pause)
            runner.call()
            for _ in range(count):
                runner.timed()
        done += count
    return {r.name: r.median_ms for r in runners}


def host_description() -> str:
    """The CPU model and ISA the numbers were taken on."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as stream:
            model = next((line.split(":", 1)[1].strip() for line in stream if line.startswith("model name")), "")
    except OSError:
        pass
    from schedules.target import host_mcpu
    return f"{model or 'CPU'} ({host_mcpu()}, {os.cpu_count()} logical CPUs)"


def format_table(rows: list[dict[str, Any]], peers: Sequence[str], tol: float) -> str:
    tuned = any("untuned" in row["ms"] for row in rows)
    heads = ["model", "aotnn ms"] + (["untuned ms"] if tuned else []) + [f"{p} ms" for p in peers] + \
        [f"aotnn/{p}" for p in peers] + ["max err", "compile s"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    for row in rows:
        ms = row["ms"]
        err = max(row["errors"].values()) if row["errors"] else float("nan")
        untuned = [f"{ms.get('untuned', float('nan')):.2f}"] if tuned else []
        cells = [row["model"], f"{ms['aotnn']:.2f}"] + untuned + [f"{ms[p]:.2f}" if p in ms else "-" for p in peers] + \
            [f"{ms['aotnn'] / ms[p]:.2f}x" if p in ms else "-" for p in peers] + \
            [f"{err:.1e}" + ("" if err <= tol else " FAIL") if row["errors"] else "-", f"{row['compile_s']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_rounds(rows: list[dict[str, Any]], peers: Sequence[str]) -> str:
    """One line per model and peer: each round's ratio aotnn / peer, their median and range."""
    lines = []
    for row in rows:
        for peer in [p for p in peers if p in row["ms"]]:
            ratios = [times["aotnn"] / times[peer] for times in row["rounds"]]
            lines.append(f"{row['model']} aotnn/{peer} per round: median {np.median(ratios):.2f}x "
                         f"({min(ratios):.2f}x to {max(ratios):.2f}x): " + ", ".join(f"{r:.2f}" for r in ratios))
    return "\n".join(lines)


def write_json(path: str, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically (temporary file, then rename)."""
    from aotnn_runtime.weights import atomic_write

    atomic_write(path, lambda stream: stream.write(json.dumps(value, indent=1).encode()), suffix=".json")


def _at_least(kind: type, low: float):
    """An argparse type: ``kind(text)``, refused below ``low``."""
    def parse(text: str):
        value = kind(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"expected a number >= {low:g}, got {text}")
        return value
    return parse


def user_model(spec: str, inputs: Sequence[str]) -> tuple[Any, list[np.ndarray], str | None]:
    """The Cell, random inputs of its signature and the ONNX file (if it is one) for a MODEL the
    CLI takes (``file.py:Cell``, ``package.module:name``, ``model.onnx``; see aotnn/cli/models.py)."""
    from aotnn.cli.models import example_inputs, is_onnx, load_model

    net = load_model(spec, tuple(inputs))
    if hasattr(net, "set_train"):
        net.set_train(False)
    rng = np.random.default_rng(1)
    arrays = []
    for tensor in example_inputs(net, spec, tuple(inputs)):
        shape, dtype = tensor.shape, tensor.asnumpy().dtype
        arrays.append(rng.integers(0, 2, shape).astype(dtype) if dtype.kind in "iub" else
                      rng.standard_normal(shape).astype(dtype))
    return net, arrays, spec if is_onnx(spec) else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aotnn bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="zoo models (default: all), or FILE.py:Cell, module:name, "
                                                  "FILE.onnx as aotnn compile takes them")
    parser.add_argument("--input", action="append", default=[],
                        help="NAME:D0,D1,...[:DTYPE] per input of a FILE.py / module model (or an ONNX "
                             "model's dynamic dimensions)")
    parser.add_argument("--repeat", type=_at_least(int, 1), default=30,
                        help="timed calls per engine and round (default 30)")
    parser.add_argument("--warmup", type=_at_least(int, 0), default=3, help="untimed calls per engine first (default 3)")
    parser.add_argument("--rounds", type=_at_least(int, 1), default=1,
                        help="times every engine this many times over and prints each round's ratios (default 1)")
    parser.add_argument("--round-pause", type=_at_least(float, 0.0), default=0.0,
                        help="seconds between rounds, to sample different minutes of a shared machine (default 0)")
    parser.add_argument("--threads", type=_at_least(int, 0), default=0,
                        help="threads for every engine (default: all cores)")
    parser.add_argument("--vs", default="onnxruntime,torch", help="peers, comma-separated (default both)")
    parser.add_argument("--tol", type=float, default=1e-4, help="largest scaled output difference (default 1e-4)")
    parser.add_argument("--json", help="also write the results to this JSON file")
    parser.add_argument("--tuning-db", help="time the build tuned with this database (aotnn tune) beside the default")
    parser.add_argument("--profile", action="store_true",
                        help="also time each kernel of the aotnn build (--repeat calls) and print the table")
    parser.add_argument("--trace", help="write the per-kernel profile of the one MODEL as a Chrome trace JSON")
    args = parser.parse_args(argv)

    from schedules.target import host_cores

    zoo = _zoo()
    names = args.models or list(zoo)
    unknown = [n for n in names if n not in zoo and ":" not in n and not n.lower().endswith(".onnx")]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; the zoo has {list(zoo)}, or give FILE.py:Cell, "
                     f"module:name or FILE.onnx")
    if args.trace and len(names) != 1:
        parser.error(f"--trace: expected one MODEL to trace, got {len(names)}")
    peers = [p for p in args.vs.split(",") if p]
    bad = [p for p in peers if p not in PEERS]
    if bad:
        parser.error(f"--vs: expected some of {PEERS}, got {bad}")
    threads = args.threads or host_cores()
    profile_repeat = args.repeat if (args.profile or args.trace) else 0
    load_before = os.getloadavg()[0]
    rows = []
    for name in names:
        print(f"{name}: compiling and timing ...", file=sys.stderr, flush=True)
        options = dict(repeat=args.repeat, warmup=args.warmup, threads=threads, peers=peers,
                       tuning_db=args.tuning_db, rounds=args.rounds, round_pause=args.round_pause,
                       profile_repeat=profile_repeat)
        if name in zoo:
            rows.append(bench_model(name, zoo[name], **options))
        else:
            import click
            try:
                net, arrays, onnx_file = user_model(name, args.input)
            except click.ClickException as err:
                parser.error(f"{name}: {err.format_message()}")
            rows.append(bench_user_model(name, net, arrays, onnx_file=onnx_file, **options))
    over = f"median of {args.repeat} calls per engine" + \
        (f", medians of {args.rounds} rounds {args.round_pause:g} s apart" if args.rounds > 1 else "")
    print(f"{host_description()}; {threads} thread(s) per engine; {over}, engines taking turns; "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(format_table(rows, peers, args.tol))
    for row in rows:
        for peer, why in row.get("skipped", {}).items():
            print(f"{row['model']}: no {peer} run ({why})")
    if args.rounds > 1 and peers:
        print(format_rounds(rows, peers))
    if profile_repeat:
        from aotnn_runtime.profile import format_table as profile_table, write_trace
        for row in rows:
            print(f"\n{row['model']}: aotnn per kernel, median of {profile_repeat} calls")
            print(profile_table(row["profile"], row["ms"]["aotnn"]))
        if args.trace:
            write_trace(args.trace, rows[0]["profile"], rows[0]["model"])
            print(f"trace: {args.trace}")
    if args.json:
        write_json(args.json, [{**row, "profile": [profile_dict(r) for r in row["profile"]]} if "profile" in row
                               else row for row in rows])
    failed = [r["model"] for r in rows if max(r["errors"].values(), default=0.0) > args.tol]
    if failed:
        print(f"outputs differ beyond {args.tol:g}: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def profile_dict(record: Any) -> dict[str, Any]:
    """A per-kernel record as JSON-able values."""
    return {"step": record.step, "kernel": record.kernel, "median_ms": record.median_ms, "flops": record.flops,
            "bytes": record.bytes, "gflops": record.gflops, "gbytes_per_s": record.gbytes_per_s}

if __name__ == "__main__":
    sys.exit(main())
