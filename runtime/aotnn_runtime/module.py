"""Executes an artifact's entry points: kernels called in order over one planned arena."""
from __future__ import annotations

import ctypes
import json
import math
import operator
import os
import platform
import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import tvm_ffi

from .buffers import ALIGNMENT, aligned_empty
from .errors import ArtifactError, InputError
from .manifest import read_manifest
from .native_steps import NativeSteps, supported
from .profile import KernelRecord, kernel_records
from .weights import WeightStore, load_npz, read_weights, save_into_artifact, save_npz

_REF_KINDS = ("input", "param", "buffer", "output", "prepared")
KEPT_OUTPUT_BYTES = 64 * 1024



_SHAPE_AND_DTYPE = operator.attrgetter("shape", "dtype")


def _layouts(values: Sequence[Any]) -> tuple:
    """(shape, dtype) of each value, (None, None) for one without them; in C for numpy arrays (a
    Python loop over a hundred parameters costs tens of microseconds per call)."""
    try:
        return tuple(map(_SHAPE_AND_DTYPE, values))
    except AttributeError:
        return tuple((getattr(v, "shape", None), getattr(v, "dtype", None)) for v in values)

class _Spec(NamedTuple):
    """What an argument must be, with the words an error about it uses."""

    what: str  # e.g. "input 'x'"
    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def text(self) -> str:
        return f"{self.dtype}{list(self.shape)}"


def _specs(kind: str, table: Sequence[Mapping[str, Any]]) -> list[_Spec]:
    return [_Spec(f"{kind} {spec['name']!r}", np.dtype(spec["dtype"]), tuple(spec["shape"])) for spec in table]


def _alignment(spec: Mapping[str, Any]) -> int:
    """The alignment in bytes the kernels assume for an input (64 unless the manifest says less)."""
    alignment = spec.get("alignment", ALIGNMENT)
    itemsize = np.dtype(spec["dtype"]).itemsize
    if not (isinstance(alignment, int) and alignment >= itemsize and alignment % itemsize == 0):
        raise ArtifactError(f"input {spec.get('name')!r}: malformed alignment {alignment!r}")
    return alignment


def _parallel_extents(entry: str, step: Mapping[str, Any]) -> list[int]:
    """A step's parallel loop extents (``"parallel"``; none in artifacts that predate them).

    Raises:
        ArtifactError: the field is not a list of int32 extents.
    """
    extents = step.get("parallel", [])
    if not (isinstance(extents, list) and
            all(type(n) is int and 0 <= n < 1 << 31 for n in extents)):  # noqa: E721 - bool is not an extent
        raise ArtifactError(f"entry {entry!r}: step {step.get('kernel')!r} has malformed parallel extents "
                            f"{extents!r} (expected a list of non-negative 32-bit integers)")
    return extents


def _exports(symbols: ctypes.CDLL, name: str) -> bool:
    """Whether the library exports ``name`` (item lookup: attribute lookup refuses dunder names)."""
    try:
        symbols[name]
    except AttributeError:
        return False
    return True


def _from_python(expected: _Spec, value: Any) -> np.ndarray:
    """A Python list, tuple or scalar as an array of the expected dtype.

    Raises:
        InputError: a ragged nesting, or values the dtype cannot hold without changing kind.
    """
    try:
        array = np.asarray(value)
    except ValueError as err:
        raise InputError(f"{expected.what}: expected a numpy array of {expected.text}, got a "
                         f"{type(value).__name__} numpy cannot make an array of ({err})") from None
    if array.dtype == object or not np.can_cast(array.dtype, expected.dtype, "same_kind"):
        raise InputError(f"{expected.what}: expected {expected.dtype} values, got a {type(value).__name__} "
                         f"of {array.dtype} values")
    return array.astype(expected.dtype)


class EntryPoint:
    """One compiled function of an artifact (``predict``, ``train_step``...)."""

    def __init__(self, name: str, record: Mapping[str, Any], library: Any, weights: Mapping[str, np.ndarray],
                 symbols: ctypes.CDLL | None = None):
        self._read_record(name, record, weights)
        self._arena = aligned_empty((max(self.arena_bytes, 1),), np.uint8)
        self._buffer_arrays = [self._arena[buf["offset"]:buf["offset"] + buf["nbytes"]].view(buf["dtype"])
                               .reshape(buf["shape"]) for buf in record["buffers"]]
        self._buffers = [tvm_ffi.from_dlpack(view) for view in self._buffer_arrays]
        self._prepared_arrays = [aligned_empty(tuple(spec["shape"]), spec["dtype"]) for spec in record.get("prepared", [])]
        self._prepared = [tvm_ffi.from_dlpack(array) for array in self._prepared_arrays]
        self._prepare_steps = self._load_steps(record.get("prepare_steps", []), library)
        self._steps = self._load_steps(record["steps"], library)
        self._step_records: list[dict] = record["steps"]  # names and costs for the profiler
        self._native = self._native_steps(record, library, symbols) if symbols is not None else None
        wake = getattr(symbols, "aotnn_wake_workers", None) if symbols is not None else None
        if wake is not None:
            wake.argtypes, wake.restype = [], None
            self._wake_workers = wake

    def _read_record(self, name: str, record: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> None:
        """The tensor tables every executor reads from an entry's record."""
        self.name = name
        self.inputs: list[dict] = record["inputs"]
        self.params: list[dict] = record["params"]
        self.outputs: list[dict] = record["outputs"]
        self.output_refs: list[dict] = record["output_refs"]
        self.param_updates: list[dict] = record.get("param_updates", [])
        self.arena_bytes: int = record["arena_bytes"]
        self._input_specs = _specs("input", self.inputs)
        # inputs whose kernels read them where they lie (see schedules/input_alignment.py)
        self._input_alignments = [_alignment(spec) for spec in self.inputs]
        self._param_specs = _specs("parameter", self.params)
        self._output_specs = _specs("output", [{"name": str(i), **spec} for i, spec in enumerate(self.outputs)])
        # small outputs are written into buffers kept between calls and returned as copies: one
        # numpy call instead of an aligned allocation's several, on caches the kernels evicted
        self._kept_outputs = [aligned_empty(spec.shape, spec.dtype) if spec.dtype.itemsize * math.prod(spec.shape)
                              <= KEPT_OUTPUT_BYTES else None for spec in self._output_specs]
        self._all_outputs_kept = all(kept is not None for kept in self._kept_outputs)
        self._wake_workers: Any = None  # the thread pool's early wake-up (host kernel libraries)
        # one call at a time: a call owns the arena, the staging and output buffers and the native
        # table from its input checks to its results (threads of a server may share a module)
        self._call_lock = threading.RLock()
        self._outputs_in_order = all(ref.get("kind") == "output" and ref.get("index") == index
                                     for index, ref in enumerate(self.output_refs)) and \
            len(self.output_refs) == len(self.outputs)
        self._weights = weights if isinstance(weights, WeightStore) else WeightStore(weights)
        for update in self.param_updates:
            if not (0 <= update.get("param", -1) < len(self.params) and 0 <= update.get("output", -1) < len(self.outputs)):
                raise ArtifactError(f"entry {name!r}: malformed parameter update {update!r}")
        updated_outputs = {update["output"] for update in self.param_updates}
        self._user_outputs = [i for i in range(len(self.outputs)) if i not in updated_outputs]
        self._params_for: Any = None  # what the device copies of the parameters hold (GPU executors)
        self._prepared_for: Any = None  # what the param-only steps last ran on
        self._stored_cache: Any = None  # (key, stored weights, their handles) for calls without params
        self._input_addresses: list[int] = []  # where the inputs of the current call lie
        self._param_addresses: list[int] | None = None  # where the given parameters lie (see _resolve_params)
        # staging buffers (and their addresses) of arguments a kernel cannot take as they are
        self._aligned_copies: dict[tuple[str, int], tuple[np.ndarray, int]] = {}
        self._bound: Any = None  # (parameter handles, steps, steps with them bound): see _bound_steps
        # (key, names, given arrays, resolved list, layouts, addresses, mapping): see _resolve_params_again
        self._resolved_cache: Any = None

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

    def _native_steps(self, record: Mapping[str, Any], library: Any, symbols: ctypes.CDLL) -> NativeSteps | None:
        """The steps as one native call, or None where the library predates ``aotnn_run_steps``
        (the steps then run one by one from Python, as they always could)."""
        specs = {kind: [(tuple(spec["shape"]), spec["dtype"]) for spec in table] for kind, table in
                 (("input", self.inputs), ("param", self.params), ("output", self.outputs),
                  ("buffer", record["buffers"]), ("prepared", record.get("prepared", [])))}
        names = ["__tvm_ffi_aotnn_run_steps"] + ["__tvm_ffi_" + step["kernel"] for step in record["steps"]]
        if not all(_exports(symbols, name) for name in names) or not supported(specs):
            return None
        kernels = [ctypes.cast(symbols[name], ctypes.c_void_p).value for name in names[1:]]
        prefetch_kinds = ("param", "prepared") if _exports(symbols, "aotnn_prefetch_hint") else ()
        parallel = ([_parallel_extents(self.name, step) for step in record["steps"]]
                    if _exports(symbols, "aotnn_parallel_hint") else None)
        timed = library["aotnn_run_steps_timed"] if _exports(symbols, "__tvm_ffi_aotnn_run_steps_timed") else None
        native = NativeSteps(library["aotnn_run_steps"], kernels, [args for _, args in self._steps], specs,
                             prefetch_kinds, parallel, timed)
        native.bind("buffer", self._buffer_arrays)
        native.bind("prepared", self._prepared_arrays)
        return native

    def _check_ref(self, ref: Mapping[str, Any]) -> None:
        limits = {"input": len(self.inputs), "param": len(self.params), "buffer": len(self._buffers),
                  "output": len(self.outputs), "prepared": len(self._prepared)}
        if ref.get("kind") not in _REF_KINDS or not 0 <= ref.get("index", -1) < limits[ref["kind"]]:
            raise ArtifactError(f"entry {self.name!r}: malformed argument reference {ref!r}")

    def _check_inputs(self, inputs: Sequence[Any]) -> list[np.ndarray]:
        """The arrays the kernels read for ``inputs``; their data addresses, read on every call, go
        to ``_input_addresses`` (the call lock is held).

        An address is never reused from an earlier call: a caller's array may have been resized
        in place (its memory moved) or freed since, and another array may lie at its old address.
        """
        if len(inputs) != len(self.inputs):
            names = ", ".join(spec["name"] for spec in self.inputs)
            raise InputError(f"{self.name}: expected {len(self.inputs)} input(s) ({names}), got {len(inputs)}")
        checked, addresses = [], []
        for index, (value, expected) in enumerate(zip(inputs, self._input_specs)):
            # the common case in a few attribute reads: per-call Python runs on caches the kernels
            # have just evicted, each step costing far more than it would warm
            if not (type(value) is np.ndarray and value.dtype == expected.dtype and value.shape == expected.shape):
                value = self._check_array(expected, value)
            array, address = self._staged(("input", index), value, self._input_alignments[index])
            checked.append(array)
            addresses.append(address)
        self._input_addresses = addresses
        return checked

    def _staged(self, slot: tuple[str, int], array: np.ndarray, alignment: int = ALIGNMENT) -> tuple[np.ndarray, int]:
        """``array`` itself and its address when a kernel can take it, else its copy in this slot's
        staging buffer and that buffer's address.

        Kernels take writable, C-contiguous, native-endian data aligned to 64 bytes unless the
        manifest says otherwise (inputs read in place); numpy's own arrays usually start 16 bytes
        past such a boundary. Anything else (read-only or memory-mapped, strided, Fortran-order,
        misaligned, big-endian) is copied, converting the byte order on the way. A fresh aligned
        copy per call costs a page fault per 4 KB (about 0.2 ms for one 224x224 image), so each
        slot keeps its buffer from call to call.
        """
        flags = array.flags
        if flags.c_contiguous and flags.writeable and array.dtype.isnative:
            address = array.ctypes.data
            if address % alignment == 0:
                return array, address
        dtype = array.dtype.newbyteorder("=")
        staged = self._aligned_copies.get(slot)
        if staged is None or staged[0].shape != array.shape or staged[0].dtype != dtype:
            buffer = aligned_empty(array.shape, dtype)
            staged = self._aligned_copies[slot] = (buffer, buffer.ctypes.data)
        np.copyto(staged[0], array)
        return staged

    @staticmethod
    def _check_array(expected: _Spec, value: Any) -> np.ndarray:
        """``value`` as a numpy array of the expected shape and dtype (in any byte order).

        Python lists, tuples and scalars hold no dtype of their own: they are converted to the
        expected one where numpy's ``same_kind`` casting allows (floats to float32, not to int32).
        """
        if not isinstance(value, np.ndarray):
            if hasattr(value, "asnumpy"):
                value = value.asnumpy()
            elif isinstance(value, (int, float, bool, np.generic, list, tuple)):
                value = _from_python(expected, value)
            else:
                raise InputError(f"{expected.what}: expected a numpy array of {expected.text}, got {type(value).__name__}")
        if value.dtype != expected.dtype and value.dtype.newbyteorder("=") != expected.dtype:
            raise InputError(f"{expected.what}: expected dtype {expected.dtype}, got {value.dtype}")
        if value.shape != expected.shape:
            raise InputError(f"{expected.what}: expected shape {expected.shape} (rank {len(expected.shape)}), "
                             f"got {tuple(value.shape)} (rank {value.ndim})")
        return value

    def _resolve_params(self, params: Mapping[str, Any] | None) -> list[np.ndarray]:
        """The parameter arrays of a call; with ``params`` given, their addresses (read this call,
        as the inputs') go to ``_param_addresses``, else it is None (the stored weights, which
        only the module changes)."""
        resolved, addresses = [], []
        for index, spec in enumerate(self.params):
            name = spec["name"]
            if params is not None and name in params:
                checked = self._check_array(self._param_specs[index], params[name])
                array, address = self._staged(("param", index), checked)
            elif name in self._weights:
                array = self._weights[name]
                address = array.ctypes.data if params is not None else 0
            else:
                raise InputError(f"{self.name}: parameter {name!r} has no value: the artifact holds no "
                                 f"weights for it and none was passed in params")
            resolved.append(array)
            addresses.append(address)
        self._param_addresses = addresses if params is not None else None
        return resolved

    def _resolve_params_again(self, params: Mapping[str, Any], params_key: Any) -> list[np.ndarray]:
        """:meth:`_resolve_params`, skipped while a caller passes the same ``params_key`` and the
        very same arrays, each of which the kernels read where it lies (checking a hundred
        parameters again costs ResNet-18 a fraction of a millisecond per call)."""
        cache = self._resolved_cache
        if (params_key is not None and cache is not None and cache[6] is params
                and (cache[0] is params_key or cache[0] == params_key)
                and len(params) == len(cache[2]) and all(map(operator.is_, cache[2], params.values()))
                and all(map(operator.is_, cache[1], params))):
            # the very mapping, key, names and arrays of the last call (aotnn's repeated Cell call):
            # their layouts are not read again (on caches the kernels have just evicted, reading a
            # hundred shapes costs ResNet-18 about 45 us per call). The cache holds a reference to
            # every array, so numpy refuses to resize one in place (refcheck), the only way its
            # memory could move; a shape or dtype set in place keeps the same bytes where they lie.
            self._param_addresses = cache[5]
            return cache[3]
        names, values = tuple(params), tuple(params.values())
        # an array resized in place (or given another dtype) is the same object at a new address:
        # its layout is compared too (numpy reallocates only when the shape's size changes)
        layouts = _layouts(values)
        if (params_key is not None and cache is not None and cache[0] == params_key and cache[1] == names
                and len(cache[2]) == len(values) and all(map(operator.is_, cache[2], values))
                and cache[4] == layouts):
            self._param_addresses = cache[5]
            self._resolved_cache = (*cache[:6], params)
            return cache[3]
        resolved = self._resolve_params(params)
        given = [params.get(spec["name"]) for spec in self.params]
        in_place = all(array is value for array, value in zip(resolved, given))
        self._resolved_cache = ((params_key, names, values, resolved, layouts, self._param_addresses, params)
                                if params_key is not None and in_place else None)
        return resolved

    @property
    def updated_parameters(self) -> list[str]:
        """Names of the parameters a call updates, in update order."""
        return [self.params[update["param"]]["name"] for update in self.param_updates]

    def __call__(self, *inputs: Any, params: Mapping[str, Any] | None = None,
                 params_key: Any = None) -> list[np.ndarray]:
        """Run the entry point; a training step also writes its parameter updates back.

        A training step (an entry with ``param_updates``: weights, BatchNorm statistics,
        optimizer moments) updates IN PLACE the arrays it read: the module's stored weights, or
        the caller's arrays for the parameters given in ``params``. It returns only what the
        network returns (the loss of ``TrainOneStepCell``), like calling the cell in aotnn.

        Args:
            inputs: one array per declared input, in order.
            params: optional mapping from parameter name to array, overriding stored weights;
                for a training step, the arrays of updated parameters must be writable numpy
                arrays of the declared shape and dtype.
            params_key: a value that changes whenever the contents of ``params`` change; the
                steps that depend on parameters only (weight re-layouts) re-run only then.
                None with ``params`` given: they re-run on every call.
        Returns:
            list of numpy arrays, one per output of the network.
        Raises:
            InputError: wrong input count, shape or dtype, or a parameter without a value, or
                (training) a given parameter that cannot be updated in place.
        """
        if not self.param_updates:
            return self.raw(*inputs, params=params, params_key=params_key)
        with self._call_lock:  # a step's write-back belongs to the step
            targets = self._update_targets(params)
            results = self.raw(*inputs, params=params, params_key=params_key)
            for update, target in zip(self.param_updates, targets):
                target[...] = results[update["output"]]
            self._weights.version += 1
            self._params_for = self._prepared_for = None
            return [results[i] for i in self._user_outputs]

    def _update_targets(self, params: Mapping[str, Any] | None) -> list[np.ndarray]:
        """The arrays a training step writes into, checked before anything runs."""
        targets = []
        for update in self.param_updates:
            spec = self.params[update["param"]]
            name = spec["name"]
            if params is not None and name in params:
                target = params[name]
                if not (isinstance(target, np.ndarray) and target.flags.writeable):
                    raise InputError(f"{self.name}: parameter {name!r} is updated by this training step; "
                                     f"expected a writable numpy array, got {type(target).__name__}")
            else:
                target = self._weights.get(name)
            targets.append(target)
        return targets

    def raw(self, *inputs: Any, params: Mapping[str, Any] | None = None,
            params_key: Any = None) -> list[np.ndarray]:
        """Run the entry point and return ALL its outputs, parameter updates last, writing nothing back.

        For a caller that manages parameter state itself (aotnn's in-process calls); arguments
        and errors as :meth:`__call__`.
        """
        with self._call_lock:
            if self._wake_workers is not None:
                self._wake_workers()  # they get ready while the inputs are checked and copied
            data = self._check_inputs(inputs)
            if params is None:
                key, weights = self._stored_params()
                self._param_addresses = None
            else:
                key, weights = params_key, self._resolve_params_again(params, params_key)
            return self._execute(data, weights, key)

    def profile(self, *inputs: Any, params: Mapping[str, Any] | None = None, repeat: int = 10) -> list[KernelRecord]:
        """Time each kernel over ``repeat`` calls (after one untimed call); see :meth:`Module.profile`.

        Nothing is written back: a training step profiled this way leaves the weights as they were.
        """
        if type(repeat) is not int or repeat < 1:  # noqa: E721 - bool is not a count
            raise ValueError(f"repeat: expected a positive int, got {repeat!r}")
        native = self._native
        if native is None or not native.can_time:
            raise ArtifactError(f"{self.name}: the kernel library cannot time its steps (it predates the "
                                f"profiler's runner, or a tensor's dtype keeps its steps in Python); rebuild the artifact")
        timestamps = np.zeros((repeat, len(self._steps) + 1), np.int64)
        with self._call_lock:
            self.raw(*inputs, params=params)  # warm-up: weight re-layouts, first-touch page faults
            for row in timestamps:
                with native.timing(row):
                    self.raw(*inputs, params=params)
        return kernel_records(self._step_records, timestamps)

    def _stored_params(self) -> tuple[Any, list[np.ndarray]]:
        """The stored weights (and their DLPack handles), resolved once per weights version: a
        model with hundreds of parameters would otherwise spend a fraction of a millisecond per call."""
        key = ("stored", id(self._weights), self._weights.version)
        if self._stored_cache is None or self._stored_cache[0] != key:
            weights = self._resolve_params(None)
            self._stored_cache = (key, weights, [tvm_ffi.from_dlpack(array) for array in weights])
        return key, self._stored_cache[1]

    def _param_handles(self, weights: list[np.ndarray], key: Any) -> list[Any]:
        cache = self._stored_cache
        if cache is not None and key is not None and cache[0] == key:
            return cache[2]
        return [tvm_ffi.from_dlpack(array) for array in weights]

    def _bound_steps(self, handles: Mapping[str, list[Any]]) -> list[tuple[Any, tuple, list]]:
        """The steps with every argument that is the same on each call (parameters, arena buffers,
        prepared weights) bound once per parameter list: (kernel, arguments, [(position, kind, index)]
        of the inputs and outputs to fill in)."""
        params = handles["param"]
        if self._bound is None or self._bound[0] is not params or self._bound[1] is not self._steps:
            bound = []
            for kernel, args in self._steps:
                static = tuple(None if kind in ("input", "output") else handles[kind][index] for kind, index in args)
                dynamic = [(position, kind, index) for position, (kind, index) in enumerate(args)
                           if kind in ("input", "output")]
                bound.append((kernel, static, dynamic))
            self._bound = (params, self._steps, bound)
        return self._bound[2]

    def _execute(self, data: list[np.ndarray], weights: list[np.ndarray], key: Any) -> list[np.ndarray]:
        """Run the kernels on checked inputs and parameters; ``key`` names the parameters' contents."""
        outputs = self._kept_outputs if self._all_outputs_kept else \
            [kept if kept is not None else aligned_empty(spec.shape, spec.dtype)
             for kept, spec in zip(self._kept_outputs, self._output_specs)]
        native = self._native
        prepare = bool(self._prepare_steps) and (key is None or key != self._prepared_for)
        if native is None or prepare:
            handles = {
                "input": [tvm_ffi.from_dlpack(array) for array in data],
                "param": self._param_handles(weights, key),
                "buffer": self._buffers,
                "output": [tvm_ffi.from_dlpack(array) for array in outputs],
                "prepared": self._prepared,
            }
        if prepare:
            self._prepared_for = None
            for kernel, args in self._prepare_steps:
                kernel(*[handles[kind][index] for kind, index in args])
            self._prepared_for = key
        if native is not None:
            native.bind("input", data, self._input_addresses)
            native.bind("output", outputs)
            native.bind("param", weights, self._param_addresses)
            native.run()
        else:
            for kernel, static, dynamic in self._bound_steps(handles):
                if dynamic:
                    args = list(static)
                    for position, kind, index in dynamic:
                        args[position] = handles[kind][index]
                    kernel(*args)
                else:
                    kernel(*static)
        outputs = [array if kept is None else array.copy() for array, kept in zip(outputs, self._kept_outputs)]
        if self._outputs_in_order:
            return outputs
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
            raise ArtifactError(f"artifact {self.path!r}: manifest.json: library: none, it is a C bundle for "
                                f"{target.get('mtriple', target)}: build it with its Makefile (the embedded C runtime); "
                                f"aotnn_runtime loads host artifacts only")
        machine = platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
        triple = str(target.get("mtriple", machine))
        if target.get("kind") == "llvm" and not triple.startswith(machine):
            raise ArtifactError(f"artifact {self.path!r}: manifest.json: target.mtriple: it holds kernels for {triple}, "
                                f"this machine is {machine}")
        library_path = os.path.join(self.path, self.manifest["library"])
        try:
            self._library = tvm_ffi.load_module(library_path)
        except Exception as err:
            raise ArtifactError(f"artifact {self.path!r}: cannot load kernel library ({err})") from None
        self._cdll = ctypes.CDLL(library_path)
        # In a process that also holds TVM's compiler, libtvm_runtime points the library's
        # parallel-launch hook at its own pool (half the cores) after loading it: put ours back.
        install = getattr(self._cdll, "aotnn_install_backend", None)
        if install is not None:
            install()
        self.weights = self._load_weights()
        self._entries = {name: EntryPoint(name, record, self._library, self.weights, self._cdll)
                         for name, record in self.manifest["entries"].items()}

    def _load_weights(self) -> WeightStore:
        return read_weights(self.path, self.manifest)

    @property
    def entry_points(self) -> list[str]:
        """Names of the compiled functions in this artifact."""
        return list(self._entries)

    def __getitem__(self, entry: str) -> EntryPoint:
        if entry not in self._entries:
            raise KeyError(f"entry: expected one of {self.entry_points}, got {entry!r}")
        return self._entries[entry]

    def run(self, *inputs: Any, entry: str | None = None, params: Mapping[str, Any] | None = None) -> list[np.ndarray]:
        """Run ``entry`` on numpy inputs and return its outputs (see :meth:`EntryPoint.__call__`).

        ``entry`` defaults to the artifact's only entry point (else ``"predict"``). A training
        step (``aotnn.export`` of a ``TrainOneStepCell``) updates the stored weights in place and
        returns the loss: calling ``run(x, y)`` in a loop trains.
        """
        entries = self._entries
        if entry is None:
            entry = next(iter(entries)) if len(entries) == 1 else "predict"
        point = entries.get(entry)
        if point is None:
            point = self[entry]  # raises, naming the entry points
        return point(*inputs, params=params)

    def profile(self, *inputs: Any, entry: str | None = None, params: Mapping[str, Any] | None = None,
                repeat: int = 10) -> list[KernelRecord]:
        """Time each kernel of ``entry`` over ``repeat`` calls on ``inputs``.

        Args:
            inputs: one array per declared input, as for :meth:`run`.
            entry: the entry point (default as for :meth:`run`).
            params: parameters overriding stored weights, as for :meth:`run`.
            repeat (int): timed calls, after one untimed warm-up call.
        Returns:
            list of :class:`aotnn_runtime.profile.KernelRecord`, one per step in step order: the
            kernel's name, its time in each call, its FLOPs and bytes (where the manifest counts them).
            ``aotnn_runtime.profile.format_table`` prints them; ``write_trace`` writes a Chrome trace.
        Raises:
            ValueError: ``repeat`` is not a positive int.
            ArtifactError: the artifact's kernel library cannot time its steps (built before the profiler).
            InputError: as for :meth:`run`.
        """
        if entry is None:
            entry = next(iter(self._entries)) if len(self._entries) == 1 else "predict"
        return self[entry].profile(*inputs, params=params, repeat=repeat)

    def parameters(self) -> dict[str, np.ndarray]:
        """Copies of the stored parameters by name (weights, statistics, optimizer state)."""
        return {name: self.weights[name].copy() for name in self.weights.parameter_names()}

    def get_parameter(self, name: str) -> np.ndarray:
        """A copy of the stored parameter ``name``.

        Raises:
            KeyError: the artifact stores no parameter of that name.
        """
        if name not in self.weights.parameter_names():
            raise KeyError(f"name: expected one of {self.weights.parameter_names()}, got {name!r}")
        return self.weights[name].copy()

    def save_weights(self, path: str | os.PathLike | None = None) -> None:
        """Write the current stored weights atomically (a temporary file, then a rename).

        Args:
            path: a ``.npz`` file to write the parameters to (read back with :meth:`load_weights`);
                None: update the artifact itself, so loading it again resumes from these weights.
        """
        if path is None:
            save_into_artifact(self.path, self.manifest, self.weights)
        else:
            save_npz(os.fspath(path), self.weights)

    def load_weights(self, path: str | os.PathLike) -> None:
        """Replace stored parameters with those of a ``.npz`` written by :meth:`save_weights`.

        Raises:
            InputError: a name, shape or dtype the artifact does not have (nothing is changed).
        """
        load_npz(os.fspath(path), self.weights)

    def set_num_threads(self, count: int) -> None:
        """Set how many threads parallel kernels use (default: all cores, or ``AOTNN_NUM_THREADS``).

        The thread pool belongs to the artifact's compiled library, which a process loads once:
        every module loaded from the same artifact shares the setting (the last call wins).

        Args:
            count (int): threads, the calling one included.

        Raises:
            ValueError: ``count`` is not a positive int.
        """
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
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
