"""The tuning database: a directory of JSON files, one per (target, workload).

Layout::

    DIR/aotnn-tuning.json                    format marker
    DIR/<target key>/<workload key>.json     one workload on one target

A workload file holds the workload (its TIR, name, FLOPs), the baseline (the default
schedule's latency, with a fingerprint of that default schedule), and every measured
candidate: its MetaSchedule trace, run times and a hash of the scheduled kernel. Keys are
structural hashes, so the same kernel from another model or another machine finds its
records: the files are portable, and two databases merge file by file.

Every change is a read-modify-write of one file under an exclusive lock on ``DIR/.lock``,
written to a temporary file and renamed over the old one: concurrent writers (two tuning
runs, a merge) never lose each other's records, and readers never see half a file.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from aotnn_runtime.weights import atomic_write

FORMAT = "aotnn-tuning-db"
VERSION = 1
MARKER = "aotnn-tuning.json"
LOCK = ".lock"


class DatabaseError(ValueError):
    """A path that is not a tuning database, or a file in it that cannot be read."""


def target_key(target: Mapping[str, Any]) -> str:
    """A readable, stable directory name for a target dict (kind, triple, CPU, features, cores)."""
    parts = [str(target.get("kind", "llvm")), str(target.get("mtriple", "")), str(target.get("mcpu", "")),
             "+".join(sorted(str(a).lstrip("+") for a in target.get("mattr", []) or [])),
             f"{target['num-cores']}c" if target.get("num-cores") else ""]
    slug = "-".join(p for p in parts if p)
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", slug)


def canonical_target(target: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("kind", "mtriple", "mcpu", "mattr", "num-cores", "arch")
    return {k: target[k] for k in keep if k in target and target[k] not in (None, "", [])}


def record_latency(record: Mapping[str, Any]) -> float:
    value = record.get("latency")
    return float(value) if value is not None else float("inf")


def best_record(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """The fastest successfully measured candidate of a workload entry."""
    measured = [r for r in entry.get("records", []) if r.get("latency") is not None]
    return min(measured, key=record_latency) if measured else None


def _merge_entries(base: dict[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``new``'s records added (deduplicated by candidate hash); newer baselines win."""
    if base is None:
        merged = {k: v for k, v in new.items() if k != "records"}
        merged["records"] = []
    else:
        merged = dict(base)
        for key in ("workload", "target"):
            merged.setdefault(key, new.get(key))
    for key in ("default", "verified"):
        if new.get(key) and (not merged.get(key) or new[key].get("time", 0) >= merged[key].get("time", 0)):
            merged[key] = new[key]
    seen = {r["candidate"] for r in merged["records"]}
    records = list(merged["records"])
    for record in new.get("records", []):
        if record["candidate"] not in seen:
            seen.add(record["candidate"])
            records.append(record)
    merged["records"] = records
    merged["format"], merged["version"] = FORMAT, VERSION
    return merged


class TuningDatabase:
    """A tuning database directory.

    Args:
        path: the directory (created on first write).
        create: create the directory now if it is missing.
    Raises:
        DatabaseError: ``path`` exists but is not a tuning database directory.
    """

    def __init__(self, path: str | os.PathLike, create: bool = True):
        self.path = os.fspath(path)
        if os.path.exists(self.path) and not os.path.isdir(self.path):
            raise DatabaseError(f"tuning_db: expected a directory, got the file {self.path!r}")
        marker = os.path.join(self.path, MARKER)
        if os.path.isdir(self.path) and os.listdir(self.path) and not os.path.isfile(marker):
            names = [n for n in os.listdir(self.path) if not n.startswith(".")]
            if any(os.path.isdir(os.path.join(self.path, n)) for n in names):
                raise DatabaseError(f"tuning_db: {self.path!r} is not an aotnn tuning database (no {MARKER})")
        if create:
            self._ensure()

    def __repr__(self) -> str:
        return f"TuningDatabase({self.path!r})"

    def _ensure(self) -> None:
        os.makedirs(self.path, exist_ok=True)
        marker = os.path.join(self.path, MARKER)
        if not os.path.isfile(marker):
            _atomic_write(marker, {"format": FORMAT, "version": VERSION})

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the database's exclusive write lock (across processes)."""
        self._ensure()
        with open(os.path.join(self.path, LOCK), "a+") as stream:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(stream.fileno(), fcntl.LOCK_UN)

    def _file(self, target: Mapping[str, Any], workload: str) -> str:
        return os.path.join(self.path, target_key(target), f"{workload}.json")

    def read(self, target: Mapping[str, Any], workload: str) -> dict[str, Any] | None:
        """The entry of ``workload`` on ``target``, or None."""
        return _read(self._file(target, workload))

    def update(self, target: Mapping[str, Any], workload: str, *, info: Mapping[str, Any] | None = None,
               records: Sequence[Mapping[str, Any]] = (), default: Mapping[str, Any] | None = None,
               verified: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Add to the entry of ``workload`` on ``target`` and write it back atomically.

        Args:
            info: the workload's description (kept from the first writer).
            records: measured candidates; ones already present (same candidate hash) are skipped.
            default: the baseline measurement of the default schedule (replaces an older one).
            verified: a side-by-side re-measurement of the best candidate against the default.
        Returns:
            the entry as written.
        """
        now = time.time()
        new = {"format": FORMAT, "version": VERSION, "target": canonical_target(target),
               "workload": dict(info or {}), "records": [dict(r) for r in records]}
        if default is not None:
            new["default"] = {"time": now, **default}
        if verified is not None:
            new["verified"] = {"time": now, **verified}
        path = self._file(target, workload)
        with self.lock():
            merged = _merge_entries(_read(path), new)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _atomic_write(path, merged)
        return merged

    def entries(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """Every (target key, workload key, entry) in the database."""
        for tkey, name, path in self._workload_files():
            entry = _read(path)
            if entry is not None:
                yield tkey, name[:-5], entry

    def _workload_files(self) -> Iterator[tuple[str, str, str]]:
        """(target key, file name, path) of every workload file, in a stable order."""
        if not os.path.isdir(self.path):
            return
        for tkey in sorted(os.listdir(self.path)):
            folder = os.path.join(self.path, tkey)
            if tkey.startswith(".") or not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                if name.endswith(".json") and not name.startswith("."):
                    yield tkey, name, os.path.join(folder, name)

    def merge_from(self, other: TuningDatabase) -> int:
        """Add every record of ``other``; returns how many records were new here."""
        added = 0
        for tkey, wkey, entry in other.entries():
            path = os.path.join(self.path, tkey, f"{wkey}.json")
            with self.lock():
                base = _read(path)
                before = len(base["records"]) if base else 0
                merged = _merge_entries(base, entry)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                _atomic_write(path, merged)
            added += len(merged["records"]) - before
        return added

    def num_records(self) -> int:
        return sum(len(entry.get("records", [])) for _, _, entry in self.entries())

    def content_hash(self) -> str:
        """A SHA-256 over every workload file (name and bytes): part of artifact cache keys."""
        digest = hashlib.sha256()
        for tkey, name, path in self._workload_files():
            digest.update(f"{tkey}/{name}\0".encode())
            digest.update(_file_digest(path).encode())
        return digest.hexdigest()


_DIGESTS: dict[str, tuple[tuple[int, int, int], str]] = {}


def _file_digest(path: str) -> str:
    stat = os.stat(path)
    stamp = (stat.st_ino, stat.st_size, stat.st_mtime_ns)  # files are replaced, never edited in place
    cached = _DIGESTS.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    with open(path, "rb") as stream:
        digest = hashlib.sha256(stream.read()).hexdigest()
    _DIGESTS[path] = (stamp, digest)
    return digest


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as stream:
            entry = json.load(stream)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise DatabaseError(f"tuning_db: cannot read {path!r}: {err}") from None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT:
        raise DatabaseError(f"tuning_db: {path!r} is not an aotnn tuning record file")
    if entry.get("version", 0) > VERSION:
        raise DatabaseError(f"tuning_db: {path!r} has format version {entry['version']}; "
                            f"this aotnn reads up to {VERSION}")
    return entry


def _atomic_write(path: str, value: Any) -> None:
    atomic_write(path, lambda stream: stream.write(json.dumps(value, separators=(",", ":")).encode()), suffix=".json")


def open_database(path: str | os.PathLike | TuningDatabase | None) -> TuningDatabase | None:
    """``path`` as a TuningDatabase (None stays None)."""
    if path is None or isinstance(path, TuningDatabase):
        return path
    return TuningDatabase(path)
