"""The build-time stack analysis of Cortex-M bundles (schedules.mcu_stack) on hand-written inputs:
frames read from a disassembly and from gcc's call-graph files, summed along the deepest chain by
hand. (test_bundle_memory checks the result against the painted stack of real runs under QEMU.)"""
from __future__ import annotations

import pytest

from schedules import embedded_mcu, mcu_stack

KERNELS = """
kernels.o:     file format elf32-littlearm

Disassembly of section .text:

00000000 <__tvm_ffi_conv>:
       0:\te92d 43f0 \tstmdb\tsp!, {r4, r5, r6, r7, r8, r9, lr}
       4:\tb085      \tsub\tsp, #20
       8:\tf005 fd14 \tbl\t60 <conv_compute_>
       c:\t4798      \tblx\tr3
      10:\tb005      \tadd\tsp, #20
      12:\te8bd 83f0 \tldmia.w\tsp!, {r4, r5, r6, r7, r8, r9, pc}

00000060 <conv_compute_>:
      60:\tb5f0      \tpush\t{r4, r5, r6, r7, lr}
      62:\taf03      \tadd\tr7, sp, #12
      64:\ted2d 8b10 \tvpush\t{d8-d15}
      68:\tf5ad 7d02 \tsub.w\tsp, sp, #520\t@ 0x208
      6c:\t466c      \tmov\tr4, sp
      6e:\tf36f 0403 \tbfc\tr4, #0, #4
      72:\t46a5      \tmov\tsp, r4
      74:\tf7ff fffe \tbl\t0 <memcpy>
      78:\t46a5      \tmov\tsp, r4
      7a:\tbdf0      \tpop\t{r4, r5, r6, r7, pc}
"""

CALLGRAPH = r"""graph: { title: "model.c"
node: { title: "aotnn_model_run" label: "aotnn_model_run\nmodel.c:132:14\n32 bytes (static)" }
node: { title: "__indirect_call" label: "Indirect Call Placeholder" shape : ellipse }
edge: { sourcename: "aotnn_model_run" targetname: "__indirect_call" label: "model.c:99:9" }
node: { title: "runtime/aotnn_backend.c:aotnn_alloc_workspace" label: "aotnn_alloc_workspace\nruntime/aotnn_backend.c:62:14\n8 bytes (static)" }
node: { title: "aotnn_set_error" label: "aotnn_set_error\nruntime/aotnn_error.c:11:6\n16 bytes (static)" }
node: { title: "strlen" label: "strlen\n/usr/include/newlib/string.h:41:9" shape : ellipse }
edge: { sourcename: "aotnn_set_error" targetname: "strlen" label: "runtime/aotnn_error.c:13:3" }
}
"""


def _graph() -> mcu_stack.Frames:
    frames = mcu_stack.Frames()
    assert mcu_stack.kernel_frames(KERNELS, frames)
    assert mcu_stack.c_frames(CALLGRAPH, frames)
    return frames


def test_frames_from_the_disassembly_and_the_callgraph():
    frames = _graph()
    assert frames.frame["__tvm_ffi_conv"] == 7 * 4 + 20
    # 5 registers, 8 double registers, 520 bytes, and sp aligned down to 16 (at most 16 more)
    assert frames.frame["conv_compute_"] == 5 * 4 + 8 * 8 + 520 + 16
    assert frames.calls["__tvm_ffi_conv"] == {"conv_compute_", "<indirect>"}
    assert frames.calls["conv_compute_"] == {"memcpy"}
    # gcc names static functions file:name; the kernels call them by name
    assert frames.frame["aotnn_alloc_workspace"] == 8 and frames.frame["aotnn_model_run"] == 32


def test_worst_path_follows_indirect_calls_and_charges_library_calls():
    frames = _graph()
    indirect = {"aotnn_model_run": ["__tvm_ffi_conv"],
                "__tvm_ffi_conv": ["aotnn_alloc_workspace", "aotnn_set_error"]}
    compute = 5 * 4 + 8 * 8 + 520 + 16 + mcu_stack.LIBRARY_FRAME_BYTES  # deeper than the hooks' 16 + 64
    assert mcu_stack.worst_path(frames, "__tvm_ffi_conv", indirect) == 48 + compute
    assert mcu_stack.worst_path(frames, "aotnn_model_run", indirect) == 32 + 48 + compute


def test_recursion_and_frames_sized_at_run_time_cannot_be_bounded():
    frames = _graph()
    frames.calls["conv_compute_"].add("__tvm_ffi_conv")
    assert mcu_stack.worst_path(frames, "__tvm_ffi_conv", {}) is None
    alloca = KERNELS.replace("sub.w\tsp, sp, #520", "sub.w\tsp, sp, r3")
    assert not mcu_stack.kernel_frames(alloca, mcu_stack.Frames())
    parallel = KERNELS + "      7c:\tf7ff fffe \tbl\t0 <TVMBackendParallelLaunch>\n"
    assert not mcu_stack.kernel_frames(parallel, mcu_stack.Frames())
    dynamic = CALLGRAPH.replace("32 bytes (static)", "32 bytes (dynamic)")
    assert not mcu_stack.c_frames(dynamic, mcu_stack.Frames())


def test_reservation_adds_the_margin_and_falls_back_when_not_computed():
    assert mcu_stack.reserved_stack({"image": 300, "model_run": 313}) == 576  # 313 + 256, up to 8
    assert mcu_stack.reserved_stack(None) == mcu_stack.FALLBACK_STACK_BYTES
    script = embedded_mcu.linker_script("mps2-an386", 576)
    assert ". += 0x240;" in script and "__stack_top = .;" in script


def test_linker_script_names_a_bad_board_or_stack_size():
    with pytest.raises(ValueError, match="board: expected one of mps2-an386.*'mps9'"):
        embedded_mcu.linker_script("mps9", 512)
    with pytest.raises(ValueError, match="stack_bytes: expected a positive multiple of 8; got 513"):
        embedded_mcu.linker_script("mps2-an386", 513)
