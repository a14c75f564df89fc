"""Targets: the host is detected with its real CPU and core count; unknown names are refused."""
from __future__ import annotations

import os

import pytest

from schedules.target import TargetError, resolve


def test_host_target_has_real_cpu_and_cores():
    target = resolve("x86")
    assert target["kind"] == "llvm"
    assert target["mcpu"] not in ("", "native", "generic")
    assert target["num-cores"] == len(os.sched_getaffinity(0))


def test_unknown_target_is_refused():
    with pytest.raises(TargetError, match="target: expected one of"):
        resolve("riscv-quantum")
