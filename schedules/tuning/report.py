"""What the user sees while tuning: progress bars, the final table and the convergence plot."""
from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

import click
from aotnn_runtime.weights import atomic_write


def format_time(seconds: float | None) -> str:
    if seconds is None or seconds == float("inf"):
        return "-"
    if seconds >= 1e-1:
        return f"{seconds * 1e3:.0f} ms"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} us"


class Reporter:
    """Receives tuning events; the base class ignores them (``progress=False``)."""

    def start(self, tuner: Any) -> None: ...
    def message(self, text: str) -> None: ...
    def task_begin(self, state: Any, count: int) -> None: ...
    def measured(self, state: Any, record: dict[str, Any]) -> None: ...
    def task_end(self, state: Any) -> None: ...
    def finish(self, result: Any) -> None: ...


class ConsoleReporter(Reporter):
    """Progress on stderr with click: an overall bar whose line also carries the current task's
    own bar, a line per finished round with the task's and the model's best latency, and the
    final table on stdout."""

    def __init__(self, width: int = 24):
        self._overall = None
        self._rounds: dict[int, list[int]] = {}  # id(task state) -> [measured, proposed] in its current round
        self._state = None
        self._tuner = None
        self._width = width

    def start(self, tuner: Any) -> None:
        self._tuner = tuner
        click.echo(f"tuning {len(tuner.states)} tasks for {tuner.target_name}: {tuner.remaining} new trials "
                   f"({tuner.done_before} already in {tuner.db.path}), measuring {tuner.runner_spec.describe()}",
                   err=True)
        click.echo(f"default schedules: model kernels {format_time(tuner.model_latency())}", err=True)
        self._overall = click.progressbar(length=max(tuner.remaining, 1), label="overall", file=click.get_text_stream("stderr"),
                                          item_show_func=self._task_line, show_pos=True, width=self._width)
        self._overall.__enter__()

    def message(self, text: str) -> None:
        click.echo(text, err=True)

    def _task_line(self, _item: Any = None) -> str:
        state = self._state
        if state is None or self._tuner is None:
            return ""
        done, total = self._rounds.get(id(state), (0, 0))
        filled = int(self._width / 2 * done / max(total, 1))
        bar = "#" * filled + "-" * (self._width // 2 - filled)
        return (f"| {state.task.name[:28]} [{bar}] {done}/{total} "
                f"best {format_time(state.current)} | model {format_time(self._tuner.model_latency())}")

    def task_begin(self, state: Any, count: int) -> None:
        self._state = state
        self._rounds[id(state)] = [0, count]
        if self._overall is not None:
            self._overall.update(0)
            self._overall.render_progress()

    def measured(self, state: Any, record: dict[str, Any]) -> None:
        self._state = state  # over RPC the next round may already be under way
        self._rounds.setdefault(id(state), [0, 0])[0] += 1
        if self._overall is not None:
            self._overall.update(1)

    def task_end(self, state: Any) -> None:
        if self._overall is not None and not self._overall.hidden:
            return  # the live line already shows it
        click.echo(f"  {state.task.name}: {state.trials} trials, best {format_time(state.current)} "
                   f"(default {format_time(state.default_latency)}); model {format_time(self._tuner.model_latency())}",
                   err=True)

    def finish(self, result: Any) -> None:
        if self._overall is not None:
            self._overall.__exit__(None, None, None)
            self._overall = None
        click.echo(format_table(result))
        if result.plot_path:
            click.echo(f"convergence plot: {result.plot_path}")


def format_table(result: Any) -> str:
    """The final table: one row per task, then the model's totals."""
    header = ("task", "calls", "MFLOP", "GFLOP/s", "default", "tuned", "speedup", "trials", "uses")
    rows = []
    for t in result.tasks:
        latency = t.latency
        gflops = t.flops / latency / 1e9 if latency and t.flops else None
        rows.append((t.name[:40], str(t.weight), f"{t.flops / 1e6:.3g}", f"{gflops:.1f}" if gflops else "-",
                     format_time(t.default_latency), format_time(t.tuned_latency),
                     f"{t.default_latency / latency:.2f}x" if t.default_latency and latency else "-",
                     str(t.trials), "tuned" if t.applied else "default"))
    rows.append(("model (sum of kernels)", "", f"{sum(t.flops * t.weight for t in result.tasks) / 1e6:.3g}", "",
                 format_time(result.default_latency), format_time(result.latency),
                 f"{result.default_latency / result.latency:.2f}x" if result.latency else "-",
                 str(result.trials), ""))
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in [header, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(lines)


def plot_name(model_name: str | None) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model_name or "model").strip("_") or "model"
    return f"convergence-{slug}"


def write_curve(directory: str, model_name: str | None, curve: Sequence[tuple[int, float]],
                default_latency: float, title: str, final: float | None = None) -> str | None:
    """Write the curve as JSON and, when matplotlib is installed, as a PNG; return the PNG's path.

    ``final`` is the model's kernel time with the kernels a build would use, after the
    side-by-side re-timing of the best candidates (separate measurements drift with the load)."""
    base = os.path.join(directory, plot_name(model_name))
    _write_json(base + ".json", {"title": title, "default_latency": default_latency, "final_latency": final,
                                 "trials": [n for n, _ in curve], "latency": [v for _, v in curve]})
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib import pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=110)
    scale, unit = (1e3, "ms") if default_latency >= 1e-3 else (1e6, "us")
    xs = [0] + [n for n, _ in curve]
    ys = [default_latency * scale] + [v * scale for _, v in curve]
    ax.step(xs, ys, where="post", label="best measured (tuned where faster)")
    ax.axhline(default_latency * scale, color="gray", linestyle="--", linewidth=1, label="default schedules")
    if final is not None:
        ax.plot([xs[-1]], [final * scale], "o", color="tab:red", label="what a build uses (re-timed side by side)")
    ax.set_xlabel("trials")
    ax.set_ylabel(f"model kernel time ({unit}, sum over kernels)")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    atomic_write(base + ".png", lambda stream: fig.savefig(stream, format="png"), suffix=".png")
    plt.close(fig)
    return base + ".png"


def _write_json(path: str, value: Any) -> None:
    atomic_write(path, lambda stream: stream.write(json.dumps(value).encode()), suffix=".json")
