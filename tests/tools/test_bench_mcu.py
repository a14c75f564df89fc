"""tools/bench_mcu.py: the instruction-counting QEMU plugin on hand-written loops of known length, and
LeNet5 on cortex-m4 (mps2-an386) counted per inference and matching x86."""
from __future__ import annotations

import shutil
import subprocess

import pytest


HAVE_TOOLS = all(shutil.which(tool) for tool in ("cc", "arm-none-eabi-gcc", "qemu-system-arm"))
pytestmark = pytest.mark.skipif(not HAVE_TOOLS, reason="needs a C compiler, gcc-arm-none-eabi and qemu-system-arm")

# 1 + 1000 x (subs, nop, bne) + (movs, ldr, bkpt) = 3004 instructions; the mark sits after the loop (1 + 3000).
THUMB_LOOP = """
    .syntax unified
    .thumb
    .section .vectors,"a"
    .word 0x20001000
    .word reset + 1
    .text
    .thumb_func
reset:
    ldr r2, =1000
1:  subs r2, r2, #1
    nop
    bne 1b
    .thumb_func
    .global after_loop
after_loop:
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
"""


def test_plugin_counts_a_known_thumb_loop_exactly(bench_mcu, plugin, tmp_path):
    (tmp_path / "loop.S").write_text(THUMB_LOOP)
    elf = str(tmp_path / "loop.elf")
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostdlib", "-Wl,-Ttext=0x100",
                    "-Wl,--section-start=.vectors=0", "-Wl,-e,0x100", "-o", elf, str(tmp_path / "loop.S")], check=True)
    mark = bench_mcu.symbol_address("arm-none-eabi-nm", elf, "after_loop")
    command = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none", "-serial", "none",
               "-semihosting-config", "enable=on,target=native", "-kernel", elf]
    total, hits = bench_mcu.counted_run(command, str(tmp_path), plugin, [mark])
    assert total == 3004
    assert hits == [(mark, 3001)]


def test_lenet5_on_cortex_m4_is_counted_and_matches_x86(bench_mcu, plugin, tmp_path):
    result = bench_mcu.bench_bundle("lenet5", (1, 1, 32, 32), "cortex-m4", plugin, str(tmp_path))
    # LeNet5 at 32x32: 6*28*28*25 + 16*10*10*150 + 400*120 + 120*84 + 84*10 multiply-accumulates
    assert result.macs == 117600 + 240000 + 48000 + 10080 + 840
    # an FPv4 core does at most one multiply-accumulate per instruction (no SIMD floats); the bound
    # is 25 instructions per MAC, far above what the kernels need (about 5)
    assert result.macs < result.insns_per_inference < 25 * result.macs
    # weights are re-laid out at compile time: the first call does the same work as the next
    assert abs(result.first_call_insns - result.insns_per_inference) <= result.insns_per_inference // 1000
    assert result.max_error < 1e-5
    assert result.flash_bytes > 200_000 and result.ram_bytes > 0
