"""Bare-metal parts of a bundle for Cortex-M targets: compiler flags, start-up code, linker scripts
for QEMU's Arm MPS boards, semihosting and an example ``main.c``.

A microcontroller has no loader and no OS, so the bundle brings what a hosted build gets for free:

- kernels reach the backend hooks (``__TVMBackendAllocWorkspace`` ...) through a GOT. The
  image is linked statically, so the linker fills the GOT with final addresses; the linker
  scripts place it with the read-only data in flash (never zeroed RAM).
- the hooks are installed by ``aotnn_model_run`` itself (``aotnn_install_backend``), not by a
  constructor: the start-up code runs no ``.init_array``.
- C is compiled without unwind tables, and the kernels' ``.ARM.exidx`` entries are discarded by
  the linker scripts (nothing unwinds); the start-up file defines the personality routines as
  stubs so libgcc's unwinder (and its abort/malloc) is never linked.
- kernels are compiled without the packed API's argument checks (``schedules.argument_checks``):
  ``model.c`` is their only caller and passes the tensors they were compiled for.
- libc: memcpy/memset/strlen from newlib-nano (``--specs=nano.specs``), math functions the
  kernels call from newlib's libm; nothing else (no stdio, no heap, no syscalls).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The gcc flags that match the LLVM target each Cortex-M CPU is compiled for.
CPU_FLAGS = {
    "cortex-m4": "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16",
    "cortex-m7": "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16",
    "cortex-m55": "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard",
}
DEFAULT_CFLAGS = "-O2 -std=c99 -Wall"
SECTION_FLAGS = "-ffunction-sections -fdata-sections -fno-unwind-tables -fno-asynchronous-unwind-tables"
DEFINES = "-DAOTNN_NO_THREADS -DAOTNN_STATIC_WORKSPACE -DAOTNN_NO_CONSTRUCTOR"
# The QEMU machine each CPU's example is linked for (qemu-system-arm -M BOARD).
DEFAULT_BOARD = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500", "cortex-m55": "mps3-an547"}

_SECTIONS = """
SECTIONS
{{
  .text :
  {{
    KEEP(*(.vectors))
    *(.text .text.*)
    *(.rodata .rodata.*)
    . = ALIGN(4);
    /* the kernels' GOT: filled in at link time (static image), read-only at run time */
    *(.got .got.*)
    . = ALIGN(64);
  }} > {code}
  .weights :
  {{
    . = ALIGN(64);
    KEEP(*(.aotnn_weights))
  }} > {weights}
  .data :
  {{
    . = ALIGN(8);
    __data_start = .;
    *(.data .data.*)
    . = ALIGN(8);
    __data_end = .;
  }} > {ram} AT > {code}
  __data_load = LOADADDR(.data);
  .bss (NOLOAD) :
  {{
    . = ALIGN(64);
    __bss_start = .;
    *(.bss .bss.* COMMON)
    . = ALIGN(8);
    __bss_end = .;
  }} > {ram}
  .stack (NOLOAD) :
  {{
    . = ALIGN(8);
    . += {stack};
    __stack_top = .;
  }} > {ram}
  /DISCARD/ : {{ *(.ARM.exidx*) *(.ARM.extab*) *(.init_array*) *(.fini_array*) }}
}}
"""

# Memory maps of QEMU's models of the boards. An386/AN500 (Cortex-M4/M7): 4 MB of flash-like
# RAM at 0 and 4 MB of SRAM at 0x20000000. AN547 (Cortex-M55, SSE-300) boots secure with its
# vector table at 0x10000000: ITCM's secure alias (512 KB), then 2 MB SRAM at 0x11000000 and
# two 2 MB internal SRAMs at 0x31000000 (4 MB together). Code runs from ITCM, weights sit in
# SRAM, data and the arena in the internal SRAM.
_MEMORY_MAPS = {
    "mps2-an386": ("""MEMORY
{
  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 4M
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 4M
}
""", {"code": "FLASH", "weights": "FLASH", "ram": "RAM"}),
    "mps3-an547": ("""MEMORY
{
  ITCM (rx) : ORIGIN = 0x10000000, LENGTH = 512K
  SRAM (rwx) : ORIGIN = 0x11000000, LENGTH = 2M
  ISRAM (rwx) : ORIGIN = 0x31000000, LENGTH = 4M
}
""", {"code": "ITCM", "weights": "SRAM", "ram": "ISRAM"}),
}
_MEMORY_MAPS["mps2-an500"] = _MEMORY_MAPS["mps2-an386"]
BOARDS = tuple(_MEMORY_MAPS)


def linker_script(board: str, stack_bytes: int) -> str:
    """The linker script of the example for QEMU's ``board``, reserving ``stack_bytes`` of stack
    (the bundle's computed worst case plus a margin: ``schedules.mcu_stack``).

    Raises:
        ValueError: an unknown board or a stack size that is not a positive multiple of 8.
    """
    if board not in _MEMORY_MAPS:
        raise ValueError(f"board: expected one of {', '.join(BOARDS)}; got {board!r}")
    if not isinstance(stack_bytes, int) or stack_bytes <= 0 or stack_bytes % 8:
        raise ValueError(f"stack_bytes: expected a positive multiple of 8; got {stack_bytes!r}")
    memory, regions = _MEMORY_MAPS[board]
    return memory + _SECTIONS.format(stack=hex(stack_bytes), **regions)


STARTUP_C = r"""/* Start-up for Cortex-M (bare metal): vector table, .data/.bss set-up, FPU on, main, exit. */
#include <stdint.h>
#include <string.h>
#include "semihosting.h"

extern uint32_t __stack_top, __data_start, __data_end, __data_load, __bss_start, __bss_end;
extern int main(void);

/* Nothing unwinds: these keep libgcc's unwinder (and abort) out of the image. */
void __aeabi_unwind_cpp_pr0(void) {}
void __aeabi_unwind_cpp_pr1(void) {}
void __aeabi_unwind_cpp_pr2(void) {}

void aotnn_fault_handler(void) {
  aotnn_semihost_write0("aotnn: hard fault\n");
  aotnn_semihost_exit(3);
}

void aotnn_reset_handler(void) {
  /* CP10/CP11 (the FPU and, on Armv8.1-M, MVE) full access, before any floating-point code */
  *(volatile uint32_t*)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n isb" ::: "memory");
  memcpy(&__data_start, &__data_load, (size_t)((char*)&__data_end - (char*)&__data_start));
  memset(&__bss_start, 0, (size_t)((char*)&__bss_end - (char*)&__bss_start));
  aotnn_semihost_exit(main());
}

__attribute__((section(".vectors"), used)) static void (*const aotnn_vectors[16])(void) = {
    (void (*)(void))&__stack_top, aotnn_reset_handler, aotnn_fault_handler, aotnn_fault_handler,
    aotnn_fault_handler, aotnn_fault_handler, aotnn_fault_handler, 0, 0, 0, 0,
    aotnn_fault_handler, aotnn_fault_handler, 0, aotnn_fault_handler, aotnn_fault_handler};
"""

SEMIHOSTING_H = r"""/* Arm semihosting: console and file I/O through the debugger or QEMU (-semihosting). */
#ifndef AOTNN_SEMIHOSTING_H_
#define AOTNN_SEMIHOSTING_H_
#include <stddef.h>

void aotnn_semihost_write0(const char* text);
/* Reads exactly `size` bytes of the host file `name`: 0 when done, -1 when it is missing or of another size. */
int aotnn_semihost_read_file(const char* name, void* data, size_t size);
/* Writes `size` bytes to the host file `name`: 0 when done. */
int aotnn_semihost_write_file(const char* name, const void* data, size_t size);
/* Ends the program (QEMU exits with status 0 for 0, 1 otherwise). */
void aotnn_semihost_exit(int status) __attribute__((noreturn));
#endif
"""

SEMIHOSTING_C = r"""#include <stdint.h>
#include <string.h>
#include "semihosting.h"

enum { SYS_OPEN = 0x01, SYS_CLOSE = 0x02, SYS_WRITE0 = 0x04, SYS_WRITE = 0x05, SYS_READ = 0x06,
       SYS_FLEN = 0x0C, SYS_EXIT = 0x18 };

static int aotnn_semihost(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void aotnn_semihost_write0(const char* text) { aotnn_semihost(SYS_WRITE0, text); }

static int aotnn_semihost_open(const char* name, int mode) {
  uintptr_t args[3] = {(uintptr_t)name, (uintptr_t)mode, strlen(name)};
  return aotnn_semihost(SYS_OPEN, args);
}

int aotnn_semihost_read_file(const char* name, void* data, size_t size) {
  int handle = aotnn_semihost_open(name, 1 /* "rb" */), ok;
  uintptr_t args[3] = {(uintptr_t)handle, (uintptr_t)data, size};
  if (handle < 0) return -1;
  ok = aotnn_semihost(SYS_FLEN, args) == (int)size && aotnn_semihost(SYS_READ, args) == 0;
  aotnn_semihost(SYS_CLOSE, args);
  return ok ? 0 : -1;
}

int aotnn_semihost_write_file(const char* name, const void* data, size_t size) {
  int handle = aotnn_semihost_open(name, 5 /* "wb" */), ok;
  uintptr_t args[3] = {(uintptr_t)handle, (uintptr_t)data, size};
  if (handle < 0) return -1;
  ok = aotnn_semihost(SYS_WRITE, args) == 0;
  aotnn_semihost(SYS_CLOSE, args);
  return ok ? 0 : -1;
}

void aotnn_semihost_exit(int status) {
  /* ADP_Stopped_ApplicationExit ends QEMU with status 0; RunTimeErrorUnknown with status 1 */
  aotnn_semihost(SYS_EXIT, (const void*)(uintptr_t)(status == 0 ? 0x20026 : 0x20023));
  for (;;) {}
}
"""


def main_c(input_bytes: list[int], output_bytes: list[int]) -> str:
    """The bare-metal example: inputs from the host files input<i>.bin (zeros where missing),
    outputs to output<i>.bin, all through semihosting; its buffers are static."""
    inputs = "\n".join(f"static uint8_t input{i}[{max(n, 1)}] __attribute__((aligned(8)));"
                       for i, n in enumerate(input_bytes))
    outputs = "\n".join(f"static uint8_t output{i}[{max(n, 1)}] __attribute__((aligned(8)));"
                        for i, n in enumerate(output_bytes))
    read = "\n".join(
        f'  if (aotnn_semihost_read_file("input{i}.bin", input{i}, {n}) != 0) '
        f'aotnn_semihost_write0("input{i}.bin: missing or not {n} bytes; using zeros\\n");'
        for i, n in enumerate(input_bytes))
    write = "\n".join(
        f'  if (aotnn_semihost_write_file("output{i}.bin", output{i}, {n}) != 0) return 3;'
        for i, n in enumerate(output_bytes))
    ins = ", ".join(f"input{i}" for i in range(len(input_bytes))) or "0"
    outs = ", ".join(f"output{i}" for i in range(len(output_bytes))) or "0"
    return f"""/* Example for a microcontroller: runs the model once on input<i>.bin (host files, read through
 * semihosting; zeros where missing) and writes output<i>.bin. No heap, no stdio; the model reads
 * and writes these buffers in place (no copies). */
#include <stdint.h>
#include "runtime/aotnn_runtime.h"
#include "board/semihosting.h"

{inputs}
{outputs}

int main(void) {{
  const void* inputs[] = {{{ins}}};
  void* outputs[] = {{{outs}}};
{read}
  if (aotnn_model_run_in_place(inputs, outputs) != AOTNN_OK) {{
    aotnn_semihost_write0("error: ");
    aotnn_semihost_write0(aotnn_last_error());
    aotnn_semihost_write0("\\n");
    return 1;
  }}
{write}
  aotnn_semihost_write0("aotnn: done\\n");
  return 0;
}}
"""


def stack_cflags(mcpu: str) -> str:
    """The flags the Makefile compiles the bundle's C files with by default (for the stack analysis)."""
    return f"{DEFAULT_CFLAGS} {CPU_FLAGS[mcpu]} {SECTION_FLAGS} {DEFINES}"


# C files of the example image (Makefile's OBJS and BOARD_OBJS); runtime/ holds the backend hooks.
C_FILES = ("model.c", "runtime/aotnn_backend.c", "runtime/aotnn_error.c", "main.c", "board/startup.c",
           "board/semihosting.c")


def qemu_command(target: Mapping[str, Any], board: str | None = None) -> list[str]:
    """The command that runs a Cortex-M bundle's model.elf (from its folder) on QEMU's model of
    ``board`` (default: the target CPU's), with semihosting for its files and console."""
    board = board or DEFAULT_BOARD[str(target.get("mcpu"))]
    return ["qemu-system-arm", "-M", board, "-nographic", "-monitor", "none", "-serial", "none",
            "-semihosting-config", "enable=on,target=native", "-kernel", "model.elf"]


def makefile(compiler: str, target: Mapping[str, Any]) -> str:
    """The Makefile of a Cortex-M bundle: ``libaotnn_model.a`` (link it into the firmware) and
    ``model.elf``, the example for QEMU's BOARD."""
    mcpu = str(target.get("mcpu"))
    flags = CPU_FLAGS.get(mcpu)
    if flags is None:
        raise ValueError(f"target: no Cortex-M compiler flags known for mcpu {mcpu!r}; "
                         f"expected one of {', '.join(CPU_FLAGS)}")
    return f"""# Builds the model for {mcpu} (bare metal). `make` builds libaotnn_model.a and model.elf, an
# example for QEMU's {DEFAULT_BOARD[mcpu]} board:
#   qemu-system-arm -M {DEFAULT_BOARD[mcpu]} -nographic -semihosting-config enable=on,target=native -kernel model.elf
# libc: memcpy/memset/strlen from newlib-nano; math functions from newlib's libm.
CC = {compiler}
AR = arm-none-eabi-ar
CPUFLAGS = {flags}
CFLAGS ?= {DEFAULT_CFLAGS}
CFLAGS += $(CPUFLAGS) {SECTION_FLAGS}
DEFS = {DEFINES}
BOARD ?= {DEFAULT_BOARD[mcpu]}
LDFLAGS ?= $(CPUFLAGS) -nostartfiles --specs=nano.specs -Wl,--gc-sections -T board/$(BOARD).ld
OBJS = model.o weights.o runtime/aotnn_backend.o runtime/aotnn_error.o kernels.o
BOARD_OBJS = main.o board/startup.o board/semihosting.o

all: libaotnn_model.a model.elf

model.elf: libaotnn_model.a $(BOARD_OBJS) board/$(BOARD).ld
\t$(CC) $(LDFLAGS) -o $@ $(BOARD_OBJS) libaotnn_model.a -lm

libaotnn_model.a: $(OBJS)
\trm -f $@
\t$(AR) rcs $@ $(OBJS)

%.o: %.c
\t$(CC) $(CFLAGS) $(DEFS) -I. -c $< -o $@

weights.o: weights.S weights.bin
\t$(CC) $(CPUFLAGS) -c weights.S -o $@

clean:
\trm -f model.elf main.o model.o weights.o runtime/*.o board/*.o libaotnn_model.a
"""


WEIGHTS_ASM = """/* Links weights.bin into the program (64-byte aligned, read-only: flash). */
    .section .aotnn_weights,"a",%progbits
    .balign 64
    .global aotnn_weights_blob
aotnn_weights_blob:
    .incbin "weights.bin"
    .balign 64
"""


def board_files(stack_bytes: int) -> dict[str, str]:
    """The files of the bundle's board/ folder: start-up, semihosting, one linker script per board
    (each reserving ``stack_bytes`` of stack)."""
    files = {"startup.c": STARTUP_C, "semihosting.h": SEMIHOSTING_H, "semihosting.c": SEMIHOSTING_C}
    files.update({f"{board}.ld": linker_script(board, stack_bytes) for board in BOARDS})
    return files
