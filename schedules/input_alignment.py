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


def read_inputs_in_place(kernels: tvm.IRModule, record: dict[str, Any],
                         kinds: tuple[str, ...] = ("input",)) -> tvm.IRModule:
    """``kernels`` with every parameter bound to a model input (in ``record``'s steps) aligned to
    the input's element size; marks those inputs ``"alignment"`` in ``record["inputs"]``.

    Inputs no kernel takes (e.g. returned as they are) keep the runtime's copy and its 64 bytes.
    ``kinds=("input", "output")`` does the same for the outputs (a bundle's
    ``aotnn_model_run_in_place`` hands the caller's buffers to the kernels).
    """
    element_bytes: dict[str, dict[int, int]] = {}  # kernel -> parameter position -> bytes
    read: set[tuple[str, int]] = set()
    for step in [*record.get("prepare_steps", []), *record["steps"]]:
        for position, ref in enumerate(step["args"]):
            if ref["kind"] in kinds:
                itemsize = np.dtype(record[ref["kind"] + "s"][ref["index"]]["dtype"]).itemsize
                element_bytes.setdefault(step["kernel"], {})[position] = itemsize
                read.add((ref["kind"], ref["index"]))
    functions = {}
    for gvar, func in kernels.functions.items():
        positions = element_bytes.get(gvar.name_hint)
        if positions and isinstance(func, tirx.PrimFunc):
            func = relax_alignment(func, set(positions), min(positions.values()))
        functions[gvar.name_hint] = func
    for kind, index in read:
        spec = record[kind + "s"][index]
        spec["alignment"] = np.dtype(spec["dtype"]).itemsize
    return tvm.IRModule(functions)
