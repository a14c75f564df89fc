"""Reading and checking an artifact's manifest (``manifest.json``)."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from .errors import ArtifactError

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
    """Load ``manifest.json`` from ``artifact_dir`` and check its format and file hashes.

    Raises:
        ArtifactError: the directory or a file is missing, the JSON is malformed, the format
            is unknown, or a file's size or hash differs from what the manifest recorded.
    """
    if not os.path.isdir(artifact_dir):
        raise ArtifactError(f"artifact: expected a directory produced by aotnn, got {artifact_dir!r} "
                            f"({'a file' if os.path.exists(artifact_dir) else 'it does not exist'})")
    path = os.path.join(artifact_dir, MANIFEST_FILE)
    if not os.path.isfile(path):
        raise ArtifactError(f"artifact {artifact_dir!r}: missing {MANIFEST_FILE}")
    try:
        with open(path, encoding="utf-8") as stream:
            manifest = json.load(stream)
    except (OSError, ValueError) as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: {MANIFEST_FILE} is not valid JSON ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ArtifactError(f"artifact {artifact_dir!r}: {MANIFEST_FILE} is not an aotnn manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ArtifactError(f"artifact {artifact_dir!r}: format version {manifest.get('format_version')!r}, "
                            f"this runtime reads version {FORMAT_VERSION}")
    for name, record in manifest.get("files", {}).items():
        file_path = os.path.join(artifact_dir, name)
        if not os.path.isfile(file_path):
            raise ArtifactError(f"artifact {artifact_dir!r}: missing file {name!r}")
        size = os.path.getsize(file_path)
        if size != record["size"]:
            raise ArtifactError(f"artifact {artifact_dir!r}: file {name!r} has {size} bytes, "
                                f"the manifest expects {record['size']} (truncated or replaced)")
        if file_sha256(file_path) != record["sha256"]:
            raise ArtifactError(f"artifact {artifact_dir!r}: file {name!r} does not match its recorded "
                                f"SHA-256 (corrupt or replaced)")
    return manifest
