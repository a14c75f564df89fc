"""Bundles for boards without Python: kernel objects, a generated C executor, runtime/c, weights.

The generated ``model.c`` calls the kernels in order on ONE static arena laid out by the memory
plan (64-byte aligned), keeps weights linked in (``weights.S`` includes ``weights.bin``) or
loaded by the caller, and gives kernels scratch memory from a static pool sized at compile
time: the inference path never touches the heap. Weight re-layouts are done at compile time
(``compile_time_prepare``): weights.bin holds their results, read in place (flash on a
microcontroller); the tensor and step tables are const; ``aotnn_model_run_in_place`` runs on
the caller's buffers. Microcontroller kernels compute their stages per output row
(``stream_rows``).
"""
from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tvm

from aotnn_runtime.native_steps import dlpack_code

from . import backend, pipeline, plan as planning
from .argument_checks import compile_without_argument_checks
from .build import (KERNEL_RULES_KEY, _kernel_module, entry_record, new_manifest, staging_dir, stored_tensors,
                    write_artifact)
from .compile_time_prepare import fold_prepare_steps, live_prepare_steps
from .defaults import apply_default_schedules
from .defaults.coverage import is_generic
from .input_alignment import read_inputs_in_place
from .output_dir import check_output
from .merge_pooling import is_merged_pooling
from .stream_rows import stream_rows_module
from . import embedded_mcu, mcu_stack
from .plan import spec_nbytes as _nbytes
from .training_step_memory import lean_training_record
from .target import is_host, is_microcontroller, resolve, to_tvm
from .nan_propagation import propagate_nan

RUNTIME_C = backend.RUNTIME_C
RUNTIME_FILES = ("aotnn_abi.h", "aotnn_runtime.h", "aotnn_error.c", "aotnn_backend.c")


def cross_compiler(target: Mapping[str, Any]) -> str:
    """The C compiler that links code for ``target``."""
    if is_host(target):
        return "cc"
    triple = str(target.get("mtriple"))
    if triple.startswith("aarch64"):
        return "aarch64-linux-gnu-gcc"
    if triple.startswith("armv7") and "linux" in triple:
        return "arm-linux-gnueabihf-gcc"
    if is_microcontroller(target):
        return "arm-none-eabi-gcc"
    raise ValueError(f"target: no cross compiler known for {triple!r}")


_ALLOC = re.compile(r"alloc_buffer\(\(([^()]*(?:\([^()]*\)[^()]*)*)\)(?:,\s*\"(\w+)\")?")


def workspace_bound(kernels: tvm.IRModule) -> int:
    """An upper bound of the scratch memory one kernel allocates: the sum of all buffers it
    allocates, the largest over kernels (kernels run one at a time and free in LIFO order)."""
    bound = 0
    for _, func in kernels.functions.items():
        total = 0
        for dims, dtype in _ALLOC.findall(func.script()):
            count = 1
            for dim in re.findall(r"(\d+)\)?(?:,|$)", dims.replace(" ", "")):
                count *= int(dim)
            total += -(-count * np.dtype(dtype or "float32").itemsize // 64) * 64 + 64
        bound = max(bound, total)
    return bound + 4096


def _pool_bytes(kernels: tvm.IRModule, target: tvm.target.Target) -> int:
    """The static workspace pool: the lowered kernels' allocations where they can be read, else
    the scheduled TIR's (larger) estimate."""
    from .kernel_workspace import lowered_workspace_bytes
    try:
        lowered = lowered_workspace_bytes(kernels, target)
    except Exception:  # a TVM whose pipeline differs: the estimate is always safe
        lowered = None
    return workspace_bound(kernels) if lowered is None else min(lowered, workspace_bound(kernels))


def _place_scratch_in_arena(record: dict[str, Any], kernels: tvm.IRModule, target: tvm.target.Target) -> int:
    """Give each step's kernel scratch a block of the arena beside the buffers live during that
    step: ``record`` gets ``step_scratch`` ({"offset", "nbytes"} per step) and a larger
    ``arena_bytes`` where needed. Returns the static pool's size: 0, or where the kernels'
    allocations cannot all be read as constants of the steps' kernels, the pool as before."""
    from .kernel_workspace import lowered_workspace_per_kernel
    try:
        per_kernel = lowered_workspace_per_kernel(kernels, target)
    except Exception:  # a TVM whose pipeline differs: the pool's estimate is always safe
        per_kernel = None
    names = {step["kernel"] for step in record["steps"]}
    if per_kernel is None or record["prepare_steps"] or not set(per_kernel) <= names:
        return _pool_bytes(kernels, target)
    spans: dict[int, list[int]] = {}  # buffer slot -> [first step, last step]
    for index, step in enumerate(record["steps"]):
        for ref in step["args"]:
            if ref["kind"] == "buffer":
                spans.setdefault(ref["index"], [index, index])[1] = index
    buffers = [(record["buffers"][b]["offset"], max(record["buffers"][b]["nbytes"], 1), first, last)
               for b, (first, last) in spans.items()]
    # + 64: the allocator keeps a margin of 8 words below the end of its block
    sizes = [per_kernel.get(step["kernel"], 0) + 64 if per_kernel.get(step["kernel"]) else 0
             for step in record["steps"]]
    offsets, arena = planning.place_step_scratch(buffers, sizes)
    record["step_scratch"] = [{"offset": o, "nbytes": n} for o, n in zip(offsets, sizes)]
    record["arena_bytes"] = max(record["arena_bytes"], arena)
    return 0


def _c_dtype(dtype: str) -> tuple[int, int]:
    code = dlpack_code(np.dtype(dtype))
    if code is None:
        raise KeyError(dtype)
    return code


def _shape_text(spec: Mapping[str, Any]) -> str:
    """A tensor's shape as a C initializer list (a scalar's: ``1``)."""
    return ", ".join(str(int(d)) for d in spec["shape"]) or "1"


def _state_accessors(record: Mapping[str, Any], updates: Sequence[Mapping[str, Any]]) -> list[str]:
    """``aotnn_model_num_states``/``aotnn_model_state``/``aotnn_model_state_bytes``: a training
    step's parameters and optimizer state in RAM, in ``param_updates`` order (0 for inference)."""
    params = record["params"]
    pointers = ", ".join(f"param{u['param']}_state" for u in updates) or "0"
    sizes = ", ".join(str(_nbytes(params[u["param"]])) for u in updates) or "0"
    n = len(updates)
    return [f"static const void* const aotnn_states[] = {{{pointers}}};",
            f"static const size_t aotnn_state_sizes[] = {{{sizes}}};",
            f"size_t aotnn_model_num_states(void) {{ return {n}; }}",
            f"const void* aotnn_model_state(size_t i) {{ return i < {n} ? aotnn_states[i] : 0; }}",
            f"size_t aotnn_model_state_bytes(size_t i) {{ return i < {n} ? aotnn_state_sizes[i] : 0; }}", ""]


def generate_model_c(record: Mapping[str, Any], weight_offsets: Mapping[str, int], weights_size: int,
                     workspace_bytes: int) -> str:
    """The C source that runs one entry point's kernels on the static arena.

    Tensor descriptors, shapes and the step table are const (flash on a microcontroller) except
    the inputs' and outputs' descriptors, which point at the caller's buffers, and the weights'
    when they are loaded at run time (``AOTNN_WEIGHTS_FROM_FILE``). Prepare steps, where a
    record still has them, run on the first call into static buffers.
    """
    n_in, n_out = len(record["inputs"]), len(record["outputs"])
    lines = ['/* Generated by aotnn: runs the model\'s kernels in order on one static arena. */',
             '#include <string.h>', '#include "runtime/aotnn_abi.h"', '#include "runtime/aotnn_runtime.h"', '',
             '#define A64 __attribute__((aligned(64)))', '']
    kernels = sorted({s["kernel"] for s in record["steps"]} | {s["kernel"] for s in record["prepare_steps"]})
    lines += [f"extern int32_t __tvm_ffi_{k}(void*, void*, int32_t, void*);" for k in kernels]
    lines += ["", f"static uint8_t aotnn_arena[{max(record['arena_bytes'], 64)}] A64;",
              f"uint8_t aotnn_workspace_pool[{max(workspace_bytes, 8)}] A64;",
              f"const size_t aotnn_workspace_pool_bytes = {workspace_bytes};",
              "#ifndef AOTNN_WEIGHTS_FROM_FILE",
              "extern const uint8_t aotnn_weights_blob[];",
              "static const uint8_t* aotnn_weights = aotnn_weights_blob;",
              "#define AOTNN_WEIGHTS_CONST const",
              "#define AOTNN_WEIGHT(offset) ((void*)(aotnn_weights_blob + (offset)))",
              "#else", "static const uint8_t* aotnn_weights = 0;",
              "#define AOTNN_WEIGHTS_CONST", "#define AOTNN_WEIGHT(offset) 0", "#endif",
              f"static const size_t aotnn_weights_size = {weights_size};", ""]
    kinds = {"input": record["inputs"], "output": record["outputs"], "param": record["params"],
             "buffer": record["buffers"], "prepared": record["prepared"]}
    shape_arrays: dict[str, str] = {}  # one const array per distinct shape, shared by its tensors
    for kind, specs in kinds.items():
        for i, spec in enumerate(specs):
            shape = _shape_text(spec)
            if shape not in shape_arrays:
                shape_arrays[shape] = f"aotnn_shape{len(shape_arrays)}"
                lines.append(f"static const int64_t {shape_arrays[shape]}[] = {{{shape}}};")
            if kind == "prepared":
                lines.append(f"static uint8_t {kind}{i}_data[{max(_nbytes(spec), 1)}] A64;")
    updates = list(record.get("param_updates", []))
    updated_params = {u["param"] for u in updates}
    num_outputs = n_out - len(updates)  # the trailing outputs are a training step's new parameter values
    for i in sorted(updated_params):  # a training step's parameters and optimizer state: RAM (.bss)
        lines.append(f"static uint8_t param{i}_state[{max(_nbytes(record['params'][i]), 1)}] A64;")
    # new values, copied into the state after every step (unless written into it: training_step_memory)
    copied_back = {i for i in range(num_outputs, n_out) if record["output_refs"][i] == {"kind": "output", "index": i}}
    for i in sorted(copied_back):
        lines.append(f"static uint8_t output{i}_data[{max(_nbytes(record['outputs'][i]), 1)}] A64;")
    lines.append("")
    for kind, specs in kinds.items():
        qualifier, data = {"input": ("", "0"), "output": ("", "0"), "param": ("AOTNN_WEIGHTS_CONST ", None),
                           "buffer": ("const ", None), "prepared": ("const ", None)}[kind]
        for i, spec in enumerate(specs):
            if kind == "param":
                data = (f"param{i}_state" if i in updated_params
                        else f"AOTNN_WEIGHT({weight_offsets[spec['name']]})")
            elif kind == "buffer":
                data = f"aotnn_arena + {spec['offset']}"
            elif kind == "prepared" or (kind == "output" and i in copied_back):
                data = f"{kind}{i}_data"
            else:
                data = "0"
            code, bits = _c_dtype(spec["dtype"])
            lines.append(f"static {qualifier}AotnnDLTensor {kind}{i} = {{{data}, {{AOTNN_DL_CPU, 0}}, "
                         f"{len(spec['shape'])}, {{{code}, {bits}, 1}}, "
                         f"(int64_t*){shape_arrays[_shape_text(spec)]}, 0, 0}};")
    lines += ["", "#ifdef AOTNN_WEIGHTS_FROM_FILE", "static void aotnn_bind_weights(void) {"]
    lines += [f"  param{i}.data = (void*)(aotnn_weights + {weight_offsets[spec['name']]});"
              for i, spec in enumerate(record["params"]) if i not in updated_params]
    lines += ["}", "#endif", ""]

    def table(name: str, steps: Sequence[Mapping[str, Any]], scratch: Sequence[Mapping[str, int]] = ()) -> list[str]:
        """A const table of kernel calls: (kernel, its argument array, argument count, the offset and
        size of its scratch block in the arena; size 0: the static pool)."""
        out = []
        for j, step in enumerate(steps):
            args = ", ".join(f"{{AOTNN_FFI_DLTENSOR_PTR, 0, {{.v_ptr = (void*)&{a['kind']}{a['index']}}}}}"
                             for a in step["args"])
            out.append(f"static const AotnnFFIAny {name}_args{j}[] = {{{args}}};")
        blocks = list(scratch) or [{"offset": 0, "nbytes": 0}] * len(steps)
        rows = ", ".join(f"{{__tvm_ffi_{s['kernel']}, {name}_args{j}, {len(s['args'])}, {b['offset']}, {b['nbytes']}}}"
                         for j, (s, b) in enumerate(zip(steps, blocks)))
        out += [f"static const aotnn_step {name}[] = {{{rows or '{0, 0, 0, 0, 0}'}}};", ""]
        return out

    lines += ["typedef struct { AotnnKernel kernel; const AotnnFFIAny* args; int32_t num_args; "
              "uint32_t scratch_offset; uint32_t scratch_bytes; } aotnn_step;", ""]
    lines += table("aotnn_steps", record["steps"], record.get("step_scratch", ()))
    lines += ["static aotnn_status aotnn_run_steps(const aotnn_step* steps, size_t count) {", "  size_t i;",
              "  for (i = 0; i < count; ++i) {", "    AotnnFFIAny result = {AOTNN_FFI_NONE, 0, {0}};",
              "    if (steps[i].scratch_bytes != 0) aotnn_workspace_place(aotnn_arena + steps[i].scratch_offset, steps[i].scratch_bytes);",
              "    else aotnn_workspace_reset();",
              "    if (steps[i].kernel(0, (void*)steps[i].args, steps[i].num_args, &result) != 0) return AOTNN_ERR_KERNEL;",
              "  }", "  return AOTNN_OK;", "}", ""]
    live = live_prepare_steps(record["prepare_steps"], updated_params)
    once = [step for i, step in enumerate(record["prepare_steps"]) if i not in live]
    every_call = [step for i, step in enumerate(record["prepare_steps"]) if i in live]
    prepare = bool(record["prepare_steps"] or updates)
    if prepare:  # records that update parameters keep their prepare steps
        lines += table("aotnn_prepare_steps", once)
        lines += table("aotnn_live_prepare_steps", every_call)
        lines += ["static int aotnn_prepared = 0;", "", "static aotnn_status aotnn_prepare(void) {"]
        for i in sorted(updated_params):  # a training step starts from the weights' values
            lines.append(f"  memcpy(param{i}_state, aotnn_weights + {weight_offsets[record['params'][i]['name']]}, "
                         f"{_nbytes(record['params'][i])});")
        lines += [f"  return aotnn_run_steps(aotnn_prepare_steps, {len(once)});", "}", ""]
    lines += ["static aotnn_status aotnn_check_pointers(const void* const* inputs, void* const* outputs) {",
              "  size_t i;",
              "  if (inputs == 0 || outputs == 0) { aotnn_set_error(\"inputs and outputs must not be NULL\"); return AOTNN_ERR_ARGUMENT; }",
              f"  for (i = 0; i < {n_in}; ++i) if (inputs[i] == 0) {{ aotnn_set_error(\"an input pointer is NULL\"); return AOTNN_ERR_ARGUMENT; }}",
              f"  for (i = 0; i < {num_outputs}; ++i) if (outputs[i] == 0) {{ aotnn_set_error(\"an output pointer is NULL\"); return AOTNN_ERR_ARGUMENT; }}",
              "  return AOTNN_OK;", "}", ""]
    lines += ["aotnn_status aotnn_model_run_in_place(const void* const* inputs, void* const* outputs) {",
              "  aotnn_status rc = aotnn_check_pointers(inputs, outputs);", "  if (rc != AOTNN_OK) return rc;"]
    for kind, specs, pointers in (("input", record["inputs"], "inputs"), ("output", record["outputs"][:num_outputs], "outputs")):
        for i, spec in enumerate(specs):
            size = np.dtype(spec["dtype"]).itemsize
            lines.append(f"  if (((uintptr_t){pointers}[{i}] & {size - 1}u) != 0) {{ aotnn_set_error(\"{kind} {i}: "
                         f"expected a pointer aligned to its element size ({size} bytes)\"); return AOTNN_ERR_ARGUMENT; }}")
    lines += ["  if (aotnn_weights == 0) { aotnn_set_error(\"no weights: call aotnn_model_set_weights\"); return AOTNN_ERR_WEIGHTS; }",
              "  aotnn_install_backend();  /* no constructors on bare metal: the hooks are set here */",
              "#ifdef AOTNN_WEIGHTS_FROM_FILE", "  aotnn_bind_weights();", "#endif"]
    lines += [f"  input{i}.data = (void*)inputs[{i}];" for i in range(n_in)]
    lines += [f"  output{i}.data = outputs[{i}];" for i in range(num_outputs)]
    if prepare:
        lines += ["  if (!aotnn_prepared) {", "    rc = aotnn_prepare();",
                  "    if (rc != AOTNN_OK) return rc;", "    aotnn_prepared = 1;", "  }"]
    if every_call:  # forms of parameters a training step changes
        lines += [f"  rc = aotnn_run_steps(aotnn_live_prepare_steps, {len(every_call)});",
                  "  if (rc != AOTNN_OK) return rc;"]
    lines += [f"  rc = aotnn_run_steps(aotnn_steps, {len(record['steps'])});", "  if (rc != AOTNN_OK) return rc;"]
    for i, (spec, ref) in enumerate(zip(record["outputs"][:num_outputs], record["output_refs"])):
        if not (ref["kind"] == "output" and ref["index"] == i):  # not written by a kernel: copied
            lines.append(f"  memcpy(outputs[{i}], {ref['kind']}{ref['index']}.data, {_nbytes(spec)});")
    for update in updates:  # after every kernel ran: the step's new values become the state
        ref = record["output_refs"][update["output"]]
        if ref == {"kind": "param", "index": update["param"]}:
            continue  # the step wrote the new value into the state
        source = f"{ref['kind']}{ref['index']}.data"
        lines.append(f"  if ({source} != (void*)param{update['param']}_state) "
                     f"memcpy(param{update['param']}_state, {source}, {_nbytes(record['params'][update['param']])});")
    lines += ["  return AOTNN_OK;", "}", ""]
    # the copying entry point: any alignment; its staging buffers are dropped by a linker that
    # collects unused sections when only aotnn_model_run_in_place is called
    lines += [f"static uint8_t aotnn_input_copy{i}[{max(_nbytes(s), 1)}] A64;" for i, s in enumerate(record["inputs"])]
    lines += [f"static uint8_t aotnn_output_copy{i}[{max(_nbytes(s), 1)}] A64;" for i, s in enumerate(record["outputs"][:num_outputs])]
    lines += ["", "aotnn_status aotnn_model_run(const void* const* inputs, void* const* outputs) {",
              f"  const void* staged_inputs[] = {{{', '.join(f'aotnn_input_copy{i}' for i in range(n_in)) or '0'}}};",
              f"  void* staged_outputs[] = {{{', '.join(f'aotnn_output_copy{i}' for i in range(num_outputs)) or '0'}}};",
              "  aotnn_status rc = aotnn_check_pointers(inputs, outputs);", "  if (rc != AOTNN_OK) return rc;"]
    lines += [f"  memcpy(aotnn_input_copy{i}, inputs[{i}], {_nbytes(s)});" for i, s in enumerate(record["inputs"])]
    lines += ["  rc = aotnn_model_run_in_place(staged_inputs, staged_outputs);", "  if (rc != AOTNN_OK) return rc;"]
    lines += [f"  memcpy(outputs[{i}], aotnn_output_copy{i}, {_nbytes(s)});" for i, s in enumerate(record["outputs"][:num_outputs])]
    lines += ["  return AOTNN_OK;", "}", "",
              "aotnn_status aotnn_model_set_weights(const void* data, size_t size) {",
              "  if (data == 0 || size != aotnn_weights_size || ((uintptr_t)data & 63u) != 0) {",
              "    aotnn_set_error(\"weights: expected the bundle's weights.bin, 64-byte aligned\"); return AOTNN_ERR_WEIGHTS; }",
              "#ifdef AOTNN_WEIGHTS_FROM_FILE",
              "  aotnn_weights = (const uint8_t*)data;",
              *(["  aotnn_prepared = 0;"] if prepare else []),
              "  return AOTNN_OK;",
              "#else",
              "  aotnn_set_error(\"weights: this build links its weights in (build with -DAOTNN_WEIGHTS_FROM_FILE to set them)\");",
              "  return AOTNN_ERR_WEIGHTS;",
              "#endif", "}", ""]
    lines += _state_accessors(record, updates)
    sizes_in = ", ".join(str(_nbytes(s)) for s in record["inputs"]) or "0"
    sizes_out = ", ".join(str(_nbytes(s)) for s in record["outputs"][:num_outputs]) or "0"
    lines += [f"static const size_t aotnn_input_sizes[] = {{{sizes_in}}};",
              f"static const size_t aotnn_output_sizes[] = {{{sizes_out}}};",
              f"size_t aotnn_model_num_inputs(void) {{ return {n_in}; }}",
              f"size_t aotnn_model_num_outputs(void) {{ return {num_outputs}; }}",
              f"size_t aotnn_model_input_bytes(size_t i) {{ return i < {n_in} ? aotnn_input_sizes[i] : 0; }}",
              f"size_t aotnn_model_output_bytes(size_t i) {{ return i < {num_outputs} ? aotnn_output_sizes[i] : 0; }}",
              f"size_t aotnn_model_arena_bytes(void) {{ return {record['arena_bytes']}; }}", ""]
    return "\n".join(lines)


WEIGHTS_ASM = """/* Links weights.bin into the program (64-byte aligned, read-only). */
    .section .rodata
    .balign 64
    .global aotnn_weights_blob
aotnn_weights_blob:
    .incbin "weights.bin"
    .balign 64
    .section .note.GNU-stack,"",%progbits
"""

MAIN_C = r"""/* Example: runs the model on raw input files (or zeros) and writes raw outputs. */
#include <stdio.h>
#include <stdlib.h>
#include "runtime/aotnn_runtime.h"

int main(int argc, char** argv) {
  size_t i, n_in = aotnn_model_num_inputs(), n_out = aotnn_model_num_outputs();
  const void* inputs[16];
  void* outputs[16];
  if (n_in > 16 || n_out > 16) return 2;
  for (i = 0; i < n_in; ++i) {
    size_t size = aotnn_model_input_bytes(i);
    void* data = calloc(1, size);
    if ((int)i + 1 < argc) {
      FILE* f = fopen(argv[i + 1], "rb");
      if (f == NULL || fread(data, 1, size, f) != size || fgetc(f) != EOF) {
        fprintf(stderr, "input %zu: expected a file of exactly %zu bytes, got %s (missing, shorter or longer)\n",
                i, size, argv[i + 1]);
        return 2;
      }
      fclose(f);
    }
    inputs[i] = data;
  }
  for (i = 0; i < n_out; ++i) outputs[i] = malloc(aotnn_model_output_bytes(i));
  if (aotnn_model_run(inputs, outputs) != AOTNN_OK) { fprintf(stderr, "error: %s\n", aotnn_last_error()); return 1; }
  for (i = 0; i < n_out; ++i) {
    char name[32];
    FILE* f;
    snprintf(name, sizeof name, "output%zu.bin", i);
    f = fopen(name, "wb");
    if (f == NULL) return 3;
    fwrite(outputs[i], 1, aotnn_model_output_bytes(i), f);
    fclose(f);
    printf("wrote %s (%zu bytes)\n", name, aotnn_model_output_bytes(i));
  }
  return 0;
}
"""


def makefile(compiler: str) -> str:
    return f"""# Builds the model for its target. Override CC for another cross compiler.
CC = {compiler}
CFLAGS ?= -O2 -std=c99 -Wall
DEFS = -DAOTNN_NO_THREADS -DAOTNN_STATIC_WORKSPACE
LDFLAGS ?= -static
OBJS = model.o weights.o runtime/aotnn_backend.o runtime/aotnn_error.o kernels.o

model: $(OBJS) main.o
\t$(CC) $(LDFLAGS) -o $@ main.o $(OBJS) -lm

libaotnn_model.a: $(OBJS)
\tar rcs $@ $(OBJS)

%.o: %.c
\t$(CC) $(CFLAGS) $(DEFS) -I. -c $< -o $@

weights.o: weights.S weights.bin
\t$(CC) -c weights.S -o $@

clean:
\trm -f model main.o model.o weights.o runtime/*.o libaotnn_model.a
"""


def _write_build_files(staging: str, target: Mapping[str, Any], record: Mapping[str, Any]) -> None:
    """weights.S, the example main.c and the Makefile: hosted (Linux) or bare metal (Cortex-M, + board/)."""
    if not is_microcontroller(target):
        Path(staging, "weights.S").write_text(WEIGHTS_ASM)
        Path(staging, "main.c").write_text(MAIN_C)
        Path(staging, "Makefile").write_text(makefile(cross_compiler(target)))
        return
    Path(staging, "weights.S").write_text(embedded_mcu.WEIGHTS_ASM)
    num_outputs = len(record["outputs"]) - len(record.get("param_updates", []))
    input_bytes = [_nbytes(s) for s in record["inputs"]]
    output_bytes = [_nbytes(s) for s in record["outputs"][:num_outputs]]
    makefile_text = embedded_mcu.makefile(cross_compiler(target), target)
    if record.get("param_updates"):
        from . import embedded_mcu_train
        main_text = embedded_mcu_train.train_main_c(input_bytes, output_bytes)
        makefile_text = embedded_mcu_train.train_makefile(makefile_text, input_bytes)
        Path(staging, "train_data.S").write_text(embedded_mcu_train.train_data_asm(len(input_bytes)))
    else:
        main_text = embedded_mcu.main_c(input_bytes, output_bytes)
    Path(staging, "main.c").write_text(main_text)
    Path(staging, "Makefile").write_text(makefile_text)
    os.makedirs(os.path.join(staging, "board"))


def _write_board_files(staging: str, target: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """board/ of a Cortex-M bundle (start-up, semihosting, linker scripts), its stack reserved from
    the worst case computed over the bundle's C files and kernels (``mcu_stack``). Returns the
    manifest's ``stack`` record: the reservation and the computed figures (None where not computed)."""
    mcpu = str(target.get("mcpu"))
    board_sources = {"startup.c": embedded_mcu.STARTUP_C, "semihosting.h": embedded_mcu.SEMIHOSTING_H,
                     "semihosting.c": embedded_mcu.SEMIHOSTING_C}
    for name, text in board_sources.items():
        Path(staging, "board", name).write_text(text)
    entries = sorted({f"__tvm_ffi_{s['kernel']}" for s in record["steps"]})
    computed = mcu_stack.bundle_stack(staging, cross_compiler(target), embedded_mcu.stack_cflags(mcpu),
                                      embedded_mcu.C_FILES, entries)
    reserved = mcu_stack.reserved_stack(computed)
    for name, text in embedded_mcu.board_files(reserved).items():
        Path(staging, "board", name).write_text(text)
    return {"reserved_bytes": reserved, "margin_bytes": mcu_stack.STACK_MARGIN_BYTES if computed else None,
            "model_run_bytes": computed["model_run"] if computed else None,
            "image_bytes": computed["image"] if computed else None}


def _mark_updated_params(mod: tvm.IRModule, positions: Sequence[int]) -> tvm.IRModule:
    """``mod`` with ``main`` listing the positions of the parameters a training step updates
    (``layout.UPDATED_PARAMS_ATTR``: the default rewrites leave their layout alone)."""
    from .defaults.layout import UPDATED_PARAMS_ATTR
    marked = tvm.IRModule(dict(mod.functions), attrs=mod.attrs)
    marked["main"] = mod["main"].with_attr(UPDATED_PARAMS_ATTR, [int(p) for p in positions])
    return marked


def build_bundle(mod: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str], *,
                 target: str | Mapping[str, Any], output_dir: str, weights: Mapping[str, np.ndarray],
                 entry: str = "predict", metadata: Mapping[str, Any] | None = None,
                 param_updates: Sequence[int] = ()) -> str:
    """Compile ``mod['main']`` for ``target`` into a build-ready C bundle at ``output_dir``.

    The bundle holds kernels.o, model.c, weights.bin + weights.S, runtime/ (runtime/c), main.c, a
    Makefile and manifest.json. ``make`` in it builds ``model`` with the target's compiler.
    Weight re-layouts (packing, batch-norm folding) run here, at compile time: weights.bin holds
    their results in place of the weights they were computed from (``fold_prepare_steps``).

    ``param_updates`` makes it a training step (``mod``'s trailing outputs are new values of these
    parameters, one each): those parameters (weights being trained, optimizer state) live in RAM,
    start from ``weights`` and take the new values after every ``aotnn_model_run``; the others stay
    const (flash). ``aotnn_model_run`` returns the leading outputs (the loss). On a microcontroller the
    example main.c runs one step per batch stored in train_input<i>.bin (compiled into the image).

    Returns:
        ``output_dir``.
    Raises:
        ValueError: parameters without weights.
        FileExistsError: ``output_dir`` exists and is not an aotnn artifact.
    """
    check_output(output_dir)
    target_dict = resolve(target)
    tvm_target = to_tvm(target_dict)
    missing = [n for n in param_names if n not in weights]
    if missing:
        raise ValueError(f"weights: a bundle needs every parameter's value; missing {missing[:5]}")
    board_training = is_microcontroller(target_dict) and bool(param_updates)
    if board_training:  # trained weights are read where they are: no per-call packed copies in RAM
        mod = _mark_updated_params(mod, [len(input_names) + p for p in param_updates])
    # a training step on a board: no whole feature map before a pooling (frozen layers run on a batch)
    lowered = pipeline.lower_to_kernels(mod, tvm_target, merge_pools=board_training)
    record, constants = entry_record(lowered, input_names, param_names, list(param_updates))
    kernels = _kernel_module(lowered)  # re-layouts run unscheduled, on the host
    record, stored = fold_prepare_steps(record, kernels, stored_tensors(param_names, weights, constants))
    record = lean_training_record(record, kernels)
    used = {s["kernel"] for s in record["steps"]} | {s["kernel"] for s in record["prepare_steps"]}
    kernels = tvm.IRModule({k: kernels[k] for k in sorted(used)})
    rules: dict[str, str | None] = {}
    # the host's default schedules also serve boards: NEON on aarch64, vectorized loops on Cortex-M
    scheduled = apply_default_schedules(kernels, tvm_target, rules)
    if is_microcontroller(target_dict):  # RAM is what a board lacks: no whole intermediate tensors
        generic = [name for name, rule in rules.items() if is_generic(rule, name) or is_merged_pooling(name)]
        rules.update({name: None for name in generic if is_merged_pooling(name)})
        streamed = stream_rows_module(tvm.IRModule({name: kernels[name] for name in generic}))
        scheduled = tvm.IRModule({**{g.name_hint: f for g, f in scheduled.functions.items()},
                                  **{g.name_hint: f for g, f in streamed.functions.items()}})
    kernels = read_inputs_in_place(scheduled, record, kinds=("input", "output"))  # aotnn_model_run_in_place
    offsets, offset = {}, 0
    for name, array in stored:
        offset += (-offset) % 64
        offsets[name] = offset
        offset += np.asarray(array).nbytes
    staging = staging_dir(output_dir)
    try:
        compile_kernels = compile_without_argument_checks if is_microcontroller(target_dict) else tvm.compile
        library = compile_kernels(propagate_nan(kernels), target=tvm_target)
        library.mod.write_to_file(os.path.join(staging, "kernels.o"))
        pool = (_place_scratch_in_arena(record, kernels, tvm_target) if is_microcontroller(target_dict)
                else _pool_bytes(kernels, tvm_target))
        Path(staging, "model.c").write_text(generate_model_c(record, offsets, offset, pool))
        _write_build_files(staging, target_dict, record)
        os.makedirs(os.path.join(staging, "runtime"))
        for name in RUNTIME_FILES:
            shutil.copy(RUNTIME_C / name, os.path.join(staging, "runtime", name))
        extra = {"stack": _write_board_files(staging, target_dict, record)} if is_microcontroller(target_dict) else {}
        manifest = new_manifest(target_dict, entry, record, None,
                                {**(metadata or {}), **extra, "kind": "bundle", KERNEL_RULES_KEY: rules})
        return write_artifact(staging, output_dir, manifest, stored)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
