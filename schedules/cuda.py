"""CUDA artifacts: TVM's CUDA C kernels compiled by NVRTC to a cubin (and PTX), plus launch metadata.

TVM generates CUDA C for the DLight-scheduled kernels; NVRTC (the CUDA runtime compiler, a pip
package that needs no GPU) compiles it at build time to a cubin for the chosen ``arch`` and to PTX.
The artifact holds ``kernels.cu`` (the source, for reading and recompiling), ``kernels.cubin``,
``kernels.ptx`` and ``kernels.json`` (per PrimFunc: kernel, which parameter feeds each argument,
grid, block and dynamic shared memory, all numbers). aotnn_runtime loads the cubin through the
CUDA driver API (``libcuda``, installed with the NVIDIA driver: no toolkit, no TVM) and falls back
to the PTX, which the driver JIT-compiles, on a GPU of another architecture.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm

from . import gpu, pipeline
from .build import _kernel_module, entry_record, new_manifest, staging_dir, stored_tensors, write_artifact
from .target import resolve

KERNELS_FILE = "kernels.json"
SOURCE_FILE = "kernels.cu"
CUBIN_FILE = "kernels.cubin"
PTX_FILE = "kernels.ptx"
KERNELS_FORMAT = "aotnn-cuda"
KERNELS_VERSION = 1
NVRTC_HINT = "pip install nvidia-cuda-nvrtc-cu12 nvidia-cuda-cccl-cu12 (or install the CUDA toolkit)"


class CudaBuildError(RuntimeError):
    """The CUDA kernels could not be compiled (NVRTC missing, or it rejected the source)."""


def detect_arch() -> str | None:
    """``sm_XY`` of the first CUDA GPU, or None without a driver or a GPU."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    major, minor, device = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(device), 0) != 0:
        return None
    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device)   # COMPUTE_CAPABILITY_MAJOR
    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)   # COMPUTE_CAPABILITY_MINOR
    return f"sm_{major.value}{minor.value}" if major.value else None


def _nvidia_dirs(sub: str) -> list[str]:
    try:
        import nvidia  # namespace package of NVIDIA's pip wheels
    except ImportError:
        return []
    return [os.path.join(base, sub) for base in nvidia.__path__ if os.path.isdir(os.path.join(base, sub))]


def _load_nvrtc() -> ctypes.CDLL:
    candidates = [p for d in _nvidia_dirs("cuda_nvrtc") for p in sorted(glob.glob(os.path.join(d, "lib", "libnvrtc.so*")))
                  if "alt" not in os.path.basename(p) and "builtins" not in os.path.basename(p)]
    found = ctypes.util.find_library("nvrtc")
    for path in candidates + ([found] if found else []):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    raise CudaBuildError(f"target cuda: NVRTC (libnvrtc, the CUDA runtime compiler) is missing: {NVRTC_HINT}")


def _include_dirs() -> list[str]:
    """Where ``<cuda/std/cstdint>`` (CCCL) lives: TVM's CUDA source includes it under NVRTC."""
    dirs = [os.path.join(d, "include") for d in _nvidia_dirs("cuda_cccl")]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    dirs += [os.path.join(home, "include")]
    found = [d for d in dirs if os.path.isfile(os.path.join(d, "cuda", "std", "cstdint"))]
    if not found:
        raise CudaBuildError(f"target cuda: the CCCL headers (<cuda/std/cstdint>) are missing: {NVRTC_HINT}")
    return found


def nvrtc_compile(source: str, arch: str) -> tuple[bytes, bytes]:
    """Compile CUDA C ``source`` for ``arch`` with NVRTC.

    Returns:
        (cubin, ptx) bytes; ptx is empty when NVRTC keeps none.
    Raises:
        CudaBuildError: NVRTC or its headers are missing, or the source does not compile.
    """
    lib = _load_nvrtc()
    includes = _include_dirs()
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernels.cu", 0, None, None) != 0:
        raise CudaBuildError("target cuda: nvrtcCreateProgram failed")
    try:
        options = [f"--gpu-architecture={arch}".encode(), b"--std=c++17", b"-default-device"]
        options += [f"-I{d}".encode() for d in includes]
        array = (ctypes.c_char_p * len(options))(*options)
        status = lib.nvrtcCompileProgram(prog, len(options), array)
        if status != 0:
            raise CudaBuildError(f"target cuda: NVRTC rejected the generated CUDA source for {arch}:\n"
                                 f"{_read(lib, prog, 'ProgramLog')[-4000:]}")
        return _read_bytes(lib, prog, "CUBIN"), _read_bytes(lib, prog, "PTX")
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))


def _read_bytes(lib: ctypes.CDLL, prog: ctypes.c_void_p, what: str) -> bytes:
    size = ctypes.c_size_t()
    if getattr(lib, f"nvrtcGet{what}Size")(prog, ctypes.byref(size)) != 0 or size.value == 0:
        return b""
    buf = ctypes.create_string_buffer(size.value)
    if getattr(lib, f"nvrtcGet{what}")(prog, buf) != 0:
        return b""
    return buf.raw.rstrip(b"\0") if what == "PTX" else buf.raw


def _read(lib: ctypes.CDLL, prog: ctypes.c_void_p, what: str) -> str:
    return _read_bytes(lib, prog, what).decode(errors="replace").rstrip("\0")


def build_cuda(mod: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str], *,
               target: str | Mapping[str, Any] | None = "cuda", output_dir: str,
               weights: Mapping[str, np.ndarray] | None = None, num_param_updates: int = 0,
               entry: str = "predict", metadata: Mapping[str, Any] | None = None) -> str:
    """Compile ``mod['main']`` to CUDA kernels and write a CUDA artifact at ``output_dir`` (atomically).

    Args: as :func:`schedules.build.build`; ``target`` is ``"cuda"``, ``"cuda:sm_XX"`` or a
        ``{"kind": "cuda", "arch": "sm_XX"}`` dict.
    Returns:
        ``output_dir``.
    Raises:
        CudaBuildError: NVRTC is missing or rejects the generated source.
    """
    target_dict = resolve(target)
    target_dict.setdefault("arch", resolve("cuda")["arch"])
    tvm_target = tvm.target.Target(dict(target_dict))
    lowered = pipeline.lower_to_kernels(mod, tvm_target)
    record, constants = entry_record(lowered, input_names, param_names, num_param_updates)
    kernels = gpu.lower_gpu(_kernel_module(lowered), tvm_target)
    source = gpu.codegen(kernels.device_mod, tvm_target).inspect_source()
    cubin, ptx = nvrtc_compile(source, str(target_dict["arch"]))
    table = {"format": KERNELS_FORMAT, "version": KERNELS_VERSION, "arch": target_dict["arch"],
             "source": SOURCE_FILE, "cubin": CUBIN_FILE, "ptx": PTX_FILE if ptx else None,
             "functions": {name: f.to_json() for name, f in kernels.functions.items()}}
    staging = staging_dir(output_dir)
    try:
        for name, data in ((SOURCE_FILE, source.encode()), (CUBIN_FILE, cubin), (PTX_FILE, ptx),
                           (KERNELS_FILE, json.dumps(table, indent=1).encode())):
            if data:
                with open(os.path.join(staging, name), "wb") as stream:
                    stream.write(data)
        manifest = new_manifest(dict(target_dict), entry, record, KERNELS_FILE, metadata)
        return write_artifact(staging, output_dir, manifest, stored_tensors(param_names, weights, constants))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
