"""Runs CUDA artifacts through the CUDA driver API (``libcuda``, installed with the NVIDIA driver).

The artifact holds a cubin compiled by NVRTC for its ``arch`` and the PTX of the same kernels;
the executor loads the cubin when the GPU has that architecture and otherwise lets the driver
JIT-compile the PTX. No CUDA toolkit, no TVM: ctypes calls into ``libcuda.so.1``. At load time
the weights are copied to the GPU once, every planned intermediate gets its place in ONE arena
allocation, and every launch's argument block is prepared; a call copies the inputs in, launches
the kernels in order on the default stream and copies the outputs back.
"""
from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import ArtifactError, DeviceUnavailableError
from .module import EntryPoint, Module
from .validate import read_kernel_table, resolve_inside

KERNELS_FORMAT = "aotnn-cuda"
NO_DRIVER = ("no CUDA driver: libcuda.so.1 was not found; running a CUDA artifact needs an NVIDIA GPU "
             "with its driver installed")
_SCALARS = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
            "float32": ctypes.c_float, "float64": ctypes.c_double}
_MAX_DYNAMIC_SHARED = 8  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES


class Driver:
    """The few CUDA driver calls the executor makes, each checked.

    Raises:
        DeviceUnavailableError: ``libcuda.so.1`` is missing, or the driver reports no GPU.
    """

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise DeviceUnavailableError(NO_DRIVER) from None
        self.check(self.lib.cuInit(0), "cuInit")
        count = ctypes.c_int()
        self.check(self.lib.cuDeviceGetCount(ctypes.byref(count)), "cuDeviceGetCount")
        if count.value == 0:
            raise DeviceUnavailableError("no CUDA GPU: the NVIDIA driver is installed but reports no device")
        self.device = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(self.device), 0), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.device), "cuDevicePrimaryCtxRetain")
        self.check(self.lib.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def check(self, status: int, call: str) -> None:
        if status != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(status, ctypes.byref(text))
            raise RuntimeError(f"CUDA {call} failed: {(text.value or b'?').decode()} (error {status})")

    def arch(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.lib.cuDeviceGetAttribute(ctypes.byref(major), 75, self.device)
        self.lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, self.device)
        return f"sm_{major.value}{minor.value}"

    def alloc(self, nbytes: int) -> ctypes.c_uint64:
        pointer = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(max(int(nbytes), 1))), "cuMemAlloc")
        return pointer

    def to_device(self, pointer: int, array: np.ndarray) -> None:
        array = np.ascontiguousarray(array)
        if array.nbytes:
            self.check(self.lib.cuMemcpyHtoD_v2(ctypes.c_uint64(pointer), array.ctypes.data_as(ctypes.c_void_p),
                                                ctypes.c_size_t(array.nbytes)), "cuMemcpyHtoD")

    def to_host(self, array: np.ndarray, pointer: int) -> None:
        if array.nbytes:
            self.check(self.lib.cuMemcpyDtoH_v2(array.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint64(pointer),
                                                ctypes.c_size_t(array.nbytes)), "cuMemcpyDtoH")

    def load_module(self, image: bytes) -> ctypes.c_void_p:
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)), "cuModuleLoadData")
        return module

    def function(self, module: ctypes.c_void_p, name: str, dynamic_shared: int) -> ctypes.c_void_p:
        func = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), module, name.encode()), f"cuModuleGetFunction({name})")
        if dynamic_shared > 48 * 1024:
            self.check(self.lib.cuFuncSetAttribute(func, _MAX_DYNAMIC_SHARED, dynamic_shared), "cuFuncSetAttribute")
        return func

    def launch(self, func: ctypes.c_void_p, grid: Sequence[int], block: Sequence[int], shared: int, args: Any) -> None:
        self.check(self.lib.cuLaunchKernel(func, *[ctypes.c_uint(v) for v in grid], *[ctypes.c_uint(v) for v in block],
                                           ctypes.c_uint(shared), None, args, None), "cuLaunchKernel")

    def synchronize(self) -> None:
        self.check(self.lib.cuCtxSynchronize(), "cuCtxSynchronize")


def _cubin_runs(device_arch: str, cubin_arch: str) -> bool:
    """A cubin for sm_XY runs on GPUs of the same major version X and a minor version >= Y."""
    device, cubin = device_arch[3:], cubin_arch[3:]
    return device[:-1] == cubin[:-1] and device[-1:] >= cubin[-1:]


def _nbytes(spec: Mapping[str, Any]) -> int:
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(spec["dtype"]).itemsize


class CudaEntryPoint(EntryPoint):
    """One entry point run on the GPU; same calling convention as :class:`EntryPoint`."""

    def __init__(self, name: str, record: Mapping[str, Any], table: Mapping[str, Any], functions: Mapping[str, Any],
                 driver: Driver, weights: dict[str, np.ndarray]):
        self._read_record(name, record, weights)
        self._driver = driver
        self._buffers = record["buffers"]
        self._prepared = record.get("prepared", [])
        arena = driver.alloc(self.arena_bytes)
        self._memory = [arena]  # keeps every allocation referenced for the module's lifetime
        self._slots = {kind: [self._alloc(spec) for spec in specs] for kind, specs in
                       (("input", self.inputs), ("param", self.params), ("output", self.outputs),
                        ("prepared", self._prepared))}
        self._slots["buffer"] = [arena.value + buf["offset"] for buf in self._buffers]
        self._scratch: dict[tuple[str, int], int] = {}
        self._prepare = self._record(record.get("prepare_steps", []), table, functions)
        self._steps = self._record(record["steps"], table, functions)

    def _alloc(self, spec: Mapping[str, Any]) -> int:
        pointer = self._driver.alloc(_nbytes(spec))
        self._memory.append(pointer)
        return pointer.value

    def _record(self, steps: Sequence[Mapping[str, Any]], table: Mapping[str, Any], functions: Mapping[str, Any]) -> list:
        launches = []
        for step in steps:
            for ref in step["args"]:
                self._check_ref(ref)
            func = table["functions"].get(step["kernel"])
            if func is None or len(func["params"]) != len(step["args"]):
                raise ArtifactError(f"entry {self.name!r}: kernel {step['kernel']!r} is missing or takes other arguments")
            for launch in func["launches"]:
                values = []
                for arg in launch["args"]:
                    if arg["kind"] == "param":
                        ref = step["args"][arg["index"]]
                        values.append(ctypes.c_uint64(self._slots[ref["kind"]][ref["index"]]))
                    else:
                        key = (step["kernel"], arg["index"])
                        if key not in self._scratch:
                            self._scratch[key] = self._alloc({"shape": [func["scratch_bytes"][arg["index"]]], "dtype": "uint8"})
                        values.append(ctypes.c_uint64(self._scratch[key]))
                values += [_SCALARS[s["dtype"]](s["value"]) for s in launch["scalars"]]
                pointers = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in values])
                launches.append((functions[launch["kernel"]], launch["grid"], launch["block"],
                                 launch["dynamic_shared_bytes"], pointers, values))
        return launches

    def _execute(self, data: list[np.ndarray], weights: list[np.ndarray], key: Any) -> list[np.ndarray]:
        """Run the kernels on the GPU (see :meth:`EntryPoint._execute`)."""
        if key is None or key != self._params_for:
            self._params_for = None
            for pointer, array in zip(self._slots["param"], weights):
                self._driver.to_device(pointer, array)
            self._params_for = key
        for pointer, array in zip(self._slots["input"], data):
            self._driver.to_device(pointer, array)
        run_prepare = bool(self._prepare) and (key is None or key != self._prepared_for)
        for func, grid, block, shared, pointers, _ in (self._prepare if run_prepare else []) + self._steps:
            self._driver.launch(func, grid, block, shared, pointers)
        self._driver.synchronize()
        if run_prepare:
            self._prepared_for = key
        results = []
        sources = {"input": data, "param": weights}
        for index, ref in enumerate(self.output_refs):
            if ref["kind"] == "output":
                spec = self.outputs[ref["index"]]
                out = np.empty(spec["shape"], spec["dtype"])
                self._driver.to_host(out, self._slots["output"][ref["index"]])
                results.append(out)
            elif ref["kind"] in sources:
                results.append(np.array(sources[ref["kind"]][ref["index"]]))
            else:
                raise ArtifactError(f"entry {self.name!r}: output {index} refers to {ref!r}, which cannot be read back")
        return results


class CudaModule(Module):
    """A loaded CUDA artifact (``target.kind == "cuda"``).

    Args:
        path: the artifact directory written by ``aotnn`` with ``target="cuda"``.
    Raises:
        ArtifactError: the artifact is missing or corrupt.
        DeviceUnavailableError: no NVIDIA driver (``libcuda.so.1``) or no GPU.
    """

    def __init__(self, path: str | os.PathLike):
        from .manifest import read_manifest
        self.path = os.fspath(path)
        self.manifest = read_manifest(self.path)
        table = read_kernel_table(self.path, self.manifest, KERNELS_FORMAT)
        self._driver = Driver()
        self.arch = self._driver.arch()
        image_file = table["cubin"] if _cubin_runs(self.arch, table["arch"]) or not table.get("ptx") else table["ptx"]
        with open(resolve_inside(self.path, image_file), "rb") as stream:
            image = stream.read() + (b"\0" if image_file.endswith(".ptx") else b"")
        self._module = self._driver.load_module(image)
        functions = {launch["kernel"]: self._driver.function(self._module, launch["kernel"], launch["dynamic_shared_bytes"])
                     for func in table["functions"].values() for launch in func["launches"]}
        self.weights = self._load_weights()
        self._entries = {name: CudaEntryPoint(name, record, table, functions, self._driver, self.weights)
                         for name, record in self.manifest["entries"].items()}

    def set_num_threads(self, count: int) -> None:
        """Accepted for interface parity; the GPU schedules its own threads."""
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count: expected a positive int, got {count!r}")
