"""From a lowered Relax ``main`` to a flat kernel call sequence and a static memory plan.

After the fusing pipeline, ``main`` is a dataflow block of ``call_tir`` bindings. Every
intermediate tensor gets a place in ONE arena; two tensors share bytes when their lifetimes
do not overlap (greedy best-fit by size, 64-byte aligned offsets).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm
from tvm import relax, tirx

ALIGNMENT = 64


class PlanError(RuntimeError):
    """The lowered graph holds something the kernel sequence cannot express."""


@dataclass
class Value:
    """A tensor in the plan: an input, a parameter, a constant or a kernel result."""
    kind: str                      # "input", "param", "const", "buffer"
    index: int
    shape: tuple[int, ...]
    dtype: str


@dataclass
class KernelPlan:
    steps: list[dict] = field(default_factory=list)          # {"kernel": name, "args": [Value...], "outputs": n}
    buffers: list[Value] = field(default_factory=list)
    constants: list[np.ndarray] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)


def _tensor_spec(ty) -> tuple[tuple[int, ...], str]:
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise PlanError(f"only static-shape tensors are supported, got {ty}")
    return tuple(int(v) for v in ty.shape.values), str(ty.dtype)


def extract(mod: tvm.IRModule, num_inputs: int) -> KernelPlan:
    """Turn ``mod['main']`` into kernel steps over inputs, params, constants and buffers.

    The first ``num_inputs`` function parameters are data inputs, the rest parameters.
    """
    func = mod["main"]
    plan = KernelPlan()
    env: dict[Any, Any] = {}
    for i, var in enumerate(func.params):
        shape, dtype = _tensor_spec(var.ty)
        kind, index = ("input", i) if i < num_inputs else ("param", i - num_inputs)
        env[var] = Value(kind, index, shape, dtype)

    def resolve(expr):
        if isinstance(expr, relax.Var):
            if expr not in env:
                raise PlanError(f"'main' reads {expr.name_hint}, which no parameter or earlier binding defines "
                                "(a pass dropped the binding that computed it)")
            return env[expr]
        if isinstance(expr, tvm.ir.expr.Constant) or isinstance(expr, relax.expr.Constant if hasattr(relax.expr, "Constant") else ()):
            array = expr.value.numpy()
            shape, dtype = tuple(array.shape), str(array.dtype)
            plan.constants.append(np.ascontiguousarray(array).reshape(shape))  # keep 0-d constants 0-d
            return Value("const", len(plan.constants) - 1, shape, dtype)
        if isinstance(expr, relax.Tuple):
            return [resolve(field_) for field_ in expr.fields]
        if isinstance(expr, relax.TupleGetItem):
            return resolve(expr.tuple_value)[expr.index]
        raise PlanError(f"cannot plan expression {type(expr).__name__}: {expr}")

    call_tir = tvm.ir.Op.get("relax.call_tir")
    body = func.body
    for block in body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and value.op.same_as(call_tir):
                kernel = value.args[0].name_hint
                args = [resolve(a) for a in value.args[1].fields]
                out_ty = value.ty
                outs = []
                for ty in (out_ty.fields if isinstance(out_ty, relax.TupleType) else [out_ty]):
                    shape, dtype = _tensor_spec(ty)
                    plan.buffers.append(Value("buffer", len(plan.buffers), shape, dtype))
                    outs.append(plan.buffers[-1])
                plan.steps.append({"kernel": kernel, "args": args + outs, "outputs": len(outs)})
                env[binding.var] = outs if isinstance(out_ty, relax.TupleType) else outs[0]
            else:
                env[binding.var] = resolve(value)
    result = resolve(body.body)
    plan.outputs = result if isinstance(result, list) else [result]
    return plan


def prepare_steps(plan: KernelPlan) -> set[int]:
    """Indices of steps that depend on parameters and constants only (weight re-layouts...).

    Such steps need to run only when the parameters change. A step whose result is also a
    graph output stays in the per-call sequence.
    """
    outputs = {v.index for v in plan.outputs if v.kind == "buffer"}
    derived: set[int] = set()
    chosen: set[int] = set()
    for index, step in enumerate(plan.steps):
        inputs = step["args"][:len(step["args"]) - step["outputs"]]
        results = step["args"][len(step["args"]) - step["outputs"]:]
        static = all(v.kind in ("param", "const") or (v.kind == "buffer" and v.index in derived) for v in inputs)
        if static and inputs and not any(v.index in outputs for v in results):
            chosen.add(index)
            derived.update(v.index for v in results)
    return chosen


def nbytes(value: Value) -> int:
    return int(np.prod(value.shape, dtype=np.int64)) * np.dtype(value.dtype).itemsize


def spec_nbytes(spec: dict[str, Any]) -> int:
    """Bytes of a tensor described by a manifest spec ({"shape", "dtype"})."""
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize


def assign_offsets(plan: KernelPlan, exclude: set[int]) -> tuple[dict[int, int], int, int]:
    """Place every buffer not in ``exclude`` in one arena.

    Returns:
        (offset per buffer index, arena size in bytes, sum of the placed buffers' sizes).
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for step_index, step in enumerate(plan.steps):
        for arg in step["args"]:
            if isinstance(arg, Value) and arg.kind == "buffer" and arg.index not in exclude:
                first.setdefault(arg.index, step_index)
                last[arg.index] = step_index
    sizes = {b: nbytes(plan.buffers[b]) for b in first if b not in exclude}
    offsets, arena = place_buffers(sizes, {b: (first[b], last[b]) for b in sizes})
    total = sum(-(-max(size, 1) // ALIGNMENT) * ALIGNMENT for size in sizes.values())
    return offsets, arena, total


def place_buffers(sizes: dict[int, int], spans: dict[int, tuple[int, int]]) -> tuple[dict[int, int], int]:
    """Place buffers in one arena, largest first, each at the lowest offset free during its span.

    Args:
        sizes: bytes of each buffer (by any key).
        spans: (first step, last step) during which each buffer of ``sizes`` is live.

    Returns:
        (offset of each buffer, 64-byte aligned; the arena's size).
    """
    placed: list[tuple[int, int, int, int]] = []   # (offset, size, first, last)
    offsets: dict[int, int] = {}
    for b in sorted(sizes, key=lambda b: (-sizes[b], b)):
        size = -(-max(sizes[b], 1) // ALIGNMENT) * ALIGNMENT
        first, last = spans[b]
        live = sorted((o, s) for o, s, f, l in placed if not (l < first or last < f))
        offset = 0
        for o, s in live:
            if offset + size <= o:
                break
            offset = max(offset, o + s)
        offsets[b] = offset
        placed.append((offset, size, first, last))
    arena = max((o + s for o, s, _, _ in placed), default=0)
    return offsets, arena


def place_step_scratch(buffers: list[tuple[int, int, int, int]], sizes: list[int]) -> tuple[list[int], int]:
    """Place each step's scratch block in the arena beside the buffers live during that step.

    Args:
        buffers: (offset, bytes, first step, last step) of every buffer already in the arena.
        sizes: scratch bytes of each step (0: none).

    Returns:
        (offset of each step's block, 0 where none; the arena's size with the blocks in it).
    """
    arena = max((o + s for o, s, _, _ in buffers), default=0)
    offsets = []
    for step, size in enumerate(sizes):
        if size <= 0:
            offsets.append(0)
            continue
        size = -(-size // ALIGNMENT) * ALIGNMENT
        live = sorted((o, s) for o, s, first, last in buffers if first <= step <= last)
        offset = 0
        for o, s in live:
            if offset + size <= o:
                break
            offset = max(offset, -(-(o + s) // ALIGNMENT) * ALIGNMENT)
        offsets.append(offset)
        arena = max(arena, offset + size)
    return offsets, arena
