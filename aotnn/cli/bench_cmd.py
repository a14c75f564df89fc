"""``aotnn bench``: the model zoo on aotnn, onnxruntime and PyTorch side by side (tools/bench.py)."""
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
@one_line_errors
def bench(models, repeat: int, warmup: int, rounds: int, round_pause: float, threads: int, vs: str, tol: float,
          json_path) -> None:
    """Benchmark zoo MODELS (default: all) against onnxruntime and PyTorch with the same weights.

    Prints median latencies, the ratios aotnn / peer and whether the outputs agree.

    \b
    Example:
      aotnn bench resnet18 mobilenetv2 --repeat 50
      aotnn bench mobilenetv2 --vs onnxruntime --rounds 10 --round-pause 30
    """
    argv = [*models, "--repeat", str(repeat), "--warmup", str(warmup), "--rounds", str(rounds),
            "--round-pause", repr(round_pause), "--threads", str(threads), "--vs", vs, "--tol", repr(tol)]
    if json_path:
        argv += ["--json", os.fspath(json_path)]
    code = _bench_tool().main(argv)
    if code:
        raise click.exceptions.Exit(code)
