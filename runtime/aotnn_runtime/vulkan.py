"""Runs Vulkan artifacts: WGSL compute shaders dispatched through wgpu's Vulkan backend.

wgpu (wgpu-native) translates each WGSL shader to SPIR-V and runs it with the Vulkan API; any
other backend (OpenGL, Metal, D3D12) is refused. At load time the executor compiles one pipeline
per kernel, uploads the weights, places every planned intermediate in ONE arena buffer (bound at
the planned offsets when the device's storage-offset alignment allows, else one buffer per slot)
and prepares every bind group, uniform block and workgroup count: shapes are static, so a call
only writes the inputs, records all dispatches in one command encoder, and reads the outputs back.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .errors import ArtifactError, DeviceUnavailableError
from .module import EntryPoint, Module
from .validate import read_kernel_table

KERNELS_FORMAT = "aotnn-wgsl"
NO_ADAPTER = "no Vulkan adapter: install mesa-vulkan-drivers (lavapipe) or a GPU driver"
NO_WGPU = "the Vulkan executor needs the wgpu package: pip install 'aotnn-runtime[vulkan]' (or pip install wgpu)"
_LIMITS = ("max-storage-buffers-per-shader-stage", "max-storage-buffer-binding-size", "max-buffer-size",
           "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
           "max-compute-workgroup-size-x", "max-compute-workgroup-size-y", "max-compute-workgroup-size-z")
_DEVICES: dict[frozenset, tuple[Any, Any]] = {}
_DEVICE_LOCK = threading.Lock()


def _wgpu() -> Any:
    try:
        import wgpu
    except ImportError:
        raise DeviceUnavailableError(NO_WGPU) from None
    return wgpu


def vulkan_adapter() -> Any:
    """The first adapter wgpu reports on the Vulkan backend (discrete GPU first, lavapipe last).

    Raises:
        DeviceUnavailableError: wgpu is missing or no adapter runs on Vulkan.
    """
    wgpu = _wgpu()
    try:  # keep wgpu from probing OpenGL/EGL at all; only possible before its instance exists
        from wgpu.backends.wgpu_native.extras import set_instance_extras
        set_instance_extras(backends=["Vulkan"])
    except Exception:  # noqa: BLE001 - an older wgpu, or the instance exists: filter below
        pass
    try:
        adapters = wgpu.gpu.enumerate_adapters_sync()
    except Exception as err:  # noqa: BLE001 - no loader, no ICD...
        raise DeviceUnavailableError(f"{NO_ADAPTER} (wgpu: {err})") from None
    vulkan = [a for a in adapters if a.info.get("backend_type") == "Vulkan"]
    if not vulkan:
        found = ", ".join(f"{a.info.get('device')} on {a.info.get('backend_type')}" for a in adapters) or "none"
        raise DeviceUnavailableError(f"{NO_ADAPTER} (adapters found: {found})")
    order = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}
    return min(vulkan, key=lambda a: order.get(a.info.get("adapter_type"), 2))


def vulkan_device(features: Sequence[str] = ()) -> tuple[Any, Any]:
    """(adapter, device) shared by every artifact of this process that needs ``features``."""
    key = frozenset(features)
    with _DEVICE_LOCK:
        if key not in _DEVICES:
            adapter = vulkan_adapter()
            missing = [f for f in features if f not in adapter.features]
            if missing:
                raise DeviceUnavailableError(f"the Vulkan adapter {adapter.info.get('device')!r} lacks the "
                                             f"feature(s) {missing} this artifact needs")
            limits = {name: adapter.limits[name] for name in _LIMITS if name in adapter.limits}
            device = adapter.request_device_sync(required_features=list(features), required_limits=limits)
            _DEVICES[key] = (adapter, device)
        return _DEVICES[key]


def _round4(nbytes: int) -> int:
    return max(4, -(-int(nbytes) // 4) * 4)


def _device_dtype(dtype: str) -> str:
    """How a tensor is stored on the device: WGSL has no 1-byte bool buffers, so bools are int32."""
    return "int32" if dtype == "bool" else dtype


def _nbytes(spec: Mapping[str, Any], on_device: bool = False) -> int:
    dtype = _device_dtype(spec["dtype"]) if on_device else spec["dtype"]
    return int(np.prod(spec["shape"], dtype=np.int64)) * np.dtype(dtype).itemsize


class _Kernels:
    """The artifact's shaders compiled to pipelines, and its per-PrimFunc launch table."""

    def __init__(self, path: str, table: Mapping[str, Any], device: Any):
        wgpu = _wgpu()
        self.functions: dict[str, Any] = table["functions"]
        self.pipelines: dict[str, tuple[Any, Any]] = {}
        max_buffers = device.limits.get("max-storage-buffers-per-shader-stage", 8)
        for fname, func in self.functions.items():
            for launch in func["launches"]:
                kernel = launch["kernel"]
                if kernel in self.pipelines:
                    continue
                if len(launch["args"]) > max_buffers:
                    raise DeviceUnavailableError(f"kernel {kernel!r} binds {len(launch['args'])} storage buffers; "
                                                 f"this Vulkan device allows {max_buffers}")
                shader_path = os.path.join(path, launch["shader"])
                try:
                    with open(shader_path, encoding="utf-8") as stream:
                        code = stream.read()
                except OSError as err:
                    raise ArtifactError(f"artifact {path!r}: cannot read shader {launch['shader']!r} ({err})") from None
                entries = [{"binding": i, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": wgpu.BufferBindingType.storage}} for i in range(len(launch["args"]))]
                entries.append({"binding": len(launch["args"]), "visibility": wgpu.ShaderStage.COMPUTE,
                                "buffer": {"type": wgpu.BufferBindingType.uniform}})
                layout = device.create_bind_group_layout(entries=entries)
                try:
                    module = device.create_shader_module(code=code, label=kernel)
                    pipeline = device.create_compute_pipeline(
                        layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
                        compute={"module": module, "entry_point": kernel})
                except Exception as err:  # noqa: BLE001 - naga or the driver rejected the shader
                    raise ArtifactError(f"artifact {path!r}: shader {kernel!r} does not compile on Vulkan: {err}") from None
                self.pipelines[kernel] = (pipeline, layout)


class VulkanEntryPoint(EntryPoint):
    """One entry point run on a Vulkan device; same calling convention as :class:`EntryPoint`."""

    def __init__(self, name: str, record: Mapping[str, Any], kernels: _Kernels, device: Any,
                 weights: dict[str, np.ndarray]):
        wgpu = _wgpu()
        self._read_record(name, record, weights)
        self._device = device
        self._usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        self._buffers = record["buffers"]
        self._prepared = record.get("prepared", [])
        self._slots = {
            "input": [self._new(spec) for spec in self.inputs],
            "param": [self._new(spec) for spec in self.params],
            "output": [self._new(spec) for spec in self.outputs],
            "prepared": [self._new(spec) for spec in self._prepared],
            "buffer": self._arena_slots(record["buffers"]),
        }
        self._scratch: dict[tuple[str, int], tuple[Any, int, int]] = {}
        self._uniforms: dict[tuple[str, int], Any] = {}
        self._prepare = self._record_steps(record.get("prepare_steps", []), kernels)
        self._steps = self._record_steps(record["steps"], kernels)
        # (output index, device buffer, offset, size) of each output a kernel writes, and its staging buffer
        self._readback = [(index, *self._slots["output"][index])
                          for index, ref in enumerate(self.output_refs) if ref["kind"] == "output" and ref["index"] == index]
        self._staging = [device.create_buffer(size=size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
                         for _, _, _, size in self._readback]

    # -- memory
    def _new(self, spec: Mapping[str, Any]) -> tuple[Any, int, int]:
        size = _round4(_nbytes(spec, on_device=True))
        return self._device.create_buffer(size=size, usage=self._usage), 0, size

    def _arena_slots(self, buffers: Sequence[Mapping[str, Any]]) -> list[tuple[Any, int, int]]:
        align = self._device.limits.get("min-storage-buffer-offset-alignment", 256)
        if all(buf["offset"] % align == 0 for buf in buffers):
            arena = self._device.create_buffer(size=_round4(max(self.arena_bytes, 4)), usage=self._usage)
            # bool slots are 4 bytes per element on the device, wider than planned: their own buffers
            return [(arena, buf["offset"], _round4(buf["nbytes"])) if buf["dtype"] != "bool" else self._new(buf)
                    for buf in buffers]
        # The plan's 64-byte offsets are finer than this device binds: one buffer per slot.
        return [self._new(buf) for buf in buffers]

    def _uniform(self, fname: str, index: int, launch: Mapping[str, Any], pack_x: int) -> Any:
        key = (fname, index)
        if key not in self._uniforms:
            words = np.zeros(max(4, -(-(len(launch["scalars"]) + 1) // 4) * 4), np.uint32)
            for i, scalar in enumerate(launch["scalars"]):
                words[i:i + 1] = np.array([scalar["value"]], dtype=scalar["dtype"]).view(np.uint32)
            words[len(launch["scalars"])] = pack_x
            wgpu = _wgpu()
            self._uniforms[key] = self._device.create_buffer_with_data(data=words.tobytes(), usage=wgpu.BufferUsage.UNIFORM)
        return self._uniforms[key]

    def _dispatch_size(self, kernel: str, grid: Sequence[int]) -> tuple[int, int, int]:
        """TVM's WebGPU convention: blockIdx.x beyond the device limit folds into z (packGridDimX guards)."""
        limit = self._device.limits.get("max-compute-workgroups-per-dimension", 65535)
        x, y = int(grid[0]), int(grid[1])
        if y > limit:
            raise DeviceUnavailableError(f"kernel {kernel!r}: {y} workgroups along y; this device allows {limit}")
        z = 1
        while x > limit:
            x, z = -(-x // 2), z * 2
        return x, y, z

    def _record_steps(self, steps: Sequence[Mapping[str, Any]], kernels: _Kernels) -> list[tuple[Any, Any, tuple]]:
        dispatches = []
        for step in steps:
            for ref in step["args"]:
                self._check_ref(ref)
            func = kernels.functions.get(step["kernel"])
            if func is None:
                raise ArtifactError(f"entry {self.name!r}: kernel {step['kernel']!r} is not in the artifact's kernels")
            if len(func["params"]) != len(step["args"]):
                raise ArtifactError(f"entry {self.name!r}: kernel {step['kernel']!r} takes {len(func['params'])} "
                                    f"arguments, the plan passes {len(step['args'])}")
            for index, launch in enumerate(func["launches"]):
                pipeline, layout = kernels.pipelines[launch["kernel"]]
                entries = []
                for binding, arg in enumerate(launch["args"]):
                    if arg["kind"] == "param":
                        ref = step["args"][arg["index"]]
                        buffer, offset, size = self._slots[ref["kind"]][ref["index"]]
                    else:
                        buffer, offset, size = self._scratch_slot(step["kernel"], arg["index"], func)
                    entries.append({"binding": binding, "resource": {"buffer": buffer, "offset": offset, "size": size}})
                grid = self._dispatch_size(launch["kernel"], launch["grid"])
                uniform = self._uniform(step["kernel"], index, launch, int(launch["grid"][0]))
                entries.append({"binding": len(launch["args"]), "resource": {"buffer": uniform, "offset": 0,
                                                                             "size": uniform.size}})
                group = self._device.create_bind_group(layout=layout, entries=entries)
                dispatches.append((pipeline, group, grid))
        return dispatches

    def _scratch_slot(self, fname: str, index: int, func: Mapping[str, Any]) -> tuple[Any, int, int]:
        if (fname, index) not in self._scratch:  # steps run one after another: one scratch per kernel suffices
            size = _round4(func["scratch_bytes"][index])
            self._scratch[(fname, index)] = (self._device.create_buffer(size=size, usage=self._usage), 0, size)
        return self._scratch[(fname, index)]

    # -- running
    def _upload(self, kind: str, arrays: Sequence[np.ndarray]) -> None:
        for (buffer, offset, _), array in zip(self._slots[kind], arrays):
            array = np.asarray(array)
            data = np.ascontiguousarray(array.astype(_device_dtype(str(array.dtype)), copy=False))
            data = data.reshape(-1).view(np.uint8)
            if data.size % 4:
                data = np.concatenate([data, np.zeros(4 - data.size % 4, np.uint8)])
            if data.size:
                self._device.queue.write_buffer(buffer, offset, data)

    def _execute(self, data: list[np.ndarray], weights: list[np.ndarray], key: Any) -> list[np.ndarray]:
        """Run the kernels on the Vulkan device (see :meth:`EntryPoint._execute`)."""
        if key is None or key != self._params_for:
            self._params_for = None
            self._upload("param", weights)
            self._params_for = key
        self._upload("input", data)
        encoder = self._device.create_command_encoder()
        run_prepare = bool(self._prepare) and (key is None or key != self._prepared_for)
        compute = encoder.begin_compute_pass()
        for pipeline, group, grid in (self._prepare if run_prepare else []) + self._steps:
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, group)
            compute.dispatch_workgroups(*grid)
        compute.end()
        for (_, buffer, offset, size), staging in zip(self._readback, self._staging):
            encoder.copy_buffer_to_buffer(buffer, offset, staging, 0, size)
        self._device.queue.submit([encoder.finish()])
        self._prepared_for = key if run_prepare else self._prepared_for
        outputs: dict[int, np.ndarray] = {}
        wgpu = _wgpu()
        for (index, _, _, _), staging in zip(self._readback, self._staging):
            spec = self.outputs[index]
            staging.map_sync(wgpu.MapMode.READ)
            try:
                raw = np.frombuffer(staging.read_mapped(), np.uint8)[:_nbytes(spec, on_device=True)]
            finally:
                staging.unmap()
            outputs[index] = raw.view(_device_dtype(spec["dtype"])).reshape(spec["shape"]).astype(spec["dtype"])
        sources = {"input": data, "param": weights}
        results = []
        for index, ref in enumerate(self.output_refs):
            if ref["kind"] == "output":
                results.append(outputs[ref["index"]].copy() if ref["index"] != index else outputs[index])
            elif ref["kind"] in sources:
                results.append(np.array(sources[ref["kind"]][ref["index"]]))
            else:
                raise ArtifactError(f"entry {self.name!r}: output {index} refers to {ref!r}, which the Vulkan "
                                    f"executor cannot read back")
        return results


class VulkanModule(Module):
    """A loaded Vulkan artifact (``target.kind == "vulkan"``): weights on the device, pipelines compiled.

    Args:
        path: the artifact directory written by ``aotnn`` with ``target="vulkan"``.
    Raises:
        ArtifactError: the artifact is missing, corrupt or its shaders do not compile.
        DeviceUnavailableError: wgpu is not installed or no Vulkan adapter is present.
    """

    def __init__(self, path: str | os.PathLike):
        from .manifest import read_manifest
        self.path = os.fspath(path)
        self.manifest = read_manifest(self.path)
        table = self._read_table()
        self.adapter, self.device = vulkan_device(table.get("features", []))
        self.weights = self._load_weights()
        kernels = _Kernels(self.path, table, self.device)
        self._entries = {name: VulkanEntryPoint(name, record, kernels, self.device, self.weights)
                         for name, record in self.manifest["entries"].items()}

    def _read_table(self) -> dict[str, Any]:
        return read_kernel_table(self.path, self.manifest, KERNELS_FORMAT)

    @property
    def device_name(self) -> str:
        """The Vulkan device the kernels run on, as the driver names it."""
        return f"{self.adapter.info.get('device')} ({self.adapter.info.get('backend_type')})"

    def set_num_threads(self, count: int) -> None:
        """Accepted for interface parity; the Vulkan device schedules its own threads."""
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count: expected a positive int, got {count!r}")
