"""GPU kernels: DLight's default schedules, then TIR lowering into device kernels plus launch records.

A GPU kernel module is a set of PrimFuncs (one per ``call_tir`` of ``main``). Each is scheduled
with DLight's default GPU rules (thread bindings make it legal on a GPU), then lowered by TVM's
TIR pipeline, which splits it into host code and device kernels. The host side of every PrimFunc
is just a series of ``call_ffi_kernel`` launches; we read those launches here instead of building
a host library, so that an executor with no TVM (Vulkan through wgpu, CUDA through the driver
API) can replay them: which kernel, which PrimFunc parameter goes to which kernel argument, the
scalar arguments and the grid and block sizes (numbers: shapes are static).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm
from tvm import tirx
from tvm.s_tir import dlight as dl
from tvm.sym import Analyzer

GPU_KINDS = ("cuda", "webgpu", "vulkan")
# Passes that need the packed host ABI, which we do not build: without them the host functions
# keep their buffer parameters, so kernel arguments map straight back to PrimFunc parameters.
_HOST_ABI_PASSES = ["tirx.MakePackedAPI", "tirx.FP8StorageLegalize", "tirx.BF16StorageLegalize"]
_DEVICE_CALLING_CONV = 2  # kDeviceKernelLaunch


class GpuLoweringError(RuntimeError):
    """A kernel whose host side does something a TVM-free GPU executor cannot replay."""


def is_gpu(target: tvm.target.Target | Mapping[str, Any]) -> bool:
    """True for targets whose kernels run on a GPU (CUDA, WebGPU/Vulkan)."""
    kind = target.kind.name if isinstance(target, tvm.target.Target) else target.get("kind")
    return kind in GPU_KINDS


def default_rules() -> list:
    """DLight's default GPU rules, most specific first; Fallback binds whatever is left to threads."""
    return [dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback()]


def scheduled_candidates(func: tirx.PrimFunc, target: tvm.target.Target) -> Iterator[tuple[str, Any]]:
    """``func`` scheduled by each DLight rule that applies, in rule order: (rule name, PrimFunc or error).

    ``dl.ApplyDefaultSchedule`` takes the first rule that applies and fails the build when that
    rule crashes or its schedule does not lower; the build tries the next candidate instead.
    """
    if func.attrs is not None and func.attrs.get("tirx.is_scheduled"):
        yield "scheduled", func
        return
    for rule in default_rules():
        try:
            space = rule.apply(func, target, False)
        except Exception as err:  # noqa: BLE001 - e.g. an internal check of a rule on an odd kernel
            yield type(rule).__name__, err
            continue
        if space is not None:
            sch = space[0] if isinstance(space, list) else space
            yield type(rule).__name__, sch.mod["main"].with_attr("tirx.is_scheduled", True)


def apply_gpu_schedules(mod: tvm.IRModule, target: tvm.target.Target) -> tvm.IRModule:
    """Every PrimFunc of ``mod`` scheduled by the first DLight default GPU rule that applies."""
    funcs = {}
    with target:
        for gvar, func in mod.functions.items():
            if isinstance(func, tirx.PrimFunc):
                func = next((f for _, f in scheduled_candidates(func, target) if isinstance(f, tirx.PrimFunc)), func)
            funcs[gvar] = func
    return tvm.IRModule(funcs, attrs=mod.attrs)


@dataclass
class Launch:
    """One device kernel launch inside a PrimFunc.

    ``args`` name where each buffer argument of the kernel comes from: ``("param", i)`` is the
    PrimFunc's i-th parameter, ``("scratch", j)`` its j-th device scratch allocation.
    """
    kernel: str
    args: list[tuple[str, int]]
    scalars: list[tuple[str, int | float]]          # (dtype, value) in kernel-argument order
    launch: dict[str, int]                          # "blockIdx.x" -> extent, ...; dynamic shared bytes
    write: list[bool] = field(default_factory=list)  # per buffer argument, when the codegen tells

    def grid(self) -> list[int]:
        return [self.launch.get(f"blockIdx.{a}", 1) for a in "xyz"]

    def block(self) -> list[int]:
        return [self.launch.get(f"threadIdx.{a}", 1) for a in "xyz"]

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "args": [{"kind": k, "index": i} for k, i in self.args],
                "write": self.write, "scalars": [{"dtype": d, "value": v} for d, v in self.scalars],
                "grid": self.grid(), "block": self.block(),
                "dynamic_shared_bytes": self.launch.get("tirx.use_dyn_shared_memory", 0)}


@dataclass
class FunctionLaunches:
    """The launches of one PrimFunc, its parameters and its device scratch buffers (bytes)."""
    name: str
    params: list[dict[str, Any]]
    scratch: list[int]
    launches: list[Launch]

    def to_json(self) -> dict[str, Any]:
        return {"params": self.params, "scratch_bytes": self.scratch,
                "launches": [launch.to_json() for launch in self.launches]}


@dataclass
class GpuKernels:
    """What the TIR pipeline made of a kernel module: device code and how to launch it."""
    device_mod: tvm.IRModule
    functions: dict[str, FunctionLaunches]


def _constant(expr: Any, analyzer: Analyzer, what: str) -> int | float:
    if isinstance(expr, (int, float)):
        return expr
    value = analyzer.simplify(expr)
    if isinstance(value, tvm.tirx.IntImm) or type(value).__name__ == "IntImm":
        return int(value.value)
    if type(value).__name__ == "FloatImm":
        return float(value.value)
    raise GpuLoweringError(f"{what}: expected a number (shapes are static), got {value}")


def _buffer_params(func: tirx.PrimFunc, name: str) -> tuple[dict[Any, int], list[dict[str, Any]]]:
    data_index, specs = {}, []
    for i, param in enumerate(func.params):
        if not isinstance(param.ty, tirx.BufferType):  # buffer parameters are typed Vars here
            raise GpuLoweringError(f"kernel {name!r}: parameter {param} is not a buffer")
        data_index[param] = i
        specs.append({"shape": [int(d) for d in param.shape], "dtype": str(param.dtype)})
    return data_index, specs


def _nbytes(buf: tirx.Buffer, analyzer: Analyzer, name: str) -> int:
    count = 1
    for dim in buf.shape:
        count *= int(_constant(dim, analyzer, f"kernel {name!r}: scratch buffer {buf.name}"))
    return count * np.dtype(str(buf.dtype)).itemsize


def _host_launches(name: str, func: tirx.PrimFunc, kernels: Mapping[str, tirx.PrimFunc]) -> FunctionLaunches:
    data_index, specs = _buffer_params(func, name)
    sources: dict[Any, tuple[str, int]] = {var: ("param", i) for var, i in data_index.items()}
    analyzer = Analyzer()
    scratch: list[int] = []
    launches: list[Launch] = []

    def walk(stmt: Any) -> None:
        if isinstance(stmt, tirx.SeqStmt):
            for item in stmt.seq:
                walk(item)
        elif isinstance(stmt, tirx.DeclBuffer):  # a flat view of a parameter or scratch buffer
            viewed = _buffer_of(stmt.data)
            if viewed is None or viewed not in sources:
                raise GpuLoweringError(f"kernel {name!r}: buffer {stmt.buffer.name} views unknown memory")
            sources[stmt.buffer] = sources[viewed]
        elif isinstance(stmt, tirx.AllocBuffer):
            sources[stmt.buffer] = ("scratch", len(scratch))
            scratch.append(_nbytes(stmt.buffer, analyzer, name))
        elif isinstance(stmt, tirx.Bind):
            analyzer.bind(stmt.var, stmt.value)
        elif isinstance(stmt, tirx.Evaluate) and _is_kernel_call(stmt.value):
            launches.append(_launch(stmt.value, sources, analyzer, kernels, name))
        else:
            raise GpuLoweringError(f"kernel {name!r}: its host code holds {type(stmt).__name__} "
                                   f"({str(stmt).strip()[:120]}), which a GPU executor cannot replay")

    walk(func.body)
    if not launches:
        raise GpuLoweringError(f"kernel {name!r}: lowering produced no device kernel")
    return FunctionLaunches(name, specs, scratch, launches)


def _buffer_of(expr: Any) -> Any:
    """The buffer whose data pointer ``expr`` is (``T.buffer_data(buf)``), or None."""
    if isinstance(expr, tvm.ir.Call) and getattr(expr.op, "name", "") == "tirx.buffer_data":
        return expr.args[0]
    return None


def _is_pointer(param: Any) -> bool:
    return type(param.ty).__name__ == "PointerType"


def _is_kernel_call(value: Any) -> bool:
    return isinstance(value, tvm.ir.Call) and getattr(value.op, "name", "") == "tirx.call_ffi_kernel"


def _launch(call: Any, sources: Mapping[Any, tuple[str, int]], analyzer: Analyzer,
            kernels: Mapping[str, tirx.PrimFunc], name: str) -> Launch:
    kernel = str(call.args[0].value)
    tags = [str(t) for t in call.attrs.launch_params]
    args = list(call.args[1:len(call.args) - len(tags)])
    extents = call.args[len(call.args) - len(tags):]
    device_func = kernels.get(kernel)
    if device_func is None:
        raise GpuLoweringError(f"kernel {name!r}: launches {kernel!r}, which the device module lacks")
    buffers, scalars = [], []
    for arg, param in zip(args, device_func.params):
        if _is_pointer(param):
            buf = _buffer_of(arg)
            if buf is None or buf not in sources:
                raise GpuLoweringError(f"kernel {name!r}: argument {arg} of {kernel!r} is not a known buffer")
            buffers.append(sources[buf])
        else:
            scalars.append((str(param.ty.dtype), _constant(arg, analyzer, f"kernel {name!r}: scalar {param}")))
    launch = {tag: int(_constant(e, analyzer, f"kernel {name!r}: launch extent {tag}")) for tag, e in zip(tags, extents)}
    return Launch(kernel, buffers, scalars, launch)


def _lower_one(gvar: Any, func: tirx.PrimFunc, target: tvm.target.Target) -> tvm.IRModule:
    """TVM's TIR pipeline on one scheduled PrimFunc, host ABI passes left out (see _HOST_ABI_PASSES)."""
    bound = tvm.tirx.transform.BindTarget(target.with_host(tvm.target.Target("llvm")))(tvm.IRModule({gvar: func}))
    passes, _, _ = tvm.tirx.get_default_tir_pipeline(target)
    with tvm.transform.PassContext(disabled_pass=_HOST_ABI_PASSES):
        return passes(bound)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[0] if lines else repr(err))[:200]


def lower_gpu(kernel_mod: tvm.IRModule, target: tvm.target.Target) -> GpuKernels:
    """Schedule ``kernel_mod`` for ``target`` and lower it to device kernels and launch records.

    Each PrimFunc takes the first DLight rule whose schedule also lowers.

    Args:
        kernel_mod: PrimFuncs named like ``main``'s ``call_tir`` kernels.
        target: a GPU TVM target (``cuda`` or ``webgpu``).
    Returns:
        the device IRModule (finalized, ready for ``codegen_build``) and per-PrimFunc launches.
    Raises:
        GpuLoweringError: a PrimFunc no rule schedules, or whose host side cannot be replayed without TVM.
    """
    functions: dict[str, FunctionLaunches] = {}
    device = {}
    with target:
        for gvar, func in kernel_mod.functions.items():
            errors = []
            for rule, candidate in scheduled_candidates(func, target):
                if isinstance(candidate, BaseException):
                    errors.append(f"{rule}: {_first_line(candidate)}")
                    continue
                try:  # the schedule must lower, and its host side must be a replayable launch list
                    lowered = _lower_one(gvar, candidate, target)
                    kernels = {g.name_hint: f for g, f in lowered.functions.items() if _is_device(f)}
                    functions[gvar.name_hint] = _host_launches(gvar.name_hint, lowered[gvar.name_hint], kernels)
                except Exception as err:  # noqa: BLE001 - try the next rule
                    errors.append(f"{rule}: {_first_line(err)}")
                    continue
                break
            else:
                raise GpuLoweringError(f"kernel {gvar.name_hint!r}: no GPU schedule lowers "
                                       f"({'; '.join(errors) or 'no DLight rule applies'})")
            device.update({g: f for g, f in lowered.functions.items() if _is_device(f)})
    _, _, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    device_mod = tvm.ir.transform.Sequential([tvm.tirx.transform.FP8StorageLegalize(),
                                              tvm.tirx.transform.BF16StorageLegalize(),
                                              finalize_device()])(tvm.IRModule(device))
    return GpuKernels(device_mod, functions)


def _is_device(func: tirx.PrimFunc) -> bool:
    return func.attrs is not None and func.attrs.get("calling_conv") == _DEVICE_CALLING_CONV


def codegen(device_mod: tvm.IRModule, target: tvm.target.Target) -> Any:
    """The device runtime module of ``device_mod`` (CUDA source or WGSL shaders inside)."""
    from tvm.tirx.build import codegen_build
    return codegen_build(device_mod, target)
