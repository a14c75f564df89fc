"""The C backend hooks (runtime/c/aotnn_backend.c) compiled for linking into host kernel libraries."""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import aotnn_runtime

BACKEND_SOURCE = Path(aotnn_runtime.__file__).resolve().parent / "c" / "aotnn_backend.c"


def source_hash() -> str:
    return hashlib.sha256(BACKEND_SOURCE.read_bytes()).hexdigest()


def backend_object(cache_dir: str, compiler: str = "cc") -> str:
    """Path of the compiled backend object for the host, compiled once per source version."""
    path = os.path.join(cache_dir, f"aotnn_backend-{source_hash()[:16]}.o")
    if not os.path.exists(path):
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".o", dir=cache_dir)
        os.close(fd)
        try:
            subprocess.run([compiler, "-c", "-fPIC", "-O2", "-std=gnu99", str(BACKEND_SOURCE), "-o", tmp],
                           check=True, capture_output=True, text=True)
            os.replace(tmp, path)
        except subprocess.CalledProcessError as err:
            os.unlink(tmp)
            raise RuntimeError(f"compiling {BACKEND_SOURCE.name} failed: {err.stderr.strip()}") from None
    return path
