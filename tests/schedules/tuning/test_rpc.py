"""Measuring over TVM's RPC: a tracker and two servers on loopback, a small trial budget."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from .tiny_model import capture

KEY = "aotnn-loopback"
TRIALS = 6


def _free_port_range(width: int = 20) -> int:
    """A port P such that P..P+width-1 look free (the tracker and servers bind within a range)."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + width >= 65535:
            continue
        free = True
        for port in range(base, base + width):
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    free = False
                    break
        if free:
            return base
    raise RuntimeError("no free port range")


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *args], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)


@contextlib.contextmanager
def loopback_fleet(servers: int = 2, limit: float = 300.0):
    """A tracker and ``servers`` RPC servers on 127.0.0.1; yields the tracker's HOST:PORT; always stops them."""
    from tvm import rpc

    tracker_port = _free_port_range()
    procs = [_spawn("tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(tracker_port),
                    "--port-end", str(tracker_port + 1))]
    try:
        for _ in range(servers):
            port = _free_port_range()
            procs.append(_spawn("tvm.exec.rpc_server", "--tracker", f"127.0.0.1:{tracker_port}", "--key", KEY,
                                "--host", "127.0.0.1", "--port", str(port), "--port-end", str(port + 1)))
        deadline = time.monotonic() + limit
        while True:
            assert all(p.poll() is None for p in procs), "an RPC process exited"
            with contextlib.suppress(Exception):
                summary = rpc.connect_tracker("127.0.0.1", tracker_port).summary()
                if summary["queue_info"].get(KEY, {}).get("free", 0) >= servers:
                    break
            assert time.monotonic() < deadline, "the RPC servers did not register in time"
            time.sleep(1.0)
        yield f"127.0.0.1:{tracker_port}"
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        for proc in procs:
            proc.wait(30)


def test_measures_on_rpc_servers(tmp_path):
    import schedules
    from schedules.tuning import TuningDatabase

    mod, names = capture()
    db = str(tmp_path / "db")
    with loopback_fleet() as tracker:
        # Batches of 2 over two tasks: one task's batch is timed on the servers while the next is searched.
        result = schedules.tune(mod, names, db=db, trials=TRIALS, batch=2, rpc_tracker=tracker,
                                device_key=KEY, progress=False, seed=1)
    entries = [entry for _, _, entry in TuningDatabase(db).entries()]
    records = [r for entry in entries for r in entry["records"]]
    assert len(records) == TRIALS == result.trials
    assert all(r["runner"] == f"rpc {KEY}@{tracker}" for r in records)
    assert sum(r["latency"] is not None and r["latency"] > 0 for r in records) >= TRIALS // 2, records
    assert all(entry["default"]["latency"] > 0 for entry in entries), "the baseline is timed on the servers too"


def test_rpc_arguments_are_checked(tmp_path):
    import schedules

    mod, names = capture()
    with pytest.raises(ValueError, match="rpc_tracker and device_key"):
        schedules.tune(mod, names, db=str(tmp_path / "db"), rpc_tracker="127.0.0.1:9190", progress=False)
    with pytest.raises(ValueError, match="HOST:PORT"):
        schedules.tune(mod, names, db=str(tmp_path / "db"), rpc_tracker="nohost", device_key=KEY, progress=False)
