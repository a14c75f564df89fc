"""The CPU targets rule tests pin: which default rule schedules a kernel depends on the target's
vector width and registers, so a test that asserts a rule runs once per ISA (AVX2 code runs on an
AVX-512 host; AVX-512 cases skip where the host lacks it), whatever CPU the suite runs on."""
from __future__ import annotations

import functools

import pytest

from schedules import target as targets

# LLVM CPU names: the oldest CPU of each ISA level the default schedules tell apart
CPU_TARGETS = {"avx2": "haswell", "avx512": "skylake-avx512"}


@functools.lru_cache(maxsize=None)
def _host_has(feature: str) -> bool:
    with open("/proc/cpuinfo", encoding="utf-8") as stream:
        return any(line.startswith("flags") and feature in line.split() for line in stream)


@pytest.fixture(params=list(CPU_TARGETS))
def cpu_target(request, monkeypatch) -> str:
    """Compiles host kernels (``net(x)``, the rule helpers) for one ISA level; yields its LLVM name."""
    if request.param == "avx512" and not _host_has("avx512f"):
        pytest.skip("the host has no AVX-512")
    if request.param == "avx2" and not _host_has("avx2"):
        pytest.skip("the host has no AVX2")
    monkeypatch.setenv(targets.MCPU_ENV, CPU_TARGETS[request.param])
    return CPU_TARGETS[request.param]
