"""Tuning tasks: one per distinct kernel (PrimFunc workload) that a model's ``main`` calls per run."""
from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import tvm
import tvm_ffi
from tvm import tirx

from .. import pipeline, plan as planning
from ..defaults import apply_default_schedules


@dataclass
class Task:
    """A kernel to tune.

    Attributes:
        key: the workload's structural hash (hex): the database key.
        name: a kernel name that has this workload (the first one).
        mod: the unscheduled kernel as an IRModule with one function, ``main``.
        weight: how many times one run of the model calls it.
        flops: floating-point operations per call (TVM's estimate).
        kernels: every kernel name of the model with this workload.
    """
    key: str
    name: str
    mod: tvm.IRModule
    weight: int
    flops: float
    kernels: list[str] = field(default_factory=list)

    def default_module(self, target: tvm.target.Target) -> tvm.IRModule:
        """The kernel with aotnn's default schedule (the baseline tuning has to beat)."""
        return apply_default_schedules(self.mod, target)


def workload_module(func: tirx.PrimFunc) -> tvm.IRModule:
    """The canonical one-function module of a kernel (names do not matter, structure does)."""
    return tvm.IRModule({"main": func.with_attr("global_symbol", "main")})


def module_key(mod: tvm.IRModule) -> str:
    """A stable hex key of a module's structure (variable names ignored)."""
    return f"{tvm_ffi.structural_hash(mod) & 0xFFFFFFFFFFFFFFFF:016x}"


def estimate_flops(mod: tvm.IRModule) -> float:
    from tvm.s_tir.analysis import estimate_tir_flops
    try:
        return float(estimate_tir_flops(mod))
    except Exception:  # noqa: BLE001 - FLOPs only annotate the report
        return 0.0


def call_counts(lowered: tvm.IRModule, num_inputs: int) -> Mapping[str, int]:
    """How many times one run of ``main`` calls each kernel (weight-only steps excluded)."""
    kernel_plan = planning.extract(lowered, num_inputs)
    prepare = planning.prepare_steps(kernel_plan)
    return collections.Counter(s["kernel"] for i, s in enumerate(kernel_plan.steps) if i not in prepare)


def tasks_of_lowered(lowered: tvm.IRModule, num_inputs: int) -> list[Task]:
    """The tasks of an already lowered module (``pipeline.lower_to_kernels``' output)."""
    counts = call_counts(lowered, num_inputs)
    by_key: dict[str, Task] = {}
    for gvar, func in lowered.functions.items():
        if not isinstance(func, tirx.PrimFunc) or counts.get(gvar.name_hint, 0) == 0:
            continue
        mod = workload_module(func)
        key = module_key(mod)
        task = by_key.get(key)
        if task is None:
            by_key[key] = Task(key, gvar.name_hint, mod, 0, estimate_flops(mod))
            task = by_key[key]
        task.weight += counts[gvar.name_hint]
        task.kernels.append(gvar.name_hint)
    return sorted(by_key.values(), key=lambda t: t.name)


def extract_tasks(mod: tvm.IRModule, input_names: Sequence[str], target: tvm.target.Target) -> list[Task]:
    """The tuning tasks of a captured Relax module (``main`` takes the data inputs, then parameters).

    Args:
        mod: the captured module, before lowering.
        input_names: names of the data inputs (the first parameters of ``main``).
        target: the TVM target the kernels are built for.
    Returns:
        one Task per distinct kernel workload that runs on every call, sorted by name.
    """
    lowered = pipeline.lower_to_kernels(mod, target)
    return tasks_of_lowered(lowered, len(input_names))
