"""What runs inside build and measurement worker processes: kept free of heavy imports.

Workers start fresh Python processes; this module imports only TVM itself (not MetaSchedule,
not ``tvm.s_tir.tensor_intrin``), so a worker is ready in the time ``import tvm`` takes.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any

import tvm

ARTIFACT_PREFIX = "aotnn-tune-"


def build_kernel(mod: tvm.IRModule, target: tvm.target.Target, _params: Any = None) -> Any:
    """Compile one scheduled kernel module (runs in a build worker; no tensor-intrinsic import)."""
    return tvm.compile(mod, target=target)


def export_kernel(rt_mod: Any, compiler: str | None = None) -> str:
    """Link ``rt_mod`` into a shared library in a fresh temporary directory; return its path."""
    from tvm.support import cc

    path = os.path.join(tempfile.mkdtemp(prefix=ARTIFACT_PREFIX), "kernel.so")
    fcompile = cc.cross_compiler(compiler) if compiler else None
    if fcompile is None:
        rt_mod.export_library(path)
    else:
        rt_mod.export_library(path, fcompile=fcompile)
    return path


def build_and_export(mod: tvm.IRModule, target: tvm.target.Target, compiler: str | None) -> str:
    return export_kernel(build_kernel(mod, target), compiler)


def set_num_threads(count: int) -> None:
    # The measuring worker's TVM thread pool reads this when it first runs a parallel kernel.
    os.environ["TVM_NUM_THREADS"] = str(count)
