"""An artifact's stored tensors: loaded once, updated in place by training steps, saved atomically."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from .buffers import aligned_empty
from .errors import ArtifactError, InputError
from .manifest import MANIFEST_FILE, file_sha256
from .owned_files import TEMP_KIND, atomic_write, create_owned_file, remove_path, remove_stale
from .validate import CONST_PREFIX, resolve_inside

BUILT_WEIGHTS_FILE = "weights.bin"  # the name the build gives the weights file
WEIGHTS_KIND = "weights-"  # name prefix of the weights files save_into_artifact writes


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


def save_into_artifact(artifact_dir: str, manifest: dict[str, Any], store: WeightStore) -> None:
    """Write ``store`` as the artifact's weights: a new weights file, then the manifest naming it.

    Replacing the manifest is the single commit point: a crash before it leaves the old weights
    in force, after it the new ones; the old file is removed last. The new file is removed if the
    write fails; weights files and temporaries that killed writers left behind are removed first.
    """
    table = manifest.get("weights")
    if not table:
        raise ArtifactError(f"artifact {artifact_dir!r} stores no weights to update")
    resolve_inside(artifact_dir, table["file"], "weights.file")  # never write or remove outside
    _remove_orphans(artifact_dir, manifest)
    size = max(r["offset"] + r["nbytes"] for r in table["tensors"])
    blob = np.zeros(size, np.uint8)
    for record in table["tensors"]:
        blob[record["offset"]:record["offset"] + record["nbytes"]] = store[record["name"]].reshape(-1).view(np.uint8)
    fd, new_path = create_owned_file(artifact_dir, WEIGHTS_KIND, ".bin")
    committed = False
    try:
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
        atomic_write(os.path.join(artifact_dir, MANIFEST_FILE),
                     lambda stream: stream.write(json.dumps(updated, indent=1).encode()))
        committed = True
    finally:
        if not committed:
            remove_path(new_path)
    if old_file != new_file:
        _remove_file(artifact_dir, old_file)
    manifest.clear()
    manifest.update(updated)


def _remove_orphans(artifact_dir: str, manifest: Mapping[str, Any]) -> None:
    """Remove weights files no manifest references whose writer is gone, and stale temporaries.

    The manifest on disk is read again: another process may have saved since ``manifest`` was loaded,
    and the file it wrote is kept.
    """
    keep = {manifest["weights"]["file"], *manifest.get("files", {})}
    try:
        with open(os.path.join(artifact_dir, MANIFEST_FILE), encoding="utf-8") as stream:
            on_disk = json.load(stream)
        keep |= {on_disk["weights"]["file"], *on_disk.get("files", {})}
    except (OSError, ValueError, KeyError, TypeError):
        return  # which files are in use is unknown: remove none
    remove_stale(artifact_dir, [WEIGHTS_KIND, TEMP_KIND], untagged=True, keep=keep)
    if BUILT_WEIGHTS_FILE not in keep:  # a save killed after its commit, before removing the build's file
        _remove_file(artifact_dir, BUILT_WEIGHTS_FILE)


def _remove_file(artifact_dir: str, name: str) -> None:
    """Remove the regular file ``name`` directly in ``artifact_dir``; nothing else (a folder, a link, a path)."""
    path = os.path.join(artifact_dir, name)
    if os.path.basename(name) == name and os.path.isfile(path) and not os.path.islink(path):
        remove_path(path)


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
