"""Per-kernel timings of an entry point (:meth:`Module.profile`): records, a table, a Chrome trace.

The step runner reads CLOCK_MONOTONIC before the first kernel and after each (see
``runtime/c/aotnn_steps.c``); a kernel's time is the difference of its two readings. FLOPs and
bytes come from the manifest (``schedules/kernel_costs.py`` counts them when the artifact is
built); artifacts built before then show none.
"""
from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .owned_files import atomic_write


@dataclass(frozen=True)
class KernelRecord:
    """One step of an entry point, timed over the repeats of a profile.

    Attributes:
        step: the step's position in the entry point.
        kernel: the kernel's name (the manifest's ``steps[step].kernel``).
        durations_ns: the kernel's time in each repeat, in nanoseconds.
        starts_ns: when it started in each repeat, in nanoseconds after the first repeat began.
        flops: floating-point operations per call, or None where the manifest has no count.
        bytes: bytes of the tensors it reads and writes, or None where the manifest has no count.
    """

    step: int
    kernel: str
    durations_ns: tuple[int, ...]
    starts_ns: tuple[int, ...]
    flops: int | None = None
    bytes: int | None = None

    @property
    def median_ms(self) -> float:
        """The median time over the repeats, in milliseconds."""
        return statistics.median(self.durations_ns) / 1e6

    @property
    def gflops(self) -> float | None:
        """Achieved GFLOP/s at the median time (None without a FLOP count or a measurable time)."""
        return None if not self.flops or self.median_ms <= 0 else self.flops / (self.median_ms * 1e6)

    @property
    def gbytes_per_s(self) -> float | None:
        """Achieved GB/s at the median time, counting each tensor once (a lower bound)."""
        return None if not self.bytes or self.median_ms <= 0 else self.bytes / (self.median_ms * 1e6)


def kernel_records(steps: Sequence[Mapping[str, Any]], timestamps: np.ndarray) -> list[KernelRecord]:
    """Records from the manifest's steps and the runner's timestamps (one row per repeat, step
    count + 1 columns: see ``NativeSteps.timing``), in step order."""
    durations = np.diff(timestamps, axis=1)
    starts = timestamps[:, :-1] - timestamps[0, 0]
    return [KernelRecord(index, step["kernel"], tuple(int(t) for t in durations[:, index]),
                         tuple(int(t) for t in starts[:, index]), step.get("flops"), step.get("bytes"))
            for index, step in enumerate(steps)]


def _quantity(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f}{prefix}{unit}"
    return f"{value:.0f}{unit}"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_table(records: Sequence[KernelRecord], call_ms: float | None = None) -> str:
    """The records as a text table, slowest kernel first: median time, share of the kernels' total,
    FLOPs, GFLOP/s, bytes and GB/s; ``call_ms`` (the whole call's median) adds a last line."""
    total = sum(record.median_ms for record in records)
    header = ("#", "kernel", "time ms", "share", "FLOPs", "GFLOP/s", "bytes", "GB/s")
    rows = [(str(r.step), r.kernel, f"{r.median_ms:.4f}", f"{100 * r.median_ms / total:.1f}%" if total else "-",
             _quantity(r.flops), _rate(r.gflops), _quantity(r.bytes, "B"), _rate(r.gbytes_per_s))
            for r in sorted(records, key=lambda r: r.median_ms, reverse=True)]
    flops = [r.flops for r in records]
    total_flops = sum(flops) if all(f is not None for f in flops) and flops else None
    rows.append(("", "total (kernels)", f"{total:.4f}", "100.0%" if total else "-", _quantity(total_flops),
                 _rate(total_flops / (total * 1e6) if total_flops and total else None), "", ""))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 1 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in [header, *rows]]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    if call_ms is not None:
        lines.append(f"whole call: {call_ms:.4f} ms median (kernels {total:.4f} ms, "
                     f"the rest is the call's own work: input checks, copies, Python)")
    return "\n".join(lines)


def chrome_trace(records: Sequence[KernelRecord], name: str = "aotnn") -> dict[str, Any]:
    """The records as a Chrome trace (``chrome://tracing``, Perfetto): one complete event
    (``"ph": "X"``) per kernel call, ``ts``/``dur`` in microseconds."""
    events = [{"name": r.kernel, "cat": "kernel", "ph": "X", "pid": 0, "tid": 0, "ts": start / 1e3,
               "dur": duration / 1e3, "args": {"step": r.step, "repeat": repeat, "flops": r.flops, "bytes": r.bytes}}
              for r in records for repeat, (start, duration) in enumerate(zip(r.starts_ns, r.durations_ns))]
    events.sort(key=lambda event: event["ts"])
    metadata = {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": name}}
    return {"traceEvents": [metadata, *events], "displayTimeUnit": "ms"}


def write_trace(path: str | os.PathLike, records: Sequence[KernelRecord], name: str = "aotnn") -> None:
    """Write :func:`chrome_trace` of ``records`` to ``path`` as JSON (atomically)."""
    text = json.dumps(chrome_trace(records, name)).encode()
    atomic_write(os.fspath(path), lambda stream: stream.write(text), ".json")
