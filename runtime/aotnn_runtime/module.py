"""Executes an artifact's entry points: kernels called in order over one planned arena."""
from __future__ import annotations

import ctypes
import json
import os
import platform
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm_ffi

from .buffers import aligned_empty, as_aligned
from .errors import ArtifactError, InputError
from .manifest import read_manifest

_REF_KINDS = ("input", "param", "buffer", "output", "prepared")


def _spec_text(spec: Mapping[str, Any]) -> str:
    return f"{spec['dtype']}{list(spec['shape'])}"


class EntryPoint:
    """One compiled function of an artifact (``predict``, ``train_step``...)."""

    def __init__(self, name: str, record: Mapping[str, Any], library: Any, weights: dict[str, np.ndarray]):
        self.name = name
        self.inputs: list[dict] = record["inputs"]
        self.params: list[dict] = record["params"]
        self.outputs: list[dict] = record["outputs"]
        self.output_refs: list[dict] = record["output_refs"]
        self.param_updates: list[dict] = record.get("param_updates", [])
        self.arena_bytes: int = record["arena_bytes"]
        self._weights = weights
        self._arena = aligned_empty((max(self.arena_bytes, 1),), np.uint8)
        self._buffers = []
        for buf in record["buffers"]:
            view = self._arena[buf["offset"]:buf["offset"] + buf["nbytes"]].view(buf["dtype"]).reshape(buf["shape"])
            self._buffers.append(tvm_ffi.from_dlpack(view))
        self._prepared = [tvm_ffi.from_dlpack(aligned_empty(tuple(spec["shape"]), spec["dtype"]))
                          for spec in record.get("prepared", [])]
        self._prepared_for: Any = None
        self._prepare_steps = self._load_steps(record.get("prepare_steps", []), library)
        self._steps = self._load_steps(record["steps"], library)

    def _load_steps(self, steps: list[dict], library: Any) -> list:
        loaded = []
        for step in steps:
            try:
                kernel = library[step["kernel"]]
            except Exception:
                raise ArtifactError(f"entry {self.name!r}: kernel {step['kernel']!r} is not in the kernel library") from None
            for ref in step["args"]:
                self._check_ref(ref)
            loaded.append((kernel, [(ref["kind"], ref["index"]) for ref in step["args"]]))
        return loaded

    def _check_ref(self, ref: Mapping[str, Any]) -> None:
        limits = {"input": len(self.inputs), "param": len(self.params), "buffer": len(self._buffers),
                  "output": len(self.outputs), "prepared": len(self._prepared)}
        if ref.get("kind") not in _REF_KINDS or not 0 <= ref.get("index", -1) < limits[ref["kind"]]:
            raise ArtifactError(f"entry {self.name!r}: malformed argument reference {ref!r}")

    def _check_inputs(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        if len(inputs) != len(self.inputs):
            names = ", ".join(spec["name"] for spec in self.inputs)
            raise InputError(f"{self.name}: expected {len(self.inputs)} input(s) ({names}), got {len(inputs)}")
        checked = []
        for spec, value in zip(self.inputs, inputs):
            checked.append(self._check_array(f"input {spec['name']!r}", spec, value))
        return checked

    @staticmethod
    def _check_array(what: str, spec: Mapping[str, Any], value: Any) -> np.ndarray:
        if not isinstance(value, np.ndarray):
            if hasattr(value, "asnumpy"):
                value = value.asnumpy()
            elif isinstance(value, (int, float, bool, np.generic, list, tuple)):
                value = np.asarray(value)
            else:
                raise InputError(f"{what}: expected a numpy array of {_spec_text(spec)}, got {type(value).__name__}")
        if value.dtype != np.dtype(spec["dtype"]):
            raise InputError(f"{what}: expected dtype {spec['dtype']}, got {value.dtype}")
        if tuple(value.shape) != tuple(spec["shape"]):
            raise InputError(f"{what}: expected shape {tuple(spec['shape'])} (rank {len(spec['shape'])}), "
                             f"got {tuple(value.shape)} (rank {value.ndim})")
        return as_aligned(value)

    def _resolve_params(self, params: Mapping[str, Any] | None) -> list[np.ndarray]:
        resolved = []
        for spec in self.params:
            name = spec["name"]
            if params is not None and name in params:
                resolved.append(self._check_array(f"parameter {name!r}", spec, params[name]))
            elif name in self._weights:
                resolved.append(self._weights[name])
            else:
                raise InputError(f"{self.name}: parameter {name!r} has no value: the artifact holds no "
                                 f"weights for it and none was passed in params")
        return resolved

    def __call__(self, *inputs: Any, params: Mapping[str, Any] | None = None,
                 params_key: Any = None) -> list[np.ndarray]:
        """Run the entry point and return its outputs as new numpy arrays.

        Args:
            inputs: one array per declared input, in order.
            params: optional mapping from parameter name to array, overriding stored weights.
            params_key: a value that changes whenever the contents of ``params`` change; the
                steps that depend on parameters only (weight re-layouts) re-run only then.
                None with ``params`` given: they re-run on every call.
        Returns:
            list of numpy arrays, one per declared output.
        Raises:
            InputError: wrong input count, shape or dtype, or a parameter without a value.
        """
        data = self._check_inputs(inputs)
        weights = self._resolve_params(params)
        outputs = [aligned_empty(tuple(spec["shape"]), spec["dtype"]) for spec in self.outputs]
        handles = {
            "input": [tvm_ffi.from_dlpack(array) for array in data],
            "param": [tvm_ffi.from_dlpack(array) for array in weights],
            "buffer": self._buffers,
            "output": [tvm_ffi.from_dlpack(array) for array in outputs],
            "prepared": self._prepared,
        }
        key = ("stored",) if params is None else params_key
        if self._prepare_steps and (key is None or key != self._prepared_for):
            self._prepared_for = None
            for kernel, args in self._prepare_steps:
                kernel(*[handles[kind][index] for kind, index in args])
            self._prepared_for = key
        for kernel, args in self._steps:
            kernel(*[handles[kind][index] for kind, index in args])
        sources = {"input": data, "param": weights, "output": outputs}
        results = []
        for index, ref in enumerate(self.output_refs):
            if ref["kind"] == "output" and ref["index"] == index:
                results.append(outputs[index])
            elif ref["kind"] == "buffer":
                results.append(np.array(np.from_dlpack(self._buffers[ref["index"]])))
            else:
                results.append(np.array(sources[ref["kind"]][ref["index"]]))
        return results


class Module:
    """A loaded artifact: its kernel library, weights and entry points.

    Args:
        path: the artifact directory written by ``aotnn`` (``schedules.build`` / ``aotnn.export``).
    Raises:
        ArtifactError: the artifact is missing, corrupt, truncated or not loadable.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        self.manifest = read_manifest(self.path)
        target = self.manifest.get("target", {})
        if not self.manifest.get("library"):
            raise ArtifactError(f"artifact {self.path!r} is a C bundle for {target.get('mtriple', target)}: build it "
                                f"with its Makefile (the embedded C runtime); aotnn_runtime loads host artifacts only")
        machine = platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
        triple = str(target.get("mtriple", machine))
        if target.get("kind") == "llvm" and not triple.startswith(machine):
            raise ArtifactError(f"artifact {self.path!r} holds kernels for {triple}, this machine is {machine}")
        library_path = os.path.join(self.path, self.manifest["library"])
        try:
            self._library = tvm_ffi.load_module(library_path)
        except Exception as err:
            raise ArtifactError(f"artifact {self.path!r}: cannot load kernel library ({err})") from None
        self._cdll = ctypes.CDLL(library_path)
        self.weights = self._load_weights()
        self._entries = {name: EntryPoint(name, record, self._library, self.weights)
                         for name, record in self.manifest["entries"].items()}

    def _load_weights(self) -> dict[str, np.ndarray]:
        table = self.manifest.get("weights")
        if not table:
            return {}
        path = os.path.join(self.path, table["file"])
        blob = np.fromfile(path, dtype=np.uint8) if os.path.isfile(path) else None
        if blob is None:
            raise ArtifactError(f"artifact {self.path!r}: missing weights file {table['file']!r}")
        weights = {}
        for record in table["tensors"]:
            end = record["offset"] + record["nbytes"]
            if end > blob.size:
                raise ArtifactError(f"artifact {self.path!r}: weights file {table['file']!r} is truncated "
                                    f"({blob.size} bytes, tensor {record['name']!r} needs {end})")
            array = aligned_empty(tuple(record["shape"]), record["dtype"])
            array.reshape(-1).view(np.uint8)[:] = blob[record["offset"]:end]
            weights[record["name"]] = array
        return weights

    @property
    def entry_points(self) -> list[str]:
        """Names of the compiled functions in this artifact."""
        return list(self._entries)

    def __getitem__(self, entry: str) -> EntryPoint:
        if entry not in self._entries:
            raise KeyError(f"entry: expected one of {self.entry_points}, got {entry!r}")
        return self._entries[entry]

    def run(self, *inputs: Any, entry: str = "predict", params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        """Run ``entry`` on numpy inputs and return its outputs (see :meth:`EntryPoint.__call__`)."""
        return self[entry](*inputs, params=params)

    def set_num_threads(self, count: int) -> None:
        """Set how many threads parallel kernels use (default: all cores)."""
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count: expected a positive int, got {count!r}")
        self._cdll.aotnn_set_num_threads(ctypes.c_int(count))


def load(path: str | os.PathLike) -> Module:
    """Load an artifact directory; see :class:`Module` (Vulkan and CUDA artifacts get their executors)."""
    try:
        with open(os.path.join(os.fspath(path), "manifest.json"), encoding="utf-8") as stream:
            kind = json.load(stream).get("target", {}).get("kind")
    except (OSError, ValueError, AttributeError):
        kind = None  # Module reports what is wrong with the artifact
    if kind in ("vulkan", "webgpu"):
        from .vulkan import VulkanModule
        return VulkanModule(path)
    if kind == "cuda":
        from .cuda import CudaModule
        return CudaModule(path)
    return Module(path)
