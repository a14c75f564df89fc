"""Reading and checking an artifact's manifest (``manifest.json``)."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .errors import ArtifactError
from .validate import Field, check_manifest, resolve_inside

FORMAT_NAME = "aotnn-artifact"
FORMAT_VERSION = 1
MANIFEST_FILE = "manifest.json"


def file_sha256(path: str) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(artifact_dir: str) -> dict[str, Any]:
    """Load ``manifest.json`` from ``artifact_dir``, check every field, then every file it lists.

    Nothing outside ``artifact_dir`` is opened: file names are checked before any file is, and a
    symbolic link leading out is refused.

    Raises:
        ArtifactError: the directory or a file is missing, the JSON is malformed, the format
            is unknown, a field is wrong (the message names it), or a file's size or hash differs
            from what the manifest recorded.
    """
    if not os.path.isdir(artifact_dir):
        raise ArtifactError(f"artifact: expected a directory produced by aotnn, got {artifact_dir!r} "
                            f"({'a file' if os.path.exists(artifact_dir) else 'it does not exist'})")
    path = os.path.join(artifact_dir, MANIFEST_FILE)
    if not os.path.isfile(path):
        raise ArtifactError(f"artifact {artifact_dir!r}: missing {MANIFEST_FILE}")
    try:
        path = resolve_inside(artifact_dir, MANIFEST_FILE, MANIFEST_FILE)
        with open(path, encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError, RecursionError) as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: {MANIFEST_FILE} is not valid JSON ({err})") from None
    except ArtifactError as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: {err}") from None
    try:
        check_manifest(manifest, MANIFEST_FILE)
        _check_files(artifact_dir, manifest["files"])
    except ArtifactError as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: {err}") from None
    return manifest


def _check_files(artifact_dir: str, files: dict[str, Any]) -> None:
    """Each listed file: inside the artifact, present, of its recorded size and SHA-256."""
    for name, record in files.items():
        file_path = resolve_inside(artifact_dir, name, Field(MANIFEST_FILE, f"files key {name!r}"))
        if not os.path.isfile(file_path):
            raise ArtifactError(f"{MANIFEST_FILE}: files: missing file {name!r}")
        size = os.path.getsize(file_path)
        if size != record["size"]:
            raise ArtifactError(f"{MANIFEST_FILE}: files.{name}.size: file {name!r} has {size} bytes, "
                                f"the manifest expects {record['size']} (truncated or replaced)")
        if file_sha256(file_path) != record["sha256"]:
            raise ArtifactError(f"{MANIFEST_FILE}: files.{name}.sha256: file {name!r} does not match its "
                                f"recorded SHA-256 (corrupt or replaced)")
