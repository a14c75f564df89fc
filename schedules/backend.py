"""The C runtime parts linked into host kernel libraries, compiled once per source version.

``aotnn_backend.c`` holds the hooks TVM kernels call (workspace, thread pool); ``aotnn_steps.c``
runs an entry point's kernels in one call (see ``aotnn_runtime.native_steps``).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import aotnn_runtime

RUNTIME_C = Path(aotnn_runtime.__file__).resolve().parent / "c"
BACKEND_SOURCE = RUNTIME_C / "aotnn_backend.c"
HOST_SOURCES = (BACKEND_SOURCE, RUNTIME_C / "aotnn_steps.c")


def _object(source: Path, cache_dir: str, compiler: str) -> str:
    digest = hashlib.sha256(source.read_bytes() + (RUNTIME_C / "aotnn_abi.h").read_bytes()).hexdigest()
    path = os.path.join(cache_dir, f"{source.stem}-{digest[:16]}.o")
    if not os.path.exists(path):
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".o", dir=cache_dir)
        os.close(fd)
        try:
            subprocess.run([compiler, "-c", "-fPIC", "-O2", "-std=gnu99", str(source), "-o", tmp],
                           check=True, capture_output=True, text=True)
            os.replace(tmp, path)
        except subprocess.CalledProcessError as err:
            os.unlink(tmp)
            raise RuntimeError(f"compiling {source.name} failed: {err.stderr.strip()}") from None
    return path


def host_objects(cache_dir: str, compiler: str = "cc") -> list[str]:
    """Paths of the compiled runtime objects a host kernel library links."""
    return [_object(source, cache_dir, compiler) for source in HOST_SOURCES]
