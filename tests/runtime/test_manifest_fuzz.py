"""Fuzz: deterministic random mutations of a real artifact's manifest.json never crash, hang or touch
a file outside the artifact; every refusal is an ArtifactError naming the field.

Mutations run in subprocesses, BATCH per process (a crash kills only its process; the worker prints
``start N`` before each mutation, so a signal or a timeout names the mutation). A mutation that
loads is exercised further: every entry runs on zeros, then ``save_weights()`` rewrites the artifact
(the worker restores it before the next mutation).
"""
from __future__ import annotations

import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
from typing import Any

import pytest

import aotnn_runtime

MUTATIONS = 300
BATCH = 50
SEED = 20261128
PROCESS_TIMEOUT_S = 120
WORKER = os.path.join(os.path.dirname(__file__), "manifest_fuzz_worker.py")
# a refusal names a field: "manifest.json: entries.predict.steps[3].args[1]: ..." (or the executor's
# own checks after validation: "entry 'predict': kernel 'x' is not in the kernel library")
NAMES_A_FIELD = re.compile(r"manifest\.json: [\w.\[\]' -]+|entry '[^']+': kernel ")
STRINGS = ["../canary.bin", "../outside/secret.bin", "/etc/hostname", "", "x", "a/../../canary.bin", "kernels.so"]
NUMBERS = [-1, 0, 4, 63, 1 << 31, 1 << 62, 10 ** 12, -(1 << 63)]
OTHER_TYPES = [None, True, 1.5, "7", [], {}, [1, 2], {"kind": "input"}]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value (the root excluded)."""
    found = []
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return found
    for key, child in items:
        found.append(prefix + (key,))
        found += _paths(child, prefix + (key,))
    return found


def _mutate(manifest: dict, rng: random.Random) -> tuple[str, dict]:
    """One mutation of one field: (description, mutated copy)."""
    mutated = copy.deepcopy(manifest)
    path = rng.choice(_paths(mutated))
    parent = mutated
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    value = parent[key]
    choice = rng.random()
    if choice < 0.15:
        new, what = None, "delete"
    elif isinstance(value, bool) or choice < 0.35:
        new = rng.choice(OTHER_TYPES)
        what = f"type -> {new!r}"
    elif isinstance(value, int):
        new = rng.choice(NUMBERS + [-value, value + 4, value + 64, value * 1000, value - 1])
        what = f"number -> {new!r}"
    elif isinstance(value, str):
        new = rng.choice(STRINGS)
        what = f"string -> {new!r}"
    elif isinstance(value, list) and value:
        new = value[:rng.randrange(len(value))] if rng.random() < 0.7 else value + value[-1:]
        what = f"list of {len(value)} -> {len(new)} items"
    else:
        new = rng.choice(OTHER_TYPES)
        what = f"type -> {new!r}"
    if what == "delete":
        del parent[key]
    else:
        parent[key] = new
    return f"{'/'.join(map(str, path))}: {what}", mutated


def _mutations(manifest: dict) -> list[tuple[int, tuple[str, str]]]:
    rng = random.Random(SEED)
    result = []
    for index in range(MUTATIONS):
        description, mutated = _mutate(manifest, rng)
        result.append((index, (description, json.dumps(mutated, indent=1))))
    return result


def _run_batch(folder, artifact: str, pristine: str, batch: list) -> tuple[list[dict], str | None]:
    """Run one batch in a subprocess: (results, failure) where failure names a crash or hang."""
    batch_file = folder / f"batch{batch[0][0]}.json"
    batch_file.write_text(json.dumps([[index, list(pair)] for index, pair in batch]))
    env = dict(os.environ)
    runtime_root = os.path.dirname(os.path.dirname(aotnn_runtime.__file__))
    env["PYTHONPATH"] = os.pathsep.join([runtime_root, env.get("PYTHONPATH", "")])
    env.setdefault("AOTNN_NUM_THREADS", "1")
    try:
        proc = subprocess.run([sys.executable, WORKER, artifact, pristine, str(batch_file)], env=env,
                              capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
        stdout, failure = proc.stdout, None
        if proc.returncode != 0:
            failure = f"exit status {proc.returncode}: {proc.stderr[-800:]}"
    except subprocess.TimeoutExpired as err:
        stdout = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        failure = f"hang (no exit within {PROCESS_TIMEOUT_S} s)"
    results = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    if failure is not None:
        started = [int(line.split()[1]) for line in stdout.splitlines() if line.startswith("start ")]
        culprit = started[-1] if started else batch[0][0]
        description = dict(batch)[culprit][0]
        failure = f"mutation {culprit} ({description}): {failure}"
    return results, failure


@pytest.fixture
def fuzz_site(lenet_artifact, tmp_path):
    """An artifact copy, a pristine copy to restore from, and canary files next to the artifact."""
    site = tmp_path / "site"
    site.mkdir()
    artifact = site / "lenet.aot"
    shutil.copytree(lenet_artifact[0], artifact)
    pristine = tmp_path / "pristine.aot"
    shutil.copytree(lenet_artifact[0], pristine)
    (site / "canary.bin").write_bytes(b"canary")
    (site / "outside").mkdir()
    (site / "outside" / "secret.bin").write_bytes(b"secret")
    return site, artifact, pristine


def test_mutated_manifests_never_crash_hang_or_touch_outside(fuzz_site, tmp_path):
    site, artifact, pristine = fuzz_site
    manifest = json.loads((artifact / "manifest.json").read_text())
    mutations = _mutations(manifest)
    results, failures = [], []
    for start in range(0, len(mutations), BATCH):
        batch_results, failure = _run_batch(tmp_path, str(artifact), str(pristine), mutations[start:start + BATCH])
        results += batch_results
        if failure is not None:
            failures.append(failure)
    assert not failures, failures  # crashes (a signal) and hangs, each naming its mutation
    assert len(results) == MUTATIONS
    unexpected = [r for r in results if r["outcome"].startswith("other")]
    assert not unexpected, unexpected[:5]
    # a manifest that loads may still disagree with the compiled kernels (an input's shape): the
    # kernel's own argument check reports it ("... when calling: `kernel(...)`"), or the runtime's
    # InputError (a parameter with no stored value)
    run_errors = [r for r in results if r["outcome"].startswith("run_error")]
    unchecked = [r for r in run_errors if not (r["outcome"].startswith("run_error InputError")
                                               or "when calling" in r["outcome"])]
    assert not unchecked, unchecked[:5]
    unnamed = [r for r in results if r["outcome"] == "artifact_error" and not NAMES_A_FIELD.search(r["message"])]
    assert not unnamed, unnamed[:5]
    touched = [r for r in results if r["outside"]]
    assert not touched, touched[:5]
    assert (site / "canary.bin").read_bytes() == b"canary"
    assert (site / "outside" / "secret.bin").read_bytes() == b"secret"
    assert sorted(os.listdir(site)) == ["canary.bin", "lenet.aot", "outside"]
    refused = sum(r["outcome"] == "artifact_error" for r in results)
    assert refused > MUTATIONS // 2  # the mutations do reach the validator (most fields matter)
