"""Each kernel's work, recorded in the manifest for the profiler (``aotnn run --profile``).

A step's ``"flops"`` counts the floating-point operations its kernel performs, as TVM's
``estimate_tir_flops`` counts them on the kernel before scheduling (a multiply-add is two: a
Dense of an ``[M, K]`` input and an ``[N, K]`` weight is ``2*M*N*K``); schedules only reorder
that work. A step's ``"bytes"`` is the size of the tensors it reads and writes, each counted
once: the least memory traffic the kernel can have, so the achieved GB/s is a lower bound.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm
from tvm import tirx
from tvm.s_tir.analysis import estimate_tir_flops

_TABLES = {"input": "inputs", "param": "params", "output": "outputs", "buffer": "buffers", "prepared": "prepared"}


def kernel_flops(func: tirx.PrimFunc) -> int | None:
    """Floating-point operations of one call of ``func``; None where TVM cannot count them
    (loops of a size only known at run time)."""
    try:
        flops = estimate_tir_flops(tvm.IRModule({"main": func}))
    except Exception:  # noqa: BLE001 - a count is optional: the profiler then shows none
        return None
    return int(flops) if math.isfinite(flops) and flops >= 0 else None


def step_bytes(step: Mapping[str, Any], record: Mapping[str, Any]) -> int:
    """Bytes of the distinct tensors a step reads and writes."""
    seen = set()
    total = 0
    for ref in step["args"]:
        slot = (ref["kind"], ref["index"])
        if slot in seen:
            continue
        seen.add(slot)
        spec = record[_TABLES[ref["kind"]]][ref["index"]]
        total += math.prod(spec["shape"]) * np.dtype(spec["dtype"]).itemsize
    return int(total)


def record_kernel_costs(kernels: tvm.IRModule, record: dict[str, Any]) -> None:
    """Add ``"flops"`` (where countable) and ``"bytes"`` to each step of ``record``, counting the
    kernels of ``kernels`` (before scheduling)."""
    flops = {gvar.name_hint: kernel_flops(func) for gvar, func in kernels.functions.items()
             if isinstance(func, tirx.PrimFunc)}
    for steps in ("prepare_steps", "steps"):
        for step in record.get(steps, []):
            count = flops.get(step["kernel"])
            if count is not None:
                step["flops"] = count
            step["bytes"] = step_bytes(step, record)
