"""The default schedules' view of Cortex-M targets: register tiles sized for the FPU that the core has
(Cortex-M4: FPv4-SP, 32 single-precision registers s0-s31 and no SIMD; Cortex-M55: Helium/MVE, eight
128-bit Q registers q0-q7, per the Armv7-M and Armv8.1-M architecture reference manuals)."""
from __future__ import annotations

import pytest
import tvm

from schedules import target as targets
from schedules.defaults.conv2d import plan_conv2d
from schedules.defaults.cpu import cpu_info


def test_cortex_m4_tiles_scalar_fpu_registers():
    cpu = cpu_info(tvm.target.Target(targets.cortex_m4_target()))
    assert cpu.small_memory
    assert cpu.lanes("float32") == 1
    assert cpu.vector_registers == 32


def test_cortex_m55_tiles_four_lane_mve_registers():
    cpu = cpu_info(tvm.target.Target(targets.cortex_m55_target()))
    assert cpu.small_memory
    assert cpu.lanes("float32") == 4
    assert cpu.vector_registers == 8


@pytest.mark.parametrize("make_target", [targets.cortex_m4_target, targets.cortex_m55_target])
@pytest.mark.parametrize("oc, ow", [(64, 5), (64, 25), (16, 28), (10, 1)])
def test_cortex_m_conv_tile_fits_the_register_file(make_target, oc, ow):
    """Accumulators, the tile's weights and one broadcast input must fit the FPU registers (no spills)."""
    cpu = cpu_info(tvm.target.Target(make_target()))
    lanes = cpu.lanes("float32")
    plan = plan_conv2d(cpu, oc, oc, ow, "float32")
    weight_registers = -(-plan.oc_block // lanes)
    assert plan.ow_block * weight_registers + weight_registers + 1 <= cpu.vector_registers


def test_only_aarch64_has_fma_by_lane():
    from schedules.target import aarch64_target, armv7a_target
    assert cpu_info(tvm.target.Target(aarch64_target())).fma_by_lane
    assert not cpu_info(tvm.target.Target(armv7a_target())).fma_by_lane
    assert not cpu_info(tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "skylake-avx512"})).fma_by_lane
    assert not cpu_info(tvm.target.Target({"kind": "llvm", "mtriple": "x86_64-linux-gnu", "mcpu": "haswell"})).fma_by_lane
