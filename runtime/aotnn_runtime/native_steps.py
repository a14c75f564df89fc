"""An entry point's kernels as one native call (``aotnn_run_steps``, runtime/c/aotnn_steps.c).

Calling 40 kernels one by one from Python costs about 0.1-0.2 ms per inference on a small
machine, mostly cache misses in the interpreter after each kernel. The table built here holds
one DLTensor per tensor the steps use and the argument list of every step; a call only points
the input and output tensors at this call's arrays and runs the table in C.

The caller guarantees what the kernels assume: every array bound has the shape and dtype of its
spec, is C-contiguous and aligned as its kernels assume (64 bytes; inputs that the manifest marks
as read in place, their element size); the kernels still check shapes and dtypes against the
DLTensors, which come from the same specs.
"""
from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]


class _FFIAny(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32), ("pointer", ctypes.c_void_p)]


class _Step(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_void_p), ("args", ctypes.POINTER(_FFIAny)), ("num_args", ctypes.c_int64)]


class _Prefetch(ctypes.Structure):
    _fields_ = [("tensors", ctypes.POINTER(ctypes.c_void_p)), ("count", ctypes.c_int64)]


class _Parallel(ctypes.Structure):
    _fields_ = [("extents", ctypes.POINTER(ctypes.c_int32)), ("count", ctypes.c_int64)]


_DL_CPU = 1
_FFI_DLTENSOR_PTR = 7
_DL_CODES = {"i": 0, "u": 1, "f": 2, "b": 6}  # numpy dtype kind -> DLPack type code


def dlpack_code(dtype: np.dtype) -> tuple[int, int] | None:
    """DLPack's (code, bits) for ``dtype``, or None where a table cannot describe it."""
    code = _DL_CODES.get(dtype.kind)
    return None if code is None else (code, dtype.itemsize * 8)


class NativeSteps:
    """The steps of one entry point, run by one call into the kernel library.

    Args:
        runner: the library's ``aotnn_run_steps`` function.
        kernels: the address of each step's kernel.
        steps: each step's arguments as (kind, index) pairs.
        specs: per kind, the (shape, dtype) of every tensor of that kind.
        prefetch_kinds: kinds whose tensors idle threads prefetch while the step before their
            step runs (the weights: they leave the caches between inferences); empty for a
            library whose runner predates prefetching.
        parallel: per step, the extents of its kernel's parallel loops in launch order (the
            thread pool then balances them in finer tasks); None for a library whose runner
            predates them.
        timed_runner: the library's ``aotnn_run_steps_timed`` (the profiler's runner), or None
            for a library that predates it.
    Raises:
        ValueError: a dtype DLPack cannot describe (use :func:`supported` first).
    """

    def __init__(self, runner: Any, kernels: Sequence[int], steps: Sequence[Sequence[tuple[str, int]]],
                 specs: Mapping[str, Sequence[tuple[Sequence[int], str]]], prefetch_kinds: Sequence[str] = (),
                 parallel: Sequence[Sequence[int]] | None = None, timed_runner: Any = None):
        self._runner = runner
        self._timed_runner = timed_runner
        self._shapes = []  # the shape arrays the DLTensors point into
        self._tensors = {kind: self._describe(kind_specs) for kind, kind_specs in specs.items()}
        self._args = []
        self._table = (_Step * len(steps))()
        for row, (kernel, args) in zip(self._table, zip(kernels, steps)):
            values = (_FFIAny * max(len(args), 1))()
            for value, (kind, index) in zip(values, args):
                value.type_index = _FFI_DLTENSOR_PTR
                value.pointer = ctypes.addressof(self._tensors[kind][index])
            self._args.append(values)
            row.kernel, row.args, row.num_args = kernel, values, len(args)
        self._address = ctypes.addressof(self._table)
        self._prefetch = self._prefetch_table(steps, set(prefetch_kinds)) if prefetch_kinds else None
        self._parallel = self._parallel_table(parallel) if parallel is not None else None
        self._bound: dict[str, Sequence[np.ndarray]] = {}  # also keeps the bound arrays alive

    def _describe(self, specs: Sequence[tuple[Sequence[int], str]]) -> ctypes.Array:
        tensors = (_DLTensor * max(len(specs), 1))()
        for tensor, (shape, dtype) in zip(tensors, specs):
            code = dlpack_code(np.dtype(dtype))
            if code is None:
                raise ValueError(f"dtype: expected one DLPack can describe, got {dtype}")
            dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            self._shapes.append(dims)
            tensor.device_type, tensor.device_id, tensor.ndim = _DL_CPU, 0, len(shape)
            tensor.code, tensor.bits, tensor.lanes = code[0], code[1], 1
            tensor.shape = dims
        return tensors

    def _prefetch_table(self, steps: Sequence[Sequence[tuple[str, int]]], kinds: set[str]) -> ctypes.Array:
        table = (_Prefetch * max(len(steps), 1))()
        for row, following in zip(table, list(steps[1:]) + [[]]):
            # the runner passes the backend at most 8 ranges: a step's first 8 weights
            wanted = [ctypes.addressof(self._tensors[kind][index]) for kind, index in following if kind in kinds][:8]
            pointers = (ctypes.c_void_p * max(len(wanted), 1))(*wanted)
            self._args.append(pointers)
            row.tensors = ctypes.cast(pointers, ctypes.POINTER(ctypes.c_void_p))
            row.count = len(wanted)
        return table

    def _parallel_table(self, parallel: Sequence[Sequence[int]]) -> ctypes.Array:
        table = (_Parallel * max(len(parallel), 1))()
        for row, extents in zip(table, parallel):
            values = (ctypes.c_int32 * max(len(extents), 1))(*extents)
            self._args.append(values)
            row.extents = ctypes.cast(values, ctypes.POINTER(ctypes.c_int32))
            row.count = len(extents)
        return table

    def bind(self, kind: str, arrays: Sequence[np.ndarray], addresses: Sequence[int] | None = None) -> None:
        """Point the tensors of ``kind`` at ``arrays`` (checked by the caller, see the module doc).

        With ``addresses`` (the arrays' data addresses, read by the caller on this call: arrays
        the caller does not own, which may have moved since the last call) they are used as
        given. Without, an array bound last time (the same object: a staging buffer, a kept
        output) is not looked at again: reading an array's address costs microseconds on cold
        caches; the very sequence bound last time (a list the caller keeps and never changes:
        the stored weights, the kept outputs) returns at once, and so do the very address and
        array lists bound last time (a module's resolved parameters, never changed once made).
        """
        if addresses is not None:
            last = self._bound.get(kind)
            if last is not None and last[2] is addresses and last[3] is arrays:
                return  # the very lists bound last time (a module's resolved parameters, which it never changes)
            for tensor, address in zip(self._tensors[kind], addresses):
                tensor.data = address
            # keeps the arrays alive while the table points at them
            self._bound[kind] = (None, tuple(arrays), addresses, arrays)
            return
        last = self._bound.get(kind)
        if last is not None and last[0] is arrays:
            return
        for index, (tensor, array) in enumerate(zip(self._tensors[kind], arrays)):
            if last is None or last[1][index] is not array:
                tensor.data = array.ctypes.data
        self._bound[kind] = (arrays, tuple(arrays), None, None)

    def run(self) -> None:
        """Run every step; a kernel's error is raised as the kernel raised it."""
        prefetch = 0 if self._prefetch is None else ctypes.addressof(self._prefetch)
        if self._parallel is not None:
            self._runner(self._address, len(self._table), prefetch, ctypes.addressof(self._parallel))
        elif prefetch:
            self._runner(self._address, len(self._table), prefetch)
        else:
            self._runner(self._address, len(self._table))

    @property
    def can_time(self) -> bool:
        """Whether :meth:`timing` can time the steps (the library has the profiler's runner)."""
        return self._timed_runner is not None

    @contextlib.contextmanager
    def timing(self, timestamps: np.ndarray) -> Iterator[None]:
        """Within the block, :meth:`run` writes CLOCK_MONOTONIC nanoseconds into ``timestamps``:
        [0] before the first step, [i + 1] when step i returned.

        The timed run replaces :meth:`run` on this object only while the block lasts, so an
        untimed call pays nothing for the profiler.

        Args:
            timestamps: a C-contiguous, writable int64 array of step count + 1 elements.
        Raises:
            ValueError: ``timestamps`` is not such an array, or the library cannot time.
        """
        if self._timed_runner is None:
            raise ValueError("timestamps: this kernel library predates the profiler's runner "
                             "(aotnn_run_steps_timed); rebuild the artifact")
        expected = len(self._table) + 1
        if not (isinstance(timestamps, np.ndarray) and timestamps.dtype == np.int64 and timestamps.shape == (expected,)
                and timestamps.flags.c_contiguous and timestamps.flags.writeable):
            raise ValueError(f"timestamps: expected a writable contiguous int64 array of shape ({expected},), got "
                             f"{type(timestamps).__name__} {getattr(timestamps, 'dtype', '')}"
                             f"{list(getattr(timestamps, 'shape', ()))}")
        address = timestamps.ctypes.data

        def run_timed() -> None:
            prefetch = 0 if self._prefetch is None else ctypes.addressof(self._prefetch)
            parallel = 0 if self._parallel is None else ctypes.addressof(self._parallel)
            self._timed_runner(self._address, len(self._table), prefetch, parallel, address)

        self.run = run_timed  # type: ignore[method-assign]
        try:
            yield
        finally:
            del self.run


def supported(specs: Mapping[str, Sequence[tuple[Sequence[int], str]]]) -> bool:
    """True when every tensor's dtype can be described to the kernels by the table."""
    return all(dlpack_code(np.dtype(dtype)) is not None for kind_specs in specs.values() for _, dtype in kind_specs)
