"""Capture a Python function over Tensors, build it (cached by content hash), and run it."""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm

import aotnn_runtime
import relay_frontend
import schedules
from aotnn_runtime.owned_files import remove_path
from schedules.build import BUILD_VERSION
from schedules.output_dir import is_artifact

from ..common.parameter import PARAMETER_STATE, Parameter
from ..common.tensor import Tensor

_LOADED: dict[str, aotnn_runtime.Module] = {}
_LOCK = threading.Lock()
_INSTANCE_IDS = itertools.count()
STATS = {"builds": 0, "disk_hits": 0, "captures": 0}


def _flatten(tree: Any, leaves: list[Tensor]) -> Any:
    """Replace symbolic tensors in ``tree`` with their position in ``leaves``."""
    if isinstance(tree, Tensor) and tree.is_symbolic:
        leaves.append(tree)
        return ("__leaf__", len(leaves) - 1)
    if isinstance(tree, (tuple, list)):
        items = [_flatten(item, leaves) for item in tree]
        return tuple(items) if isinstance(tree, tuple) else items
    if isinstance(tree, dict):
        return {key: _flatten(value, leaves) for key, value in tree.items()}
    return tree


def _unflatten(tree: Any, values: Sequence[Tensor]) -> Any:
    if isinstance(tree, tuple) and len(tree) == 2 and isinstance(tree[0], str) and tree[0] == "__leaf__":
        return values[tree[1]]
    if isinstance(tree, (tuple, list)):
        items = [_unflatten(item, values) for item in tree]
        return tuple(items) if isinstance(tree, tuple) else items
    if isinstance(tree, dict):
        return {key: _unflatten(value, values) for key, value in tree.items()}
    return tree


class Compiled:
    """A built function: the loaded artifact plus how to feed it and read its results."""

    def __init__(self, module: aotnn_runtime.Module, params: list[Parameter], param_names: list[str],
                 output_tree: Any, num_outputs: int, update_params: list[Parameter], artifact: str,
                 random_inputs: Sequence[tuple[tuple[int, ...], str]] = ()):
        self.module = module
        self.entry = module["predict"]
        self.params = params
        self.param_names = param_names
        self.output_tree = output_tree
        self.num_outputs = num_outputs
        self.update_params = update_params
        self.artifact = artifact
        self.random_inputs = list(random_inputs)
        self._instance = next(_INSTANCE_IDS)
        self._resolved: tuple | None = None  # (PARAMETER_STATE, params dict, params key) of the last call
        self._all_parameters = all(type(p) is Parameter for p in params)

    def _param_values(self) -> tuple[dict, tuple]:
        """The parameters' arrays by name and the key naming their contents; both the very same
        objects while no Parameter changed (the runtime then finds its resolved parameters at once)."""
        resolved = self._resolved
        if resolved is not None and resolved[0] == PARAMETER_STATE[0]:
            return resolved[1], resolved[2]
        state = PARAMETER_STATE[0]
        key = (self._instance, tuple((id(p._data), p._version) for p in self.params))
        if resolved is not None and resolved[2] == key:
            # another Parameter changed, not these (the arrays the old dict holds cannot have been
            # freed, so equal ids are the same arrays): keep the same objects
            values, key = resolved[1], resolved[2]
        else:
            values = {name: p._data for name, p in zip(self.param_names, self.params)}
        if self._all_parameters:  # a plain Tensor's changes do not move PARAMETER_STATE
            self._resolved = (state, values, key)
        return values, key

    def __call__(self, arrays: Sequence[np.ndarray]) -> Any:
        values, key = self._param_values()
        if self.random_inputs:
            from ..common.seed import get_rng
            rng = get_rng()
            arrays = list(arrays) + [rng.random(shape, dtype=np.float64).astype(dtype) for shape, dtype in self.random_inputs]
        results = self.entry.raw(*arrays, params=values, params_key=key)  # updates are written back below
        for param, new_value in zip(self.update_params, results[self.num_outputs:]):
            param.set_data(new_value)
        tensors = [Tensor._from_result(r) for r in results[:self.num_outputs]]
        return _unflatten(self.output_tree, tensors)


def _module_key(mod: tvm.IRModule, target: dict, input_names, param_names) -> str:
    # (``schedules.build`` is the build function, not the module: import BUILD_VERSION from the module)
    return schedules.content_key(tvm.ir.save_json(mod), target, list(input_names), list(param_names),
                                 BUILD_VERSION, tvm.__version__, schedules.cache.compiler_fingerprint())


def capture_function(fn: Callable[..., Any], input_specs: Sequence[tuple[str, tuple[int, ...], str]]):
    """Capture ``fn`` on symbolic inputs.

    Returns:
        (IRModule, the Capture, output tree, number of outputs).
    """
    capture = relay_frontend.Capture()
    with capture:
        symbolic = [Tensor._from_expr(capture.input(name, shape, dtype)) for name, shape, dtype in input_specs]
        result = fn(*symbolic)
        leaves: list[Tensor] = []
        tree = _flatten(result, leaves)
        mod = capture.finish([leaf._expr for leaf in leaves])
    STATS["captures"] += 1
    return mod, capture, tree, len(leaves)


def compile_function(fn: Callable[..., Any], input_specs: Sequence[tuple[str, tuple[int, ...], str]],
                     target: Any = None, tuning_db: str | os.PathLike | None = None) -> Compiled:
    """Capture ``fn`` on symbolic inputs, then build it or reuse the cached artifact.

    Args:
        fn: called with one symbolic Tensor per input spec; returns Tensors (possibly nested).
        input_specs: (name, shape, dtype name) per input.
        target: target name or dict; default the host CPU.
        tuning_db: a tuning database directory whose records the build applies (default:
            ``set_context(tuning_db=...)``); its content is part of the cache key.
    Returns:
        a :class:`Compiled` callable on numpy arrays.
    """
    mod, capture, tree, num_outputs = capture_function(fn, input_specs)
    target_dict = schedules.resolve(target)
    input_names = list(capture.input_names)
    param_names = list(capture.param_names)
    key = _module_key(mod, target_dict, input_names, param_names)
    if tuning_db is None:
        from ..context import _CONTEXT
        tuning_db = _CONTEXT.get("tuning_db")
    if tuning_db is not None:
        from schedules.tuning.database import TuningDatabase
        key = schedules.content_key(key, "tuning_db", TuningDatabase(tuning_db, create=False).content_hash())
    path = schedules.artifact_path(key)
    with _LOCK:
        module = _LOADED.get(path)
        if module is None:
            module = _load_or_build(mod, capture, input_names, param_names, target_dict, path, tuning_db)
            _LOADED[path] = module
    updates = [capture.param_keys[index] for index, _ in capture.param_updates]
    return Compiled(module, list(capture.param_keys), param_names, tree, num_outputs, updates, path,
                    capture.random_inputs)


@contextlib.contextmanager
def _entry_lock(path: str):
    """Holds an exclusive file lock on the cache entry ``path``, so that processes sharing the cache
    (data-parallel ranks) build an entry once and never load one that another process is replacing."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): builds stay atomic, only the duplicate work remains
        yield
        return
    folder, name = os.path.split(path)
    locks = os.path.join(os.path.dirname(folder), "locks")  # beside the artifacts, not among them
    os.makedirs(locks, exist_ok=True)
    with open(os.path.join(locks, f"{name}.lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _load_or_build(mod, capture, input_names, param_names, target_dict, path, tuning_db=None) -> aotnn_runtime.Module:
    with _entry_lock(path):
        return _load_or_build_locked(mod, capture, input_names, param_names, target_dict, path, tuning_db)


def _load_or_build_locked(mod, capture, input_names, param_names, target_dict, path, tuning_db=None):
    if os.path.isdir(path):
        try:
            module = aotnn_runtime.load(path)
            STATS["disk_hits"] += 1
            return module
        except aotnn_runtime.ArtifactError:
            pass  # a damaged cache entry is rebuilt below
    if not is_artifact(path):
        remove_path(path)  # a cache entry without even a manifest (the build replaces only artifacts)
    schedules.build(mod, input_names, param_names, target=target_dict, output_dir=path,
                    num_param_updates=[index for index, _ in capture.param_updates], tuning_db=tuning_db)
    STATS["builds"] += 1
    return aotnn_runtime.load(path)
