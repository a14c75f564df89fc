"""The scratch memory kernels really ask for: their ``TVMBackendAllocWorkspace`` calls after lowering.

The scheduled TIR's ``alloc_buffer``s overstate it (fused intermediates are inlined or shrunk by
the lowering: DS-CNN's kernels declared 405 KB and asked for 80 KB), and a microcontroller pays
for the static pool in RAM. Lowering the kernels once more with TVM's default TIR pipeline gives
the allocation calls with their constant sizes.
"""
from __future__ import annotations

import re

import tvm

_CALL = re.compile(r"TVMBackendAllocWorkspace\(\s*\d+,\s*[\w.]+,\s*T\.uint64\((\d+)\)")
_ANY_CALL = re.compile(r"TVMBackendAllocWorkspace\(")


def lowered_workspace_per_kernel(kernels: tvm.IRModule, target: tvm.target.Target) -> dict[str, int] | None:
    """Per kernel, an upper bound of the scratch memory it asks for: the sum of its workspace
    allocations, 64-byte aligned (kernels free in LIFO order). None when an allocation's size is
    not a constant (the caller then falls back to the scheduled TIR's estimate)."""
    from tvm.tirx.build import split_host_device_mods
    mod = tvm.tirx.transform.BindTarget(target.with_host(target))(kernels)
    pipeline, finalize_host, _ = tvm.tirx.get_default_tir_pipeline(target)
    host, _ = split_host_device_mods(pipeline(mod))
    host = finalize_host()(host)
    found = {}
    for gvar, func in host.functions.items():
        script = func.script()
        sizes = [int(n) for n in _CALL.findall(script)]
        if len(sizes) != len(_ANY_CALL.findall(script)):
            return None
        found[gvar.name_hint] = sum(-(-n // 64) * 64 for n in sizes)
    return found


def lowered_workspace_bytes(kernels: tvm.IRModule, target: tvm.target.Target) -> int | None:
    """An upper bound of the static pool the kernels need: the largest kernel's scratch
    (``lowered_workspace_per_kernel``; kernels run one at a time), or None where it is unknown."""
    found = lowered_workspace_per_kernel(kernels, target)
    return None if found is None else max(found.values(), default=0) + 64
