"""A few hundred deterministic mutations of a checkpoint MindSpore wrote (byte changes, bit flips,
truncations, insertions, deletions, repeated spans), each loaded with ``load_checkpoint`` in a
subprocess: no crash, no hang, and every failure is a ValueError/RuntimeError naming its file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import aotnn
import aotnn_runtime

FIXTURE = Path(__file__).parent / "fixtures" / "small_mindspore.ckpt"
MUTANTS = 320
BATCHES = 2
BATCH_TIMEOUT_S = 120


def _mutate(data: bytes, rng: np.random.Generator) -> bytes:
    buf = bytearray(data)
    kind = int(rng.integers(7))
    pos = int(rng.integers(len(buf)))
    if kind == 0:  # one byte replaced
        buf[pos] = int(rng.integers(256))
    elif kind == 1:  # one bit flipped
        buf[pos] ^= 1 << int(rng.integers(8))
    elif kind == 2:  # truncated
        del buf[pos:]
    elif kind == 3:  # random bytes inserted
        buf[pos:pos] = rng.integers(256, size=int(rng.integers(1, 9)), dtype=np.uint8).tobytes()
    elif kind == 4:  # a span deleted
        del buf[pos:pos + int(rng.integers(1, 17))]
    elif kind == 5:  # a span repeated
        end = pos + int(rng.integers(1, 33))
        buf[pos:pos] = buf[pos:end]
    else:  # a run of 0xff: varints that never end or claim huge lengths
        buf[pos:pos] = b"\xff" * int(rng.integers(1, 12))
    return bytes(buf)


def _env() -> dict:
    roots = {str(Path(aotnn.__file__).resolve().parents[1]), str(Path(aotnn_runtime.__file__).resolve().parents[1])}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*sorted(roots), env.get("PYTHONPATH", "")])
    return env


def _load_in_subprocess(paths: list) -> list:
    worker = Path(__file__).parent / "ckpt_load_worker.py"
    try:
        proc = subprocess.run([sys.executable, "-X", "faulthandler", str(worker), *paths], capture_output=True,
                              text=True, timeout=BATCH_TIMEOUT_S, env=_env())
    except subprocess.TimeoutExpired as err:
        lines = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        started = [json.loads(line)["start"] for line in lines.splitlines() if '"start"' in line]
        pytest.fail(f"loading hung (over {BATCH_TIMEOUT_S} s) at {started[-1] if started else paths[0]}")
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    results = [r for r in records if "start" not in r]
    assert proc.returncode == 0 and len(results) == len(paths), (
        f"the loader crashed (exit code {proc.returncode}) at {records[-1] if records else paths[0]}:\n"
        f"{proc.stderr[-3000:]}")
    return results


def test_mutated_checkpoints_fail_cleanly(tmp_path):
    data = FIXTURE.read_bytes()
    rng = np.random.default_rng(20261128)
    paths, mutants = [], set()
    for index in range(MUTANTS):
        mutant = _mutate(data, rng)
        mutants.add(mutant)
        path = tmp_path / f"m{index:03d}.ckpt"
        path.write_bytes(mutant)
        paths.append(str(path))
    assert len(mutants) > MUTANTS * 0.9  # the mutations differ from each other

    results = []
    for batch in np.array_split(np.array(paths), BATCHES):
        results += _load_in_subprocess(list(batch))

    failures = [r for r in results if "error" in r]
    unclean = [r for r in failures if not r["value_or_runtime_error"] or r["path"] not in r["message"]]
    assert not unclean, f"{len(unclean)} failures are not a ValueError/RuntimeError naming the file: {unclean[:3]}"
    # Most mutations break the file; the few that keep it well-formed load (e.g. a changed weight byte).
    assert len(failures) > MUTANTS // 2
    assert any("loaded" in r for r in results)


def test_the_unmutated_fixture_loads_in_the_worker(tmp_path):
    (result,) = _load_in_subprocess([str(FIXTURE)])
    assert result.get("loaded") == ["bias", "epoch_num", "lr", "note", "weight"], result
