"""Bundles for boards without Python: kernel objects, a generated C executor, runtime/c, weights.

The generated ``model.c`` calls the kernels in order on ONE static arena laid out by the memory
plan (64-byte aligned), keeps weights linked in (``weights.S`` includes ``weights.bin``) or
loaded by the caller, and gives kernels scratch memory from a static pool sized at compile
time: the inference path never touches the heap.
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

from . import backend, pipeline
from .build import (_kernel_module, entry_record, new_manifest, staging_dir, stored_tensors, write_artifact)
from .output_dir import check_output
from . import embedded_mcu
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


def _c_dtype(dtype: str) -> tuple[int, int]:
    code = dlpack_code(np.dtype(dtype))
    if code is None:
        raise KeyError(dtype)
    return code


def _nbytes(spec: Mapping[str, Any]) -> int:
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize


def _live_prepare_steps(prepare_steps: Sequence[Mapping[str, Any]], updated_params: set[int]) -> set[int]:
    """The prepare steps (by id) that must run on every call because they read a parameter a
    training step updates, or a prepared tensor such a step touches (over-approximated: every
    prepared argument of a live step counts as changed)."""
    live, changed = set(), set()
    for step in prepare_steps:
        args = step["args"]
        if any((a["kind"] == "param" and a["index"] in updated_params)
               or (a["kind"] == "prepared" and a["index"] in changed) for a in args):
            live.add(id(step))
            changed.update(a["index"] for a in args if a["kind"] == "prepared")
    return live


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
    """The C source that runs one entry point's kernels on the static arena."""
    lines = ['/* Generated by aotnn: runs the model\'s kernels in order on one static arena. */',
             '#include <string.h>', '#include "runtime/aotnn_abi.h"', '#include "runtime/aotnn_runtime.h"', '',
             '#define A64 __attribute__((aligned(64)))', '']
    kernels = sorted({s["kernel"] for s in record["steps"]} | {s["kernel"] for s in record["prepare_steps"]})
    lines += [f"extern int32_t __tvm_ffi_{k}(void*, void*, int32_t, void*);" for k in kernels]
    lines += ["", f"static uint8_t aotnn_arena[{max(record['arena_bytes'], 64)}] A64;",
              f"uint8_t aotnn_workspace_pool[{workspace_bytes}] A64;",
              f"const size_t aotnn_workspace_pool_bytes = {workspace_bytes};",
              "#ifndef AOTNN_WEIGHTS_FROM_FILE",
              "extern const uint8_t aotnn_weights_blob[];",
              "static const uint8_t* aotnn_weights = aotnn_weights_blob;",
              "#else", "static const uint8_t* aotnn_weights = 0;", "#endif",
              f"static const size_t aotnn_weights_size = {weights_size};", ""]
    tensors: list[str] = []
    kinds = {"input": record["inputs"], "output": record["outputs"], "param": record["params"],
             "buffer": record["buffers"], "prepared": record["prepared"]}
    for kind, specs in kinds.items():
        for i, spec in enumerate(specs):
            shape = ", ".join(str(int(d)) for d in spec["shape"]) or "1"
            lines.append(f"static int64_t {kind}{i}_shape[] = {{{shape}}};")
            if kind in ("input", "output", "prepared"):
                lines.append(f"static uint8_t {kind}{i}_data[{max(_nbytes(spec), 1)}] A64;")
            tensors.append((kind, i, spec))
    updates = list(record.get("param_updates", []))
    updated_params = {u["param"] for u in updates}
    for i in sorted(updated_params):  # a training step's parameters and optimizer state: RAM (.bss)
        lines.append(f"static uint8_t param{i}_state[{max(_nbytes(record['params'][i]), 1)}] A64;")
    lines.append("")
    for kind, i, spec in tensors:
        code, bits = _c_dtype(spec["dtype"])
        lines.append(f"static AotnnDLTensor {kind}{i} = {{0, {{AOTNN_DL_CPU, 0}}, {len(spec['shape'])}, "
                     f"{{{code}, {bits}, 1}}, {kind}{i}_shape, 0, 0}};")
    lines += ["", "static void aotnn_bind(void) {"]
    for kind, i, spec in tensors:
        if kind in ("input", "output", "prepared"):
            lines.append(f"  {kind}{i}.data = {kind}{i}_data;")
        elif kind == "buffer":
            lines.append(f"  buffer{i}.data = aotnn_arena + {spec['offset']};")
        elif i in updated_params:
            lines.append(f"  param{i}.data = param{i}_state;")
        else:
            lines.append(f"  param{i}.data = (void*)(aotnn_weights + {weight_offsets[spec['name']]});")
    lines += ["}", ""]

    def call(step, indent="  "):
        args = ", ".join(f"{{AOTNN_FFI_DLTENSOR_PTR, 0, {{.v_ptr = &{a['kind']}{a['index']}}}}}" for a in step["args"])
        return [f"{indent}{{", f"{indent}  AotnnFFIAny args[] = {{{args}}};",
                f"{indent}  AotnnFFIAny result = {{AOTNN_FFI_NONE, 0, {{0}}}};",
                f"{indent}  aotnn_workspace_reset();",
                f"{indent}  if (__tvm_ffi_{step['kernel']}(0, args, {len(step['args'])}, &result) != 0) return AOTNN_ERR_KERNEL;",
                f"{indent}}}"]

    live = _live_prepare_steps(record["prepare_steps"], updated_params)
    lines += ["static int aotnn_prepared = 0;", "", "static aotnn_status aotnn_prepare(void) {"]
    for i in sorted(updated_params):  # a training step starts from the weights' values
        lines.append(f"  memcpy(param{i}_state, aotnn_weights + {weight_offsets[record['params'][i]['name']]}, "
                     f"{_nbytes(record['params'][i])});")
    for step in record["prepare_steps"]:
        if id(step) not in live:
            lines += call(step)
    lines += ["  aotnn_prepared = 1;", "  return AOTNN_OK;", "}", ""]
    lines += ["aotnn_status aotnn_model_run(const void* const* inputs, void* const* outputs) {",
              "  size_t i;", "  if (inputs == 0 || outputs == 0) { aotnn_set_error(\"inputs and outputs must not be NULL\"); return AOTNN_ERR_ARGUMENT; }",
              f"  for (i = 0; i < {len(record['inputs'])}; ++i) if (inputs[i] == 0) {{ aotnn_set_error(\"an input pointer is NULL\"); return AOTNN_ERR_ARGUMENT; }}",
              f"  for (i = 0; i < {len(record['outputs']) - len(updates)}; ++i) if (outputs[i] == 0) {{ aotnn_set_error(\"an output pointer is NULL\"); return AOTNN_ERR_ARGUMENT; }}",
              "  if (aotnn_weights == 0) { aotnn_set_error(\"no weights: call aotnn_model_set_weights\"); return AOTNN_ERR_WEIGHTS; }",
              "  aotnn_install_backend();  /* no constructors on bare metal: the hooks are set here */",
              "  aotnn_bind();"]
    for i, spec in enumerate(record["inputs"]):
        lines.append(f"  memcpy(input{i}_data, inputs[{i}], {_nbytes(spec)});")
    lines.append("  if (!aotnn_prepared) { aotnn_status rc = aotnn_prepare(); if (rc != AOTNN_OK) return rc; }")
    for step in record["prepare_steps"]:  # forms of parameters a training step changes: every call
        if id(step) in live:
            lines += call(step)
    for step in record["steps"]:
        lines += call(step)
    num_outputs = len(record["outputs"]) - len(updates)
    for i, (spec, ref) in enumerate(zip(record["outputs"], record["output_refs"])):
        source = f"{ref['kind']}{ref['index']}.data"
        if i < num_outputs:
            lines.append(f"  memcpy(outputs[{i}], {source}, {_nbytes(spec)});")
    for update in updates:  # after every kernel ran: the step's new values become the state
        ref = record["output_refs"][update["output"]]
        source = f"{ref['kind']}{ref['index']}.data"
        lines.append(f"  if ({source} != (void*)param{update['param']}_state) "
                     f"memcpy(param{update['param']}_state, {source}, {_nbytes(record['params'][update['param']])});")
    lines += ["  return AOTNN_OK;", "}", "",
              "aotnn_status aotnn_model_set_weights(const void* data, size_t size) {",
              "  if (data == 0 || size != aotnn_weights_size || ((uintptr_t)data & 63u) != 0) {",
              "    aotnn_set_error(\"weights: expected the bundle's weights.bin, 64-byte aligned\"); return AOTNN_ERR_WEIGHTS; }",
              "  aotnn_weights = (const uint8_t*)data;", "  aotnn_prepared = 0;", "  return AOTNN_OK;", "}", ""]
    lines += _state_accessors(record, updates)
    sizes_in = ", ".join(str(_nbytes(s)) for s in record["inputs"]) or "0"
    sizes_out = ", ".join(str(_nbytes(s)) for s in record["outputs"][:num_outputs]) or "0"
    lines += [f"static const size_t aotnn_input_sizes[] = {{{sizes_in}}};",
              f"static const size_t aotnn_output_sizes[] = {{{sizes_out}}};",
              f"size_t aotnn_model_num_inputs(void) {{ return {len(record['inputs'])}; }}",
              f"size_t aotnn_model_num_outputs(void) {{ return {num_outputs}; }}",
              f"size_t aotnn_model_input_bytes(size_t i) {{ return i < {len(record['inputs'])} ? aotnn_input_sizes[i] : 0; }}",
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
    for name, text in embedded_mcu.board_files().items():
        Path(staging, "board", name).write_text(text)


def build_bundle(mod: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str], *,
                 target: str | Mapping[str, Any], output_dir: str, weights: Mapping[str, np.ndarray],
                 entry: str = "predict", metadata: Mapping[str, Any] | None = None,
                 param_updates: Sequence[int] = ()) -> str:
    """Compile ``mod['main']`` for ``target`` into a build-ready C bundle at ``output_dir``.

    The bundle holds kernels.o, model.c, weights.bin + weights.S, runtime/ (runtime/c), main.c, a
    Makefile and manifest.json. ``make`` in it builds ``model`` with the target's compiler.

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
    lowered = pipeline.lower_to_kernels(mod, tvm_target)
    record, constants = entry_record(lowered, input_names, param_names, list(param_updates))
    kernels = _kernel_module(lowered)
    stored = stored_tensors(param_names, weights, constants)
    offsets, offset = {}, 0
    for name, array in stored:
        offset += (-offset) % 64
        offsets[name] = offset
        offset += np.asarray(array).nbytes
    staging = staging_dir(output_dir)
    try:
        library = tvm.compile(propagate_nan(kernels), target=tvm_target)
        library.mod.write_to_file(os.path.join(staging, "kernels.o"))
        Path(staging, "model.c").write_text(generate_model_c(record, offsets, offset, _pool_bytes(kernels, tvm_target)))
        _write_build_files(staging, target_dict, record)
        os.makedirs(os.path.join(staging, "runtime"))
        for name in RUNTIME_FILES:
            shutil.copy(RUNTIME_C / name, os.path.join(staging, "runtime", name))
        manifest = new_manifest(target_dict, entry, record, None, {**(metadata or {}), "kind": "bundle"})
        return write_artifact(staging, output_dir, manifest, stored)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
