"""Targets: what the compiler generates code for, detected from the host where it can be."""
from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from typing import Any

import tvm


class TargetError(ValueError):
    """A target name or description that aotnn cannot compile for."""


def host_cores() -> int:
    """Cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


MCPU_ENV = "AOTNN_MCPU"


def host_mcpu() -> str:
    """The LLVM CPU name host kernels are compiled for: ``$AOTNN_MCPU`` where set (e.g. ``haswell``
    builds AVX2 kernels on an AVX-512 host, for machines older than the build host), else the
    host CPU's own (``mcpu: native`` silently means generic code, so it is detected)."""
    pinned = os.environ.get(MCPU_ENV, "").strip()
    if not pinned:
        return _detected_mcpu()
    from tvm.target import codegen
    x86 = tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu"})
    if pinned not in {str(name) for name in codegen.llvm_get_cpu_archlist(x86)}:
        raise TargetError(f"{MCPU_ENV}: expected an LLVM x86-64 CPU name such as 'haswell' or "
                          f"'skylake-avx512', got {pinned!r}")
    return pinned


@functools.lru_cache(maxsize=None)
def _detected_mcpu() -> str:
    from tvm.target.detect_target import detect_target_from_device
    detected = detect_target_from_device(tvm.cpu())
    return str(detected.attrs.get("mcpu", "")) or "x86-64"


def x86_target(num_cores: int | None = None) -> dict[str, Any]:
    """The host's x86-64 target: its real ``mcpu`` and core count."""
    return {"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": host_mcpu(),
            "num-cores": int(num_cores or host_cores())}


def aarch64_target() -> dict[str, Any]:
    """64-bit ARM with NEON (cross-compiled; linked by Debian's aarch64-linux-gnu-gcc)."""
    return {"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}


def armv7a_target() -> dict[str, Any]:
    """32-bit ARM Linux boards (ARMv7-A, hard-float, NEON; linked by Debian's arm-linux-gnueabihf-gcc)."""
    return {"kind": "llvm", "mtriple": "armv7a-linux-gnueabihf", "mattr": ["+neon"], "mfloat-abi": "hard"}


def _cortex_m(mcpu: str) -> dict[str, Any]:
    if mcpu == "cortex-m55":  # Armv8.1-M with Helium (MVE) vectors
        return {"kind": "llvm", "mtriple": "thumbv8.1m.main-none-eabihf", "mcpu": mcpu, "mfloat-abi": "hard",
                "mattr": ["+mve.fp"]}
    # LLVM marks the M4/M7 FPU's fused multiply-add slow and then splits every a * b + c into
    # vmul + vadd: it takes as many cycles as the pair (3 on M4), and it is one instruction, not two
    return {"kind": "llvm", "mtriple": "thumbv7em-none-eabihf", "mcpu": mcpu, "mfloat-abi": "hard",
            "mattr": ["-slowfpvfmx"]}


def cortex_m4_target() -> dict[str, Any]:
    """Cortex-M4F microcontrollers (Armv7E-M, single-precision FPU; bare metal, arm-none-eabi-gcc)."""
    return _cortex_m("cortex-m4")


def cortex_m7_target() -> dict[str, Any]:
    """Cortex-M7 microcontrollers (Armv7E-M with FPU; bare metal, arm-none-eabi-gcc)."""
    return _cortex_m("cortex-m7")


def cortex_m55_target() -> dict[str, Any]:
    """Cortex-M55 microcontrollers (Armv8.1-M with MVE-F; bare metal, arm-none-eabi-gcc)."""
    return _cortex_m("cortex-m55")


def is_microcontroller(target: Mapping[str, Any]) -> bool:
    """True for bare-metal Cortex-M targets (no OS: a bundle links with its own start-up code)."""
    return target.get("kind") == "llvm" and str(target.get("mtriple", "")).startswith("thumb")


def vulkan_target() -> dict[str, Any]:
    """Vulkan: kernels are generated as WGSL (TVM's webgpu codegen) and run through wgpu's Vulkan backend."""
    return {"kind": "vulkan"}


def cuda_target(arch: str | None = None) -> dict[str, Any]:
    """CUDA for ``arch`` (``sm_XX``): the local GPU's when a driver is present, else ``sm_80``."""
    from .cuda import detect_arch
    return {"kind": "cuda", "arch": arch or detect_arch() or "sm_80"}


CROSS_TARGETS = {"aarch64": aarch64_target, "arm64": aarch64_target, "armv7a": armv7a_target,
                 "cortex-m4": cortex_m4_target, "cortex-m7": cortex_m7_target, "cortex-m55": cortex_m55_target}
GPU_TARGETS = {"vulkan": vulkan_target, "webgpu": vulkan_target, "cuda": cuda_target}
TARGET_NAMES = ("x86", "llvm") + tuple(CROSS_TARGETS) + tuple(GPU_TARGETS) + ("cuda:sm_XX",)


def is_host(target: Mapping[str, Any]) -> bool:
    """True when code for ``target`` runs on this machine."""
    triple = str(target.get("mtriple", "x86_64"))
    return target.get("kind") == "llvm" and triple.startswith("x86_64")


def resolve(target: str | Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A target description (a TVM target dict) for ``target``.

    Args:
        target: None or ``"x86"`` for the host CPU, ``"aarch64"`` (alias ``"arm64"``), ``"armv7a"``,
            ``"cortex-m4"``, ``"cortex-m7"``, ``"cortex-m55"``, ``"vulkan"`` (alias ``"webgpu"``),
            ``"cuda"`` or ``"cuda:sm_XX"``, or a TVM target dict.
    Returns:
        a dict that ``tvm.target.Target`` accepts.
    Raises:
        TargetError: the name is unknown.
    """
    if target is None or target in ("x86", "llvm"):
        return x86_target()
    if isinstance(target, str) and target in CROSS_TARGETS:
        return CROSS_TARGETS[target]()
    if isinstance(target, str) and target in GPU_TARGETS:
        return GPU_TARGETS[target]()
    if isinstance(target, str) and target.startswith("cuda:sm_") and target[8:].isdigit():
        return cuda_target(target[5:])
    if target == "arm":
        raise TargetError(f"target: 'arm' is ambiguous; name the ARM target: {', '.join(CROSS_TARGETS)}")
    if isinstance(target, Mapping):
        if "kind" not in target:
            raise TargetError(f"target: a target dict needs a 'kind', got {dict(target)!r}")
        return dict(target)
    raise TargetError(f"target: expected one of {', '.join(TARGET_NAMES)} or a TVM target dict, got {target!r}")


def to_tvm(target: Mapping[str, Any]) -> tvm.target.Target:
    """The TVM Target object of a target dict."""
    return tvm.target.Target(dict(target))
