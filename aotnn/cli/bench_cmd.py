"""``aotnn bench``: zoo models or any MODEL the CLI takes, on aotnn, onnxruntime and PyTorch side by side
(tools/bench.py)."""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import click

from .app import main, one_line_errors


def _bench_tool():
    path = Path(__file__).resolve().parents[2] / "tools" / "bench.py"
    if not path.is_file():
        raise FileNotFoundError(f"aotnn bench runs {path}, which only a source checkout of aotnn has")
    spec = importlib.util.spec_from_file_location("aotnn_tools_bench", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@main.command()
@click.argument("models", nargs=-1)
@click.option("--repeat", default=30, show_default=True, type=click.IntRange(1), help="Timed calls per engine.")
@click.option("--warmup", default=3, show_default=True, type=click.IntRange(0), help="Untimed calls per engine first.")
@click.option("--rounds", default=1, show_default=True, type=click.IntRange(1),
              help="Time every engine this many times over; prints each round's ratios.")
@click.option("--round-pause", default=0.0, show_default=True, type=click.FloatRange(0.0),
              help="Seconds between rounds (to sample different minutes of a shared machine).")
@click.option("--threads", default=0, type=click.IntRange(0), help="Threads for every engine [default: all cores].")
@click.option("--vs", default="onnxruntime,torch", show_default=True, help="Peers, comma-separated.")
@click.option("--tol", default=1e-4, show_default=True, type=float, help="Largest scaled output difference.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Also write the results as JSON.")
@click.option("--input", "inputs", multiple=True,
              help="NAME:D0,D1,...[:DTYPE] per input of a FILE.py / module MODEL (ONNX: its dynamic dimensions).")
@click.option("--profile", is_flag=True, help="Also print each aotnn kernel's time, FLOPs and GFLOP/s.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False),
              help="Write the one MODEL's per-kernel profile as a Chrome trace (chrome://tracing, Perfetto).")
@one_line_errors
def bench(models, repeat: int, warmup: int, rounds: int, round_pause: float, threads: int, vs: str, tol: float,
          json_path, inputs, profile: bool, trace_path) -> None:
    """Benchmark MODELS (default: the whole zoo) against onnxruntime and PyTorch.

    A zoo name (lenet5, resnet18, mobilenetv2, bert, lstm) runs against its PyTorch twin with the
    same weights and that twin exported to ONNX. Any other MODEL aotnn compile takes
    (FILE.py:Cell, package.module:name, FILE.onnx) runs against onnxruntime on its ONNX form.
    Prints median latencies, the ratios aotnn / peer and whether the outputs agree.

    \b
    Example:
      aotnn bench resnet18 mobilenetv2 --repeat 50
      aotnn bench mobilenetv2 --vs onnxruntime --rounds 10 --round-pause 30
      aotnn bench my_net.py:Net --input x:1,3,64,64 --profile --trace net.trace.json
    """
    argv = [*models, "--repeat", str(repeat), "--warmup", str(warmup), "--rounds", str(rounds),
            "--round-pause", repr(round_pause), "--threads", str(threads), "--vs", vs, "--tol", repr(tol)]
    for text in inputs:
        argv += ["--input", text]
    if json_path:
        argv += ["--json", os.fspath(json_path)]
    if profile:
        argv.append("--profile")
    if trace_path:
        argv += ["--trace", os.fspath(trace_path)]
    code = _bench_tool().main(argv)
    if code:
        raise click.exceptions.Exit(code)
