"""Kernels that read the model's inputs where the caller's arrays lie.

TVM assumes every buffer argument starts on a 64-byte boundary (it tells LLVM so), while numpy
places a large array's data 16 bytes past one. The runtime therefore copied each input into an
aligned staging buffer before the first kernel: for one 224x224 RGB image a 600 KB pass over
memory the last inference had evicted from the caches (about 0.1 ms, 2-3% of a MobileNetV2
inference on two cores). Here the kernels that take a model input declare that buffer aligned
only to its element size, and the manifest says so, so the runtime hands the caller's array over
as it is. x86 and Arm vector loads accept unaligned addresses.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm
from tvm import tirx


def relax_alignment(func: tirx.PrimFunc, positions: set[int], alignment: int) -> tirx.PrimFunc:
    """``func`` with the buffer parameters at ``positions`` declared aligned to ``alignment`` bytes.

    TVM 0.27 offers no Python mutator for a parameter's buffer type, and ``PrimFunc.specialize``
    refuses to change an alignment; the function's serialized form is edited instead. A
    parameter is one node referenced by every access, so the change reaches them all.

    Raises:
        ValueError: a position that is not a buffer parameter of ``func``.
    """
    graph = json.loads(tvm.ir.save_json(func))
    nodes = graph["nodes"]
    params = nodes[nodes[graph["root_index"]]["data"]["params"]]["data"]
    for position in positions:
        if not 0 <= position < len(params):
            raise ValueError(f"positions: expected parameter indices below {len(params)}, got {position}")
        buffer_type = nodes[nodes[params[position]]["data"]["ty"]]
        if buffer_type.get("type") != "tirx.BufferType":
            raise ValueError(f"positions: parameter {position} is not a buffer")
        buffer_type["data"]["data_alignment"] = min(alignment, buffer_type["data"]["data_alignment"])
    return tvm.ir.load_json(json.dumps(graph))


def read_inputs_in_place(kernels: tvm.IRModule, record: dict[str, Any]) -> tvm.IRModule:
    """``kernels`` with every parameter bound to a model input (in ``record``'s steps) aligned to
    the input's element size; marks those inputs ``"alignment"`` in ``record["inputs"]``.

    An input that a step passes to anything other than a kernel of ``kernels`` keeps the full
    alignment (the runtime then still stages it).
    """
    names = {gvar.name_hint for gvar in kernels.functions}
    uses: dict[str, set[int]] = {}
    relaxed_inputs: set[int] = set()
    blocked: set[int] = set()
    for step in [*record.get("prepare_steps", []), *record["steps"]]:
        for position, ref in enumerate(step["args"]):
            if ref["kind"] != "input":
                continue
            if step["kernel"] in names:
                uses.setdefault(step["kernel"], set()).add(position)
                relaxed_inputs.add(ref["index"])
            else:
                blocked.add(ref["index"])
    for ref in record.get("output_refs", []):
        if ref.get("kind") == "input":
            blocked.add(ref["index"])
    functions = {}
    for gvar, func in kernels.functions.items():
        positions = uses.get(gvar.name_hint)
        if positions and isinstance(func, tirx.PrimFunc):
            elements = {_element_bytes(record, step_kernel=gvar.name_hint, position=p) for p in positions}
            func = relax_alignment(func, positions, min(elements))
        functions[gvar.name_hint] = func
    for index in relaxed_inputs - blocked:
        spec = record["inputs"][index]
        spec["alignment"] = np.dtype(spec["dtype"]).itemsize
    return tvm.IRModule(functions)


def _element_bytes(record: Mapping[str, Any], step_kernel: str, position: int) -> int:
    """The element size of the input a kernel's parameter is bound to (the smallest over steps)."""
    sizes = [np.dtype(record["inputs"][step["args"][position]["index"]]["dtype"]).itemsize
             for step in [*record.get("prepare_steps", []), *record["steps"]]
             if step["kernel"] == step_kernel and step["args"][position]["kind"] == "input"]
    return min(sizes)
