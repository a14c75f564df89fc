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


def test_arm_is_not_an_alias_and_names_the_choices():
    with pytest.raises(TargetError, match="'arm' is ambiguous.*aarch64.*armv7a.*cortex-m4.*cortex-m55"):
        resolve("arm")


@pytest.mark.parametrize("name, triple, mcpu", [("cortex-m4", "thumbv7em-none-eabihf", "cortex-m4"),
                                                ("cortex-m7", "thumbv7em-none-eabihf", "cortex-m7"),
                                                ("cortex-m55", "thumbv8.1m.main-none-eabihf", "cortex-m55")])
def test_cortex_m_targets_are_hard_float_bare_metal(name, triple, mcpu):
    from schedules.target import is_host, is_microcontroller
    target = resolve(name)
    assert (target["mtriple"], target["mcpu"], target["mfloat-abi"]) == (triple, mcpu, "hard")
    assert is_microcontroller(target) and not is_host(target)
    assert ("+mve.fp" in target.get("mattr", [])) == (name == "cortex-m55")


def test_armv7a_is_32_bit_linux_with_neon():
    from schedules.target import is_microcontroller
    target = resolve("armv7a")
    assert target["mtriple"] == "armv7a-linux-gnueabihf" and "+neon" in target["mattr"]
    assert not is_microcontroller(target)


def test_bad_target_is_refused_before_compiling(tmp_path):
    import aotnn
    import numpy as np
    net = aotnn.models.LeNet5()
    with pytest.raises(TargetError, match="'arm' is ambiguous"):
        aotnn.export(net, aotnn.Tensor(np.zeros((1, 1, 32, 32), np.float32)), file_name=str(tmp_path / "x"),
                     target="arm")
    assert not any(tmp_path.iterdir())
