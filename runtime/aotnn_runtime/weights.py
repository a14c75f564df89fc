"""An artifact's stored tensors: loaded once, updated in place by training steps, saved atomically."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np

from .buffers import aligned_empty
from .errors import ArtifactError, InputError
from .manifest import MANIFEST_FILE, file_sha256
from .validate import CONST_PREFIX, resolve_inside


class WeightStore(dict):
    """Arrays by name; ``version`` grows on every in-place update, so steps that depend on the
    weights only (re-layouts, device uploads) know to run again."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.version = 0

    def __setitem__(self, name: str, array: np.ndarray) -> None:
        super().__setitem__(name, array)
        self.version += 1

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self.version += 1

    def parameter_names(self) -> list[str]:
        """Names of the stored parameters (weights, statistics, optimizer state), constants excluded."""
        return [name for name in self if not name.startswith(CONST_PREFIX)]


def read_weights(artifact_dir: str, manifest: Mapping[str, Any]) -> WeightStore:
    """Load the weights file the manifest names into 64-byte aligned arrays.

    Raises:
        ArtifactError: the file is missing or shorter than its table says.
    """
    table = manifest.get("weights")
    store = WeightStore()
    if not table:
        return store
    path = resolve_inside(artifact_dir, table["file"], "weights.file")
    if not os.path.isfile(path):
        raise ArtifactError(f"artifact {artifact_dir!r}: missing weights file {table['file']!r}")
    blob = np.fromfile(path, dtype=np.uint8)
    for record in table["tensors"]:
        end = record["offset"] + record["nbytes"]
        if end > blob.size:
            raise ArtifactError(f"artifact {artifact_dir!r}: weights file {table['file']!r} is truncated "
                                f"({blob.size} bytes, tensor {record['name']!r} needs {end})")
        array = aligned_empty(tuple(record["shape"]), record["dtype"])
        array.reshape(-1).view(np.uint8)[:] = blob[record["offset"]:end]
        store[record["name"]] = array
    return store


def atomic_write(path: str, write: Any, suffix: str = "") -> None:
    """Write a temporary file next to ``path`` with ``write(stream)``, then rename it over ``path``."""
    fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as stream:
            write(stream)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes 0600; the result should read like any written file
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.remove(temp)
        raise


def save_into_artifact(artifact_dir: str, manifest: dict[str, Any], store: WeightStore) -> None:
    """Write ``store`` as the artifact's weights: a new weights file, then the manifest naming it.

    Replacing the manifest is the single commit point: a crash before it leaves the old weights
    in force, after it the new ones; the old file is removed last.
    """
    table = manifest.get("weights")
    if not table:
        raise ArtifactError(f"artifact {artifact_dir!r} stores no weights to update")
    old_path = resolve_inside(artifact_dir, table["file"], "weights.file")  # never write or remove outside
    size = max(r["offset"] + r["nbytes"] for r in table["tensors"])
    blob = np.zeros(size, np.uint8)
    for record in table["tensors"]:
        blob[record["offset"]:record["offset"] + record["nbytes"]] = store[record["name"]].reshape(-1).view(np.uint8)
    fd, new_path = tempfile.mkstemp(prefix="weights-", suffix=".bin", dir=artifact_dir)
    with os.fdopen(fd, "wb") as stream:
        stream.write(blob.tobytes())
        stream.flush()
        os.fsync(stream.fileno())
    old_file, new_file = table["file"], os.path.basename(new_path)
    updated = json.loads(json.dumps(manifest))
    updated["weights"]["file"] = new_file
    updated["files"].pop(old_file, None)
    updated["files"][new_file] = {"size": int(blob.size), "sha256": file_sha256(new_path)}
    updated["files"] = dict(sorted(updated["files"].items()))
    try:
        atomic_write(os.path.join(artifact_dir, MANIFEST_FILE),
                      lambda stream: stream.write(json.dumps(updated, indent=1).encode()))
    except BaseException:
        os.remove(new_path)
        raise
    if old_file != new_file and os.path.isfile(old_path):
        os.remove(old_path)
    manifest.clear()
    manifest.update(updated)


def save_npz(path: str, store: WeightStore) -> None:
    """Write the stored parameters (no constants) to ``path`` as ``.npz``, atomically."""
    arrays = {name: store[name] for name in store.parameter_names()}
    atomic_write(path, lambda stream: np.savez(stream, **arrays), suffix=".npz")


def load_npz(path: str, store: WeightStore) -> None:
    """Copy the arrays of a ``.npz`` written by :func:`save_npz` into ``store`` in place.

    Raises:
        InputError: a name the artifact does not store, or a shape or dtype that differs;
            nothing is changed then.
    """
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    for name, array in arrays.items():
        if name not in store or name.startswith(CONST_PREFIX):
            raise InputError(f"{path}: parameter {name!r} is not stored by this artifact "
                             f"(it stores {store.parameter_names()})")
        if array.shape != store[name].shape or array.dtype != store[name].dtype:
            raise InputError(f"{path}: parameter {name!r}: expected {store[name].dtype}{list(store[name].shape)}, "
                             f"got {array.dtype}{list(array.shape)}")
    for name, array in arrays.items():
        store[name][...] = array
    store.version += 1
