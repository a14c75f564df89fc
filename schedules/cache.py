"""Where built artifacts are kept: a directory per content hash (``AOTNN_CACHE_DIR``)."""
from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from . import backend


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


@functools.lru_cache(maxsize=None)
def compiler_fingerprint() -> str:
    """A hash of the code that turns a graph into kernels (this package and runtime/c), so that
    cached artifacts are rebuilt whenever schedules or the backend change, and the L2 size
    pinned for the default schedules' thresholds (``AOTNN_L2_KB``, ``defaults/caches.py``)."""
    from .defaults.caches import L2_ENV
    digest = hashlib.sha256(os.environ.get(L2_ENV, "").strip().encode())
    roots = [Path(__file__).resolve().parent, backend.RUNTIME_C]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".c", ".h") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def artifact_path(key: str) -> str:
    return os.path.join(cache_dir(), "artifacts", key[:40])
