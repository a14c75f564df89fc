"""A tuning run that crashes or is interrupted keeps its records; the same command resumes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from schedules.tuning.database import TuningDatabase

from .tiny_model import INPUT, write_model

TRIALS = 10


def _records(db: str) -> list[str]:
    if not os.path.isdir(db):
        return []
    return [r["candidate"] for _, _, entry in TuningDatabase(db, create=False).entries() for r in entry["records"]]


def _start(model: str, db: str) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "aotnn.cli", "tune", model, "--input", INPUT, "--trials", str(TRIALS),
           "--batch", "2", "--seed", "3", "--db", db]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _wait_for_records(proc: subprocess.Popen, db: str, count: int, limit: float = 240.0) -> None:
    deadline = time.monotonic() + limit
    while len(_records(db)) < count:
        assert proc.poll() is None, f"tuning ended early:\n{proc.stdout.read()}"
        assert time.monotonic() < deadline, "no records in time"
        time.sleep(0.1)


def test_crash_and_ctrl_c_keep_records_and_rerun_resumes(tmp_path):
    model = write_model(tmp_path)
    db = str(tmp_path / "db")
    proc = _start(model, db)
    try:
        # 1. A crash: the whole process tree killed at once.
        _wait_for_records(proc, db, 2)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
        after_crash = _records(db)
        assert 2 <= len(after_crash) < TRIALS

        # 2. Ctrl-C: the run stops cleanly, says how to resume, exits 130.
        proc = _start(model, db)
        _wait_for_records(proc, db, len(after_crash) + 2)
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
        assert proc.returncode == 130, output
        assert "run the same command again to resume" in output
        after_interrupt = _records(db)
        assert len(after_crash) + 2 <= len(after_interrupt) < TRIALS
        assert after_interrupt[:len(after_crash)] == after_crash

        # 3. The same command again: only the rest is measured, nothing twice.
        proc = _start(model, db)
        output, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, output
        assert f"({len(after_interrupt)} already in" in output
        final = _records(db)
        assert len(final) == TRIALS
        assert len(set(final)) == TRIALS, "a candidate was measured twice"
        assert "model (sum of kernels)" in output  # the final table
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(60)
