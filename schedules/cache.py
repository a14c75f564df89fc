"""Where built artifacts are kept: a directory per content hash (``AOTNN_CACHE_DIR``)."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any


def cache_dir() -> str:
    """``$AOTNN_CACHE_DIR``, else the user's cache directory (``$XDG_CACHE_HOME/aotnn`` or ``~/.cache/aotnn``)."""
    explicit = os.environ.get("AOTNN_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "aotnn")


def content_key(*parts: Any) -> str:
    """A SHA-256 over the parts (strings, or JSON-able values)."""
    digest = hashlib.sha256()
    for part in parts:
        text = part if isinstance(part, str) else json.dumps(part, sort_keys=True, default=str)
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def artifact_path(key: str) -> str:
    return os.path.join(cache_dir(), "artifacts", key[:40])
