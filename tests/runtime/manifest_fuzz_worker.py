"""Subprocess side of test_manifest_fuzz.py: loads an artifact under each mutated manifest of a batch.

Usage: python manifest_fuzz_worker.py ARTIFACT_DIR PRISTINE_DIR BATCH.json

For each mutation it prints ``start N`` before touching anything and one JSON line after, so a
crash (a signal) or a hang names the mutation that caused it. An audit hook records every file
opened, loaded, written or removed outside ARTIFACT_DIR but inside its parent folder (where the
canary files lie).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import traceback

import numpy as np

import aotnn_runtime

_WATCH = {"open", "os.remove", "os.rename", "os.replace", "os.unlink", "os.truncate", "ctypes.dlopen",
          "shutil.copyfile", "os.symlink", "os.mkdir", "os.rmdir"}


class Monitor:
    """Paths touched outside the artifact but inside its parent folder."""

    def __init__(self, artifact: str):
        self.artifact = os.path.realpath(artifact)
        self.parent = os.path.dirname(self.artifact)
        self.active = True
        self.outside: list[str] = []

    def __call__(self, event: str, args: tuple) -> None:
        if not self.active or event not in _WATCH or not args or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        path = os.path.realpath(os.fsdecode(args[0]) if not isinstance(args[0], os.PathLike) else os.fspath(args[0]))
        inside = os.path.commonpath([self.artifact, path]) == self.artifact
        if not inside and os.path.commonpath([self.parent, path]) == self.parent:
            self.outside.append(f"{event} {path}")


def restore(artifact: str, pristine: str) -> None:
    shutil.rmtree(artifact)
    shutil.copytree(pristine, artifact)


def exercise(artifact: str) -> str:
    """Load, run every entry on zeros, save the weights into the artifact: what a user would do."""
    module = aotnn_runtime.load(artifact)
    for name in module.entry_points:
        point = module[name]
        inputs = [np.zeros(spec["shape"], spec["dtype"]) for spec in point.inputs]
        try:
            point(*inputs)
        except aotnn_runtime.ArtifactError:
            raise
        except Exception as err:  # noqa: BLE001 - a kernel's own argument check (TVM reports a mismatch)
            return f"run_error {type(err).__name__}: {str(err)[:200]}"
    module.save_weights()
    return "ok"


def main() -> None:
    artifact, pristine, batch_file = sys.argv[1:4]
    with open(batch_file, encoding="utf-8") as stream:
        batch = json.load(stream)
    monitor = Monitor(artifact)
    sys.addaudithook(monitor)
    for index, (description, text) in batch:
        print(f"start {index}", flush=True)
        monitor.active = False
        with open(os.path.join(artifact, "manifest.json"), "w", encoding="utf-8") as stream:
            stream.write(text)
        monitor.active, monitor.outside = True, []
        try:
            outcome, message = exercise(artifact), ""
        except aotnn_runtime.ArtifactError as err:
            outcome, message = "artifact_error", str(err)
        except Exception as err:  # noqa: BLE001 - reported to the test, which fails on it
            outcome, message = f"other {type(err).__name__}", "".join(traceback.format_exception(err))[-600:]
        monitor.active = False
        restore(artifact, pristine)
        print(json.dumps({"index": index, "mutation": description, "outcome": outcome, "message": message,
                          "outside": monitor.outside}), flush=True)


if __name__ == "__main__":
    main()
