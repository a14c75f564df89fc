"""RAM of a training-step bundle: only the trained state is kept between calls.

After ``compile_time_prepare`` a training record still has the prepare steps that read trained
parameters (packing a trained Dense weight, say) and one output per updated parameter, which
``model.c`` copied into the state after every step. Here, for bundles:

- those prepare steps become ordinary steps, run just before the first step that reads their
  results, which become arena buffers (live only while read, not static RAM);
- a new parameter value is written straight into the parameter's state where that is safe: the
  step that computes it reads the old value element by element at the index it writes (an
  element-wise chain in the kernel's TIR) and no later step reads the old value;
- the arena is planned again over the new step sequence.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import tvm
from tvm import tirx
from tvm.s_tir import Schedule

from . import plan as planning
from .defaults import common

DATA_PARALLEL = int(tirx.IterVar.DataPar)


def prepare_steps_into_arena(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with its prepare steps run on every call, each just before the first step that
    reads what it writes, and its prepared tensors as arena buffers (offsets to be planned)."""
    result = copy.deepcopy(dict(record))
    prepare, steps = result.pop("prepare_steps", []), result["steps"]
    result["prepare_steps"] = []
    if not prepare:
        return result
    first_buffer = len(result["buffers"])
    result["buffers"] += [{**spec, "offset": 0, "nbytes": planning.spec_nbytes(spec)} for spec in result.pop("prepared")]
    result["prepared"] = []

    def as_buffer(ref: Mapping[str, Any]) -> dict[str, Any]:
        if ref["kind"] == "prepared":
            return {"kind": "buffer", "index": first_buffer + ref["index"]}
        return dict(ref)

    def reads(step: Mapping[str, Any], prepared: set[int]) -> bool:
        return any(ref["kind"] == "prepared" and ref["index"] in prepared for ref in step["args"])

    # latest position of each prepare step: before the first step (or later prepare step) reading its tensors
    position = [len(steps)] * len(prepare)
    for j in reversed(range(len(prepare))):
        touched = {ref["index"] for ref in prepare[j]["args"] if ref["kind"] == "prepared"}
        readers = [i for i, step in enumerate(steps) if reads(step, touched)]
        readers += [position[k] for k in range(j + 1, len(prepare)) if reads(prepare[k], touched)]
        position[j] = min(readers, default=len(steps))
    order = sorted([(i, 1, i) for i in range(len(steps))] + [(position[j], 0, j) for j in range(len(prepare))])
    result["steps"] = [{**(steps[i] if kind else prepare[i]),
                        "args": [as_buffer(ref) for ref in (steps[i] if kind else prepare[i])["args"]]}
                       for _, kind, i in order]
    result["output_refs"] = [as_buffer(ref) for ref in result["output_refs"]]
    return result


def _elementwise_from(func: tirx.PrimFunc, source: int, target: int) -> bool:
    """Whether every value of ``func``'s parameter ``target`` is computed from ``source``'s value at
    the same index only, through blocks without reductions that read and write at their own
    iteration point (then ``target`` may be ``source``'s memory: each element is read before the
    element that replaces it is written, and by nothing after)."""
    sch = Schedule(func)
    params = sch.mod["main"].params
    src, dst = params[source], params[target]
    if [int(d) for d in src.shape] != [int(d) for d in dst.shape] or str(src.dtype) != str(dst.dtype):
        return False
    tainted = [src]  # tensors holding values derived from src's

    def is_tainted(tensor) -> bool:
        return any(tensor.same_as(t) for t in tainted)

    def at_iteration_point(region, block) -> bool:
        point = [iv.var for iv in block.iter_vars]
        return (len(region.region) == len(point) == len(src.shape)
                and all(r.min.same_as(v) and int(r.extent) == 1 for r, v in zip(region.region, point)))

    for handle in common.root_blocks(sch):  # program order: producers before consumers
        block = sch.get(handle)
        if not any(is_tainted(r.source) for r in block.reads):
            continue
        if any(int(iv.iter_type) != DATA_PARALLEL for iv in block.iter_vars):
            return False
        if any(is_tainted(r.source) and not at_iteration_point(r, block) for r in block.reads):
            return False
        if not all(at_iteration_point(w, block) for w in block.writes):
            return False
        tainted += [w.source for w in block.writes]
    return True


def write_updates_in_place(record: Mapping[str, Any], kernels: tvm.IRModule) -> dict[str, Any]:
    """``record`` with each parameter update written into the parameter itself where safe (see the
    module's docstring): the step's output argument becomes the parameter, whose memory (the
    state) then holds the new value; nothing is copied after the step."""
    result = copy.deepcopy(dict(record))
    steps = result["steps"]
    for update in result.get("param_updates", []):
        param, output = update["param"], update["output"]
        out_ref, param_ref = {"kind": "output", "index": output}, {"kind": "param", "index": param}
        if result["output_refs"][output] != out_ref or result["output_refs"].count(out_ref) != 1:
            continue
        users = [i for i, step in enumerate(steps) if out_ref in step["args"]]
        if not users:
            continue
        writer = users[0]
        if any(param_ref in step["args"] for step in steps[writer + 1:]):
            continue  # a later step still reads the old value
        args = steps[writer]["args"]
        if param_ref in args:
            func = kernels[steps[writer]["kernel"]]
            if len(func.params) != len(args) or not _elementwise_from(
                    func, args.index(param_ref), args.index(out_ref)):
                continue
        spec_out, spec_param = result["outputs"][output], result["params"][param]
        if list(spec_out["shape"]) != list(spec_param["shape"]) or spec_out["dtype"] != spec_param["dtype"]:
            continue
        for step in steps[writer:]:
            step["args"] = [dict(param_ref) if ref == out_ref else ref for ref in step["args"]]
        result["output_refs"][output] = dict(param_ref)
    return result


def plan_arena(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with its buffers placed again in the arena over its (changed) step sequence."""
    result = copy.deepcopy(dict(record))
    spans: dict[int, list[int]] = {}
    for index, step in enumerate(result["steps"]):
        for ref in step["args"]:
            if ref["kind"] == "buffer":
                spans.setdefault(ref["index"], [index, index])[1] = index
    for ref in result["output_refs"]:
        if ref["kind"] == "buffer":  # read after the last step
            spans.setdefault(ref["index"], [len(result["steps"])] * 2)[1] = len(result["steps"])
    sizes = {b: result["buffers"][b]["nbytes"] for b in spans}
    offsets, arena = planning.place_buffers(sizes, {b: tuple(span) for b, span in spans.items()})
    for b, buffer in enumerate(result["buffers"]):
        buffer["offset"] = offsets.get(b, 0)
    result["arena_bytes"] = arena
    return result


def lean_training_record(record: Mapping[str, Any], kernels: tvm.IRModule) -> dict[str, Any]:
    """A training step's record for a bundle: prepare steps in the step sequence, updates written
    in place where safe, the arena planned again. Inference records come back unchanged.

    Args:
        record: an entry record after ``compile_time_prepare.fold_prepare_steps``.
        kernels: the record's kernels (TIR, before scheduling).

    Returns:
        The new record (``record`` is not changed).
    """
    if not record.get("param_updates"):
        return dict(record)
    return plan_arena(write_updates_in_place(prepare_steps_into_arena(record), kernels))
