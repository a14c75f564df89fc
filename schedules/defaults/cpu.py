"""What the default schedules need to know about a CPU target: vector width, registers, cores."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tvm
from tvm.target import codegen


@dataclass(frozen=True)
class CpuInfo:
    """A CPU target as the default schedules see it.

    Args:
        vector_bits: width of one SIMD register.
        vector_registers: how many SIMD registers the ISA has.
        cores: threads that ``parallel`` loops are spread over.
        vnni: the CPU has AVX-512 VNNI (``vpdpbusd``: uint8 x int8 dot products of 4 into int32).
        avx2: the CPU has AVX2 (256-bit integer vectors: ``vpmaddwd``, int16 dot products of 2 into int32).
    """

    vector_bits: int = 128
    vector_registers: int = 16
    cores: int = 1
    vnni: bool = False
    avx2: bool = False

    def lanes(self, dtype: str = "float32") -> int:
        """Elements of ``dtype`` in one SIMD register."""
        return max(1, self.vector_bits // (np.dtype(dtype).itemsize * 8))


def _has(feature: str, target: tvm.target.Target) -> bool:
    try:
        return bool(codegen.target_has_features(feature, target))
    except Exception:  # a target kind without LLVM features
        return False


def cpu_info(target: tvm.target.Target) -> CpuInfo | None:
    """The CpuInfo of an LLVM CPU target, or None for targets the CPU schedules do not serve."""
    if target.kind.name != "llvm":
        return None
    cores = int(target.attrs.get("num-cores", 0) or 0) or 1
    triple = str(target.attrs.get("mtriple", "") or "")
    if _has("avx512f", target):
        return CpuInfo(512, 32, cores, vnni=_has("avx512vnni", target), avx2=_has("avx2", target))
    if _has("avx2", target) or _has("avx", target):
        return CpuInfo(256, 16, cores, avx2=_has("avx2", target))
    if triple.startswith(("aarch64", "arm64")) or _has("neon", target):
        return CpuInfo(128, 32, cores)
    return CpuInfo(128, 16, cores)  # SSE2, the x86-64 baseline
