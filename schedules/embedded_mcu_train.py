"""Bare-metal example of a training-step bundle (Cortex-M): stored batches compiled into the image,
one ``aotnn_model_run_in_place`` (one training step, reading the batch where it lies) per batch;
the losses, the final state and the stack's high-water mark written through semihosting.

The batches are train_input<i>.bin (input i of every step, concatenated, C order), linked as const
data by train_data.S; the number of steps is the file's size over one batch's. Write the files into
the bundle and run ``make`` (where one is missing, make writes one batch of zeros).
"""
from __future__ import annotations

# Room for the losses of this many steps (the example writes them to losses.bin at the end).
MAX_STEPS = 256


def train_data_asm(num_inputs: int) -> str:
    """train_data.S: links train_input<i>.bin as const data with start and end symbols."""
    lines = ["/* Links the stored training batches (train_input<i>.bin) into the image, read-only. */"]
    for i in range(num_inputs):
        # beside the weights: flash on mps2, the 2 MB SRAM on mps3-an547 (its 512 KB ITCM holds code)
        lines += ['    .section .aotnn_weights,"a",%progbits', "    .balign 8",
                  f"    .global aotnn_train_input{i}", f"    .global aotnn_train_input{i}_end",
                  f"aotnn_train_input{i}:", f'    .incbin "train_input{i}.bin"', f"aotnn_train_input{i}_end:"]
    return "\n".join(lines) + "\n"


def train_main_c(input_bytes: list[int], output_bytes: list[int]) -> str:
    """main.c: runs one training step per stored batch, then writes losses.bin (every step's
    outputs, concatenated), state<i>.bin (the trained parameters and optimizer state) and
    stack.bin (the stack's high-water mark in bytes, uint32: the free stack is painted first)."""
    if not input_bytes or not output_bytes:
        raise ValueError("a training step needs inputs (data, label) and an output (the loss); "
                         f"got {len(input_bytes)} inputs and {len(output_bytes)} outputs")
    step_out = sum(output_bytes)
    externs = "\n".join(f"extern const uint8_t aotnn_train_input{i}[], aotnn_train_input{i}_end[];"
                        for i in range(len(input_bytes)))
    counts = "\n".join(
        f"  if ((size_t)(aotnn_train_input{i}_end - aotnn_train_input{i}) != steps * {n}) {{\n"
        f'    aotnn_semihost_write0("train_input{i}.bin: not one batch of {n} bytes per step\\n"); return 2; }}'
        for i, n in enumerate(input_bytes) if i > 0)
    point_in = "\n".join(f"    inputs[{i}] = aotnn_train_input{i} + step * {n};" for i, n in enumerate(input_bytes))
    offsets = [sum(output_bytes[:i]) for i in range(len(output_bytes))]
    point_out = "\n".join(f"    outputs[{i}] = losses + step * {step_out} + {o};" for i, o in enumerate(offsets))
    return f"""/* Example for a microcontroller: trains on the batches stored in the image (train_input<i>.bin),
 * one step per batch, then writes losses.bin and state<i>.bin through semihosting. No heap, no stdio. */
#include <stdint.h>
#include "runtime/aotnn_runtime.h"
#include "board/semihosting.h"

#define AOTNN_TRAIN_MAX_STEPS {MAX_STEPS}
#define AOTNN_STACK_PAINT 0xA5A5A5A5u
{externs}
extern uint32_t __bss_end, __stack_top;
static uint8_t losses[AOTNN_TRAIN_MAX_STEPS * {step_out}] __attribute__((aligned(8)));

/* Fills the free stack (from the end of .bss to just below the stack pointer) with a pattern. */
__attribute__((noinline)) static void aotnn_paint_free_stack(void) {{
  uint32_t* word = (uint32_t*)(((uintptr_t)&__bss_end + 7u) & ~(uintptr_t)7u);
  uint32_t* sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  while (word < sp - 64) *word++ = AOTNN_STACK_PAINT;
}}

/* Bytes of stack used since the paint: from the top down to the lowest overwritten word. */
static uint32_t aotnn_stack_used(void) {{
  uint32_t* word = (uint32_t*)(((uintptr_t)&__bss_end + 7u) & ~(uintptr_t)7u);
  while (word < &__stack_top && *word == AOTNN_STACK_PAINT) ++word;
  return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)word);
}}

static char* aotnn_decimal(char* end, size_t value) {{
  *--end = 0;
  do {{ *--end = (char)('0' + value % 10); value /= 10; }} while (value != 0);
  return end;
}}

int main(void) {{
  const void* inputs[{len(input_bytes)}];
  void* outputs[{len(output_bytes)}];
  size_t steps = (size_t)(aotnn_train_input0_end - aotnn_train_input0) / {input_bytes[0]}, step, i;
  char name[32] = "state", digits[24];
  uint32_t stack_used;
  if (steps == 0 || steps > AOTNN_TRAIN_MAX_STEPS) {{
    aotnn_semihost_write0("train_input0.bin: expected 1 to {MAX_STEPS} batches\\n"); return 2; }}
{counts}
  aotnn_paint_free_stack();
  for (step = 0; step < steps; ++step) {{
{point_in}
{point_out}
    if (aotnn_model_run_in_place(inputs, outputs) != AOTNN_OK) {{
      aotnn_semihost_write0("error: ");
      aotnn_semihost_write0(aotnn_last_error());
      aotnn_semihost_write0("\\n");
      return 1;
    }}
  }}
  stack_used = aotnn_stack_used();
  if (aotnn_semihost_write_file("losses.bin", losses, steps * {step_out}) != 0) return 3;
  if (aotnn_semihost_write_file("stack.bin", &stack_used, sizeof stack_used) != 0) return 3;
  for (i = 0; i < aotnn_model_num_states(); ++i) {{
    char* number = aotnn_decimal(digits + sizeof digits, i);
    size_t k = 5;
    while (*number) name[k++] = *number++;
    name[k++] = '.'; name[k++] = 'b'; name[k++] = 'i'; name[k++] = 'n'; name[k] = 0;
    if (aotnn_semihost_write_file(name, aotnn_model_state(i), aotnn_model_state_bytes(i)) != 0) return 3;
  }}
  aotnn_semihost_write0("aotnn: trained ");
  aotnn_semihost_write0(aotnn_decimal(digits + sizeof digits, steps));
  aotnn_semihost_write0(" steps\\n");
  aotnn_semihost_write0("aotnn: done\\n");
  return 0;
}}
"""


def train_makefile(makefile: str, input_bytes: list[int]) -> str:
    """The Cortex-M Makefile with the stored batches (train_data.o) linked into model.elf; a missing
    train_input<i>.bin is made as one batch of zeros (the files are not part of the artifact)."""
    board_objs = "BOARD_OBJS = main.o board/startup.o board/semihosting.o"
    if board_objs not in makefile:
        raise ValueError("makefile: expected the Cortex-M bundle Makefile's BOARD_OBJS line")
    files = " ".join(f"train_input{i}.bin" for i in range(len(input_bytes)))
    rule = f"\ntrain_data.o: train_data.S {files}\n\t$(CC) $(CPUFLAGS) -c train_data.S -o $@\n"
    for i, n in enumerate(input_bytes):
        rule += f"\ntrain_input{i}.bin:\n\thead -c {n} /dev/zero > $@\n"
    return makefile.replace(board_objs, board_objs + " train_data.o") + rule
