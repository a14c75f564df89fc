"""Build: a captured Relax module -> an artifact directory (kernel library, manifest, weights)."""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import tirx

import aotnn_runtime
from aotnn_runtime.manifest import FORMAT_NAME, FORMAT_VERSION, MANIFEST_FILE, file_sha256
from aotnn_runtime.owned_files import remove_path
from aotnn_runtime.weights import BUILT_WEIGHTS_FILE

from . import backend, cache, pipeline, plan as planning
from .defaults import apply_default_schedules
from .gpu import GPU_KINDS
from .input_alignment import read_inputs_in_place
from .nan_propagation import propagate_nan
from .output_dir import check_output, commit_staging, staging_dir
from .kernel_costs import record_kernel_costs
from .parallel_extents import record_parallel_extents
from .target import resolve, to_tvm

LIBRARY_FILE = "kernels.so"
WEIGHTS_FILE = BUILT_WEIGHTS_FILE
KERNEL_RULES_KEY = "kernel_rules"  # metadata: kernel -> the default schedule rule that scheduled it (None: none)
BUILD_VERSION = "2"  # 2: 0-d constants kept 0-d (artifacts of 1 stored them as shape (1,))


def _kernel_module(lowered: tvm.IRModule) -> tvm.IRModule:
    funcs = {}
    for gvar, func in lowered.functions.items():
        if isinstance(func, tirx.PrimFunc):
            funcs[gvar.name_hint] = func.with_attr("global_symbol", gvar.name_hint)
    return tvm.IRModule(funcs)


def _spec(value: planning.Value, name: str | None = None) -> dict[str, Any]:
    spec = {"shape": list(value.shape), "dtype": value.dtype}
    if name is not None:
        spec = {"name": name, **spec}
    return spec


def _write_weights(directory: str, named: Sequence[tuple[str, np.ndarray]]) -> dict[str, Any]:
    records, offset = [], 0
    with open(os.path.join(directory, WEIGHTS_FILE), "wb") as stream:
        for name, array in named:
            array = np.ascontiguousarray(array).reshape(np.shape(array))  # keep 0-d arrays 0-d
            pad = (-offset) % planning.ALIGNMENT
            stream.write(b"\0" * pad)
            offset += pad
            stream.write(array.tobytes())
            records.append({"name": name, "offset": offset, "nbytes": int(array.nbytes),
                            "shape": list(array.shape), "dtype": str(array.dtype)})
            offset += array.nbytes
    return {"file": WEIGHTS_FILE, "tensors": records}


def entry_record(lowered: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str],
                 num_param_updates: int | Sequence[int] = 0) -> tuple[dict[str, Any], list[tuple[str, np.ndarray]]]:
    """The manifest record of one entry point (kernel sequence, memory plan, tensor specs).

    ``num_param_updates`` may be the list of updated parameter indices (one per trailing output,
    in order), which the runtime needs to write updates back; a bare count records 0, 1, 2...

    Returns:
        (record, constants): constants are the graph's embedded tensors, stored like weights
        under the names the record's parameter table gives them.
    """
    kernel_plan = planning.extract(lowered, len(input_names))

    # Outputs produced by a kernel are written straight into the output buffers.
    output_of_buffer: dict[int, int] = {}
    output_refs = []
    for k, value in enumerate(kernel_plan.outputs):
        if value.kind == "buffer" and value.index not in output_of_buffer:
            output_of_buffer[value.index] = k
            output_refs.append({"kind": "output", "index": k})
        elif value.kind == "buffer":
            output_refs.append({"kind": "output", "index": output_of_buffer[value.index]})
        else:
            output_refs.append({"kind": value.kind, "index": value.index})
    prepare = planning.prepare_steps(kernel_plan)
    prepared_buffers = sorted({v.index for i in prepare
                               for v in kernel_plan.steps[i]["args"][-kernel_plan.steps[i]["outputs"]:]})
    prepared_slot = {b: i for i, b in enumerate(prepared_buffers)}
    offsets, arena_bytes, unplanned_bytes = planning.assign_offsets(
        kernel_plan, set(output_of_buffer) | set(prepared_buffers))
    buffer_slot = {b: i for i, b in enumerate(sorted(offsets))}

    param_specs = [_spec(v, n) for v, n in zip(_param_values(lowered, len(input_names)), param_names)]
    const_base = len(param_specs)
    const_names = [f"__const{i}" for i in range(len(kernel_plan.constants))]
    param_specs += [{"name": n, "shape": list(c.shape), "dtype": str(c.dtype)}
                    for n, c in zip(const_names, kernel_plan.constants)]

    def ref(value: planning.Value) -> dict[str, Any]:
        if value.kind == "buffer":
            if value.index in output_of_buffer:
                return {"kind": "output", "index": output_of_buffer[value.index]}
            if value.index in prepared_slot:
                return {"kind": "prepared", "index": prepared_slot[value.index]}
            return {"kind": "buffer", "index": buffer_slot[value.index]}
        if value.kind == "const":
            return {"kind": "param", "index": const_base + value.index}
        return {"kind": value.kind, "index": value.index}

    for r in output_refs:
        if r["kind"] == "const":
            r.update(kind="param", index=const_base + r["index"])

    num_outputs = len(kernel_plan.outputs)
    updated = range(num_param_updates) if isinstance(num_param_updates, int) else list(num_param_updates)
    record = {
        "inputs": [_spec(v, n) for v, n in zip(_input_values(lowered, len(input_names)), input_names)],
        "params": param_specs,
        "outputs": [_spec(v) for v in kernel_plan.outputs],
        "output_refs": output_refs,
        "param_updates": [{"param": p, "output": num_outputs - len(updated) + i} for i, p in enumerate(updated)],
        "buffers": [{**_spec(kernel_plan.buffers[b]), "offset": offsets[b],
                     "nbytes": planning.nbytes(kernel_plan.buffers[b])} for b in sorted(offsets)],
        "arena_bytes": arena_bytes,
        "unplanned_bytes": unplanned_bytes,
        "prepared": [_spec(kernel_plan.buffers[b]) for b in prepared_buffers],
        "prepare_steps": [{"kernel": s["kernel"], "args": [ref(a) for a in s["args"]]}
                          for i, s in enumerate(kernel_plan.steps) if i in prepare],
        "steps": [{"kernel": s["kernel"], "args": [ref(a) for a in s["args"]]}
                  for i, s in enumerate(kernel_plan.steps) if i not in prepare],
    }
    return record, list(zip(const_names, kernel_plan.constants))


def write_artifact(staging: str, output_dir: str, manifest: dict[str, Any],
                   stored: Sequence[tuple[str, np.ndarray]]) -> str:
    """Add weights, file hashes and the manifest to ``staging``, then move it to ``output_dir``.

    Raises:
        FileExistsError: ``output_dir`` exists and is not an aotnn artifact (it is left as it is).
    """
    if stored:
        manifest["weights"] = _write_weights(staging, stored)
    files = {}
    for root, _, names in os.walk(staging):
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, staging)
            files[rel] = {"size": os.path.getsize(full), "sha256": file_sha256(full)}
    manifest["files"] = dict(sorted(files.items()))
    with open(os.path.join(staging, MANIFEST_FILE), "w", encoding="utf-8") as stream:
        json.dump(manifest, stream, indent=1)
    commit_staging(staging, output_dir)
    return output_dir


def new_manifest(target_dict: dict, entry: str, record: dict, library: str | None,
                 metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "target": target_dict,
        "versions": {"tvm": tvm.__version__, "aotnn_runtime": aotnn_runtime.__version__, "build": BUILD_VERSION},
        "library": library,
        "entries": {entry: record},
        "metadata": dict(metadata or {}),
    }


def stored_tensors(param_names: Sequence[str], weights: Mapping[str, np.ndarray] | None,
                   constants: Sequence[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
    stored = [(n, np.asarray(weights[n])) for n in param_names if n in weights] if weights else []
    return stored + list(constants)


def build(mod: tvm.IRModule, input_names: Sequence[str], param_names: Sequence[str], *,
          target: str | Mapping[str, Any] | None = None, output_dir: str,
          weights: Mapping[str, np.ndarray] | None = None, num_param_updates: int = 0,
          entry: str = "predict", metadata: Mapping[str, Any] | None = None,
          tuning_db: str | os.PathLike | None = None) -> str:
    """Compile ``mod['main']`` for the host and write an artifact directory at ``output_dir`` (atomically).

    Args:
        mod: Relax module whose ``main`` takes the data inputs then the parameters.
        input_names: names of the data inputs, in order.
        param_names: names of the parameters, in order.
        target: target name or TVM target dict (default: the host x86 CPU).
        output_dir: where the artifact directory is created; an aotnn artifact there is replaced,
            anything else there is refused.
        weights: parameter values to store in the artifact (optional).
        num_param_updates: how many trailing outputs are new values of parameters
            (the last ones recorded by the capture, in ``param_updates`` order), or the list of
            the parameter indices they update (what aotnn_runtime needs to write them back).
        entry: name of the entry point.
        metadata: extra JSON-able facts to keep in the manifest.
        tuning_db: a tuning database directory (``aotnn tune``): kernels use its best record
            where that beats the default schedule.
    Returns:
        ``output_dir``.
    Raises:
        FileExistsError: ``output_dir`` exists and is not an aotnn artifact (checked before compiling).
    """
    check_output(output_dir)
    target_dict = resolve(target)
    if target_dict.get("kind") in GPU_KINDS:  # GPU artifacts: WGSL shaders / CUDA kernels
        from .cuda import build_cuda
        from .vulkan import build_vulkan
        builder = build_cuda if target_dict["kind"] == "cuda" else build_vulkan
        return builder(mod, input_names, param_names, target=target_dict, output_dir=output_dir, weights=weights,
                       num_param_updates=num_param_updates, entry=entry, metadata=metadata)
    tvm_target = to_tvm(target_dict)
    lowered = pipeline.lower_to_kernels(mod, tvm_target)
    record, constants = entry_record(lowered, input_names, param_names, num_param_updates)
    staging = staging_dir(output_dir)
    try:
        kernels = _kernel_module(lowered)
        record_kernel_costs(kernels, record)
        rules: dict[str, str | None] = {}
        scheduled = apply_default_schedules(kernels, tvm_target, rules)
        if tuning_db is not None:
            from .tuning.apply import apply_records
            scheduled = apply_records(kernels, scheduled, target_dict, tuning_db)
        scheduled = read_inputs_in_place(scheduled, record)
        record_parallel_extents(scheduled, record)
        library = tvm.compile(propagate_nan(scheduled), target=tvm_target)
        objects = backend.host_objects(os.path.join(cache.cache_dir(), "backend"))
        library.export_library(os.path.join(staging, LIBRARY_FILE), addons=objects)
        manifest = new_manifest(target_dict, entry, record, LIBRARY_FILE,
                                {**dict(metadata or {}), KERNEL_RULES_KEY: rules})
        return write_artifact(staging, output_dir, manifest, stored_tensors(param_names, weights, constants))
    except BaseException:
        remove_path(staging)
        raise


def _input_values(lowered: tvm.IRModule, num_inputs: int) -> list[planning.Value]:
    return [planning.Value("input", i, *planning._tensor_spec(v.ty))
            for i, v in enumerate(lowered["main"].params[:num_inputs])]


def _param_values(lowered: tvm.IRModule, num_inputs: int) -> list[planning.Value]:
    return [planning.Value("param", i, *planning._tensor_spec(v.ty))
            for i, v in enumerate(lowered["main"].params[num_inputs:])]
