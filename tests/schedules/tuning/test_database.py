"""The tuning database: records per (target, workload), merging, concurrent writers, content hash."""
from __future__ import annotations

import json
import multiprocessing
import os

import pytest
from click.testing import CliRunner

from schedules.tuning.database import DatabaseError, TuningDatabase, best_record, target_key

TARGET = {"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "znver3", "num-cores": 2}
OTHER = {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}


def record(candidate: str, latency: float | None) -> dict:
    return {"candidate": candidate, "trace": [[], []], "run_secs": None if latency is None else [latency] * 3,
            "latency": latency, "error": None if latency else "failed", "runner": "test", "time": 1.0}


def test_roundtrip_and_dedupe(tmp_path):
    db = TuningDatabase(tmp_path / "db")
    assert db.read(TARGET, "abc") is None
    db.update(TARGET, "abc", info={"name": "k"}, records=[record("c1", 2e-5), record("c2", None)])
    db.update(TARGET, "abc", records=[record("c1", 1e-9), record("c3", 1e-5)],
              default={"latency": 3e-5, "fingerprint": "f"})
    entry = db.read(TARGET, "abc")
    assert [r["candidate"] for r in entry["records"]] == ["c1", "c2", "c3"]
    assert entry["records"][0]["latency"] == 2e-5  # a candidate is recorded once: the first measurement stays
    assert best_record(entry)["candidate"] == "c3"
    assert entry["default"]["latency"] == 3e-5 and entry["workload"]["name"] == "k"
    assert db.read(OTHER, "abc") is None  # records are per target
    assert db.num_records() == 3
    assert not [n for n in os.listdir(tmp_path / "db" / target_key(TARGET)) if n.startswith(".tmp")]


def test_not_a_database(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatabaseError, match="expected a directory"):
        TuningDatabase(tmp_path / "file")
    (tmp_path / "other" / "sub").mkdir(parents=True)
    with pytest.raises(DatabaseError, match="not an aotnn tuning database"):
        TuningDatabase(tmp_path / "other")
    db = TuningDatabase(tmp_path / "db")
    folder = tmp_path / "db" / target_key(TARGET)
    folder.mkdir()
    (folder / "bad.json").write_text("{not json")
    with pytest.raises(DatabaseError, match="cannot read"):
        db.read(TARGET, "bad")


def test_content_hash_tracks_records(tmp_path):
    db = TuningDatabase(tmp_path / "db")
    empty = db.content_hash()
    db.update(TARGET, "abc", records=[record("c1", 1e-5)])
    one = db.content_hash()
    assert one != empty and db.content_hash() == one
    db.update(TARGET, "abc", records=[record("c1", 1e-5)])  # nothing new: same content
    assert db.content_hash() == one
    db.update(TARGET, "abc", records=[record("c2", 1e-5)])
    assert db.content_hash() != one


def test_merge(tmp_path):
    a, b = TuningDatabase(tmp_path / "a"), TuningDatabase(tmp_path / "b")
    a.update(TARGET, "w1", records=[record("c1", 1e-5), record("c2", 2e-5)], default={"latency": 3e-5, "fingerprint": "f"})
    b.update(TARGET, "w1", records=[record("c2", 2e-5), record("c3", 5e-6)])
    b.update(OTHER, "w2", records=[record("c9", 1e-3)])
    out = TuningDatabase(tmp_path / "out")
    assert out.merge_from(a) == 2
    assert out.merge_from(b) == 2  # c3 and c9; c2 is already there
    assert out.merge_from(b) == 0
    assert sorted(r["candidate"] for r in out.read(TARGET, "w1")["records"]) == ["c1", "c2", "c3"]
    assert best_record(out.read(TARGET, "w1"))["candidate"] == "c3"
    assert out.read(TARGET, "w1")["default"]["latency"] == 3e-5
    assert [r["candidate"] for r in out.read(OTHER, "w2")["records"]] == ["c9"]


def test_merge_command(tmp_path):
    from aotnn.cli import main

    a, b = TuningDatabase(tmp_path / "a"), TuningDatabase(tmp_path / "b")
    a.update(TARGET, "w1", records=[record("c1", 1e-5)])
    b.update(TARGET, "w1", records=[record("c2", 1e-5)])
    result = CliRunner().invoke(main, ["tune", "--merge", str(tmp_path / "a"), str(tmp_path / "b"),
                                       "-o", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "2 records" in result.output
    assert TuningDatabase(tmp_path / "c").num_records() == 2
    result = CliRunner().invoke(main, ["tune", "--merge", str(tmp_path / "missing"), "-o", str(tmp_path / "d")])
    assert result.exit_code != 0 and "no such tuning database" in result.output


def _writer(path: str, worker: int, count: int) -> None:
    db = TuningDatabase(path)
    for i in range(count):
        db.update(TARGET, "shared", records=[record(f"w{worker}-{i}", 1e-5 * (i + 1))])


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "db")
    TuningDatabase(path)
    context = multiprocessing.get_context("fork")  # the writers only touch files
    workers = [context.Process(target=_writer, args=(path, w, 25)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    entry = TuningDatabase(path).read(TARGET, "shared")
    assert len(entry["records"]) == 100
    assert len({r["candidate"] for r in entry["records"]}) == 100
    with open(os.path.join(path, target_key(TARGET), "shared.json")) as stream:
        json.load(stream)  # the file on disk is whole
