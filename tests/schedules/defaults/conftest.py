"""The CPU targets rule tests pin: which default rule schedules a kernel depends on the target's
vector width, registers and L2 size, so a test that asserts a rule runs once per ISA (AVX2 code
runs on an AVX-512 host; AVX-512 cases skip where the host lacks it) with the L2 size pinned
(:data:`PINNED_L2_KB`), whatever CPU the suite runs on."""
from __future__ import annotations

import functools

import pytest

from schedules import target as targets
from schedules.defaults import caches

# LLVM CPU names: the oldest CPU of each ISA level the default schedules tell apart
CPU_TARGETS = {"avx2": "haswell", "avx512": "skylake-avx512"}
# the L2 the rule tests' shapes were chosen against (Zen 2/3's): a test of another size sets its own
PINNED_L2_KB = 512


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
    monkeypatch.setenv(caches.L2_ENV, str(PINNED_L2_KB))
    return CPU_TARGETS[request.param]
