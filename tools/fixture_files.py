"""Writing the fixture files the tools/ generators produce (with MindSpore's own venv: numpy and the
standard library only, nothing of aotnn): each written to a temporary file beside it, then renamed."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np


def atomic_file(path: str, write: Callable[[str], None]) -> None:
    """Calls ``write(temp_path)`` for a temporary file beside ``path`` (its folder made if missing),
    then renames it to ``path``; the temporary file is removed if anything fails."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=folder, suffix=os.path.splitext(path)[1])
    os.close(handle)
    try:
        write(temp)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    finally:
        if os.path.exists(temp):
            os.remove(temp)


def save_npz(path: str, **arrays: Any) -> None:
    """``arrays`` as a compressed .npz at ``path``."""
    def write(temp: str) -> None:
        with open(temp, "wb") as stream:
            np.savez_compressed(stream, **arrays)
    atomic_file(path, write)


def save_json(path: str, value: Any) -> None:
    """``value`` as indented JSON at ``path``."""
    def write(temp: str) -> None:
        with open(temp, "w", encoding="utf-8") as stream:
            json.dump(value, stream, indent=1)
    atomic_file(path, write)
