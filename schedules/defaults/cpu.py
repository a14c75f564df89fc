"""What the default schedules need to know about a CPU target: vector width, registers, cores, L2."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tvm
from tvm.target import codegen

from . import caches


@dataclass(frozen=True)
class CpuInfo:
    """A CPU target as the default schedules see it.

    Args:
        vector_bits: width of one SIMD register.
        vector_registers: how many SIMD registers the ISA has.
        cores: threads that ``parallel`` loops are spread over.
        vnni: the CPU has AVX-512 VNNI (``vpdpbusd``: uint8 x int8 dot products of 4 into int32).
        small_memory: a microcontroller (kilobytes of RAM): no rewrite that enlarges tensors
            (Winograd's transformed tiles hold 4x its input).
        l2_bytes: one core's L2 cache (``caches.py``).
        avx2: the CPU has AVX2 (256-bit integer vectors: ``vpmaddwd``, int16 dot products of 2 into int32).
        avx_vnni: the CPU has AVX-VNNI (the VEX-encoded 256-bit ``vpdpbusd`` of Alder Lake and later
            Intel client CPUs, which lack AVX-512).
        fma_by_lane: an FMA can take its multiplier from one lane of a register (AArch64's ``fmla`` by
            element), so a vector load of an input serves ``lanes`` broadcast steps (``lane_fma.py``).
    """

    vector_bits: int = 128
    vector_registers: int = 16
    cores: int = 1
    vnni: bool = False
    small_memory: bool = False
    avx2: bool = False
    avx_vnni: bool = False
    fma_by_lane: bool = False
    aarch64: bool = False
    dotprod: bool = False
    l2_bytes: int = caches.DEFAULT_L2_KB * 1024

    @property
    def row_task_weight_bytes(self) -> int:
        """Weights a convolution task over one output row may read whole: each row re-reads
        them, so they should stay in L2 beside the row's input and output (half of it)."""
        return self.l2_bytes // 2

    @property
    def expand_merge_min_bytes(self) -> int:
        """The smallest expanded tensor worth computing inside its depthwise convolution's kernel:
        one that no longer fits a core's L2 between two kernels."""
        return self.l2_bytes

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
    mcpu = str(target.attrs.get("mcpu", "") or "")
    host = _host_mcpu() if triple.startswith("x86_64") else None
    l2 = caches.l2_bytes(mcpu, host)
    if _has("avx512f", target):
        return CpuInfo(512, 32, cores, vnni=_has("avx512vnni", target), avx2=_has("avx2", target), l2_bytes=l2)
    if _has("avx2", target) or _has("avx", target):
        return CpuInfo(256, 16, cores, avx2=_has("avx2", target), avx_vnni=_has("avxvnni", target), l2_bytes=l2)
    if triple.startswith(("aarch64", "arm64")):
        return CpuInfo(128, 32, cores, fma_by_lane=True, aarch64=True, dotprod=_has("dotprod", target),
                       l2_bytes=l2)
    if _has("neon", target):  # ARMv7-A NEON: no fused multiply-add by lane
        return CpuInfo(128, 32, cores, l2_bytes=l2)
    if triple.startswith("thumb"):  # Cortex-M
        if _has("mve.fp", target):  # Helium: eight 128-bit Q registers (q0-q7)
            return CpuInfo(128, 8, cores, small_memory=True, l2_bytes=l2)
        # FPv4/FPv5 without SIMD: 32 single-precision registers s0-s31, one float each
        return CpuInfo(32, 32, cores, small_memory=True, l2_bytes=l2)
    return CpuInfo(128, 16, cores, l2_bytes=l2)  # SSE2, the x86-64 baseline


def _host_mcpu() -> str | None:
    """The LLVM name of the CPU this process runs on (whatever ``AOTNN_MCPU`` pins), or None."""
    try:
        from schedules.target import _detected_mcpu
        return _detected_mcpu()
    except Exception:  # noqa: BLE001 - no detection: cache sizes come from the table
        return None


def current_cpu() -> CpuInfo:
    """The CpuInfo of the target in scope (``with target:``), or the defaults outside any."""
    target = tvm.target.Target.current(allow_none=True)
    info = cpu_info(target) if target is not None else None
    return info or CpuInfo()
