"""Checks every field of an artifact's manifest (and GPU kernel table) before any native code runs.

An artifact is a trust boundary: ``manifest.json`` carries no hash of its own, so anyone can edit
it. Everything the executors later hand to kernels (buffer offsets, tensor sizes, the weights
table, file names) is checked here against the artifact's files and against what each kernel
will touch, so that a wrong field ends in an :class:`ArtifactError` naming it
(``manifest.json: entries.predict.buffers[3].offset: expected ...``), never in a crash, a read past
an array or a file touched outside the artifact directory.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np

from .buffers import ALIGNMENT  # the arena's and the weights file's (schedules/plan.py ALIGNMENT)
from .errors import ArtifactError

MAX_RANK = 32
MAX_TENSOR_BYTES = 1 << 40  # 1 TiB: larger is a corrupt field, refused before anything is allocated
MAX_INT32 = (1 << 31) - 1
MAX_COUNT = (1 << 62) - 1  # a step's flops or bytes
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
CONST_PREFIX = "__const"  # constants the compiler hoisted out of the graph: stored, never trained
REF_KINDS = ("input", "param", "buffer", "output", "prepared")
GPU_KINDS = ("vulkan", "webgpu", "cuda")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_CUDA_ARCH = re.compile(r"sm_[0-9]+[a-z]?\Z")
_SCALAR_RANGES = {"int32": (-(1 << 31), (1 << 31) - 1), "uint32": (0, (1 << 32) - 1),
                  "int64": (-(1 << 63), (1 << 63) - 1)}
_SCALAR_DTYPES = {"vulkan": ("int32", "uint32", "float32"),
                  "cuda": ("int32", "uint32", "int64", "float32", "float64")}


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Field:
    """Where a value sits in a JSON document (``manifest.json: entries.predict.steps[3]``), for errors."""

    def __init__(self, source: str, path: str = ""):
        self.source, self.path = source, path

    def __getitem__(self, key: str | int) -> Field:
        if isinstance(key, int):
            return Field(self.source, f"{self.path}[{key}]")
        return Field(self.source, f"{self.path}.{key}" if self.path else key)

    def __str__(self) -> str:
        return f"{self.source}: {self.path}" if self.path else self.source

    def fail(self, expected: str, got: Any, note: str = "") -> NoReturn:
        raise ArtifactError(f"{self}: expected {expected}, got {_show(got)}{note}")


# -- typed reads ---------------------------------------------------------------------------------

def need_dict(where: Field, value: Any) -> dict:
    if not isinstance(value, dict):
        where.fail("an object", value)
    return value


def need_list(where: Field, value: Any, max_len: int | None = None) -> list:
    if not isinstance(value, list):
        where.fail("a list", value)
    if max_len is not None and len(value) > max_len:
        where.fail(f"a list of at most {max_len} items", f"{len(value)} items")
    return value


def need_int(where: Field, value: Any, low: int = 0, high: int = MAX_TENSOR_BYTES) -> int:
    if type(value) is not int or not low <= value <= high:  # noqa: E721 - bool is not a count
        where.fail(f"an integer in [{low}, {high}]", value)
    return value


def need_str(where: Field, value: Any) -> str:
    if not isinstance(value, str) or not value:
        where.fail("a non-empty string", value)
    return value


def key(where: Field, record: Mapping[str, Any], name: str) -> tuple[Field, Any]:
    """``record[name]`` and its field; a missing key is an error naming it."""
    if name not in record:
        raise ArtifactError(f"{where[name]}: missing (a required field)")
    return where[name], record[name]


def need_symbol(where: Field, value: Any) -> str:
    if not isinstance(value, str) or not _SYMBOL.match(value):
        where.fail("a kernel name (letters, digits, '_')", value)
    return value


def safe_relative_path(where: Field | str, value: Any) -> str:
    """A file name inside the artifact: relative, no '..', '.', empty or backslash components.

    Raises:
        ArtifactError: anything that could name a file outside the artifact directory.
    """
    where = where if isinstance(where, Field) else Field(where)
    if not isinstance(value, str) or not value or value.startswith("/") or "\\" in value or "\0" in value \
            or any(part in ("", ".", "..") for part in value.split("/")):
        where.fail("a relative file name inside the artifact (no '/' at the start, no '..')", value)
    return value


# -- tensors -------------------------------------------------------------------------------------

def tensor_spec(where: Field, spec: Any, named: bool = False) -> tuple[tuple[int, ...], str, int]:
    """A ``{"shape", "dtype"}`` record: (shape, dtype, bytes), sizes refused before any allocation."""
    spec = need_dict(where, spec)
    if named:
        need_str(*key(where, spec, "name"))
    shape_field, shape = key(where, spec, "shape")
    dims = tuple(need_int(shape_field[i], d, 0, MAX_TENSOR_BYTES)
                 for i, d in enumerate(need_list(shape_field, shape, MAX_RANK)))
    dtype_field, dtype = key(where, spec, "dtype")
    if dtype not in DTYPES:
        dtype_field.fail(f"one of {', '.join(DTYPES)}", dtype)
    nbytes = math.prod(dims) * np.dtype(dtype).itemsize
    if nbytes > MAX_TENSOR_BYTES:
        shape_field.fail(f"a tensor of at most {MAX_TENSOR_BYTES} bytes", dims, f" ({nbytes} bytes)")
    return dims, dtype, nbytes


def _specs(where: Field, table: Any, named: bool = False) -> list[tuple[tuple[int, ...], str, int]]:
    return [tensor_spec(where[i], spec, named) for i, spec in enumerate(need_list(where, table))]


def _unique_names(where: Field, table: list[dict]) -> None:
    seen: set[str] = set()
    for index, spec in enumerate(table):
        if spec["name"] in seen:
            where[index]["name"].fail("a name not used before in this list", spec["name"])
        seen.add(spec["name"])


# -- the manifest --------------------------------------------------------------------------------

def check_manifest(manifest: Any, source: str = "manifest.json") -> None:
    """Check every field of a manifest (types, ranges, paths, sizes, cross references).

    Lexical only: no file is opened (:func:`aotnn_runtime.manifest.read_manifest` then checks the
    files themselves, each found inside the artifact by :func:`resolve_inside`).

    Raises:
        ArtifactError: the first wrong field, named by its path.
    """
    from .manifest import FORMAT_NAME, FORMAT_VERSION  # here: manifest.py imports this module
    top = Field(source)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ArtifactError(f"{source}: format: expected {FORMAT_NAME!r} (this is not an aotnn manifest), got "
                            f"{_show(manifest.get('format') if isinstance(manifest, dict) else manifest)}")
    if manifest.get("format_version") != FORMAT_VERSION or type(manifest.get("format_version")) is not int:
        raise ArtifactError(f"{source}: format_version: format version {_show(manifest.get('format_version'))}, "
                            f"this runtime reads version {FORMAT_VERSION}")
    target = need_dict(*key(top, manifest, "target"))
    kind = need_str(*key(top["target"], target, "kind"))
    if "mtriple" in target:
        need_str(top["target"]["mtriple"], target["mtriple"])
    for name in ("versions", "metadata"):
        if name in manifest:
            need_dict(top[name], manifest[name])
    files = _check_file_table(*key(top, manifest, "files"))
    library = manifest.get("library")
    if library is not None:
        _listed(top["library"], safe_relative_path(top["library"], library), files)
    stored = _check_weights_table(top["weights"], manifest["weights"], files) if "weights" in manifest else {}
    entries_field, entries = key(top, manifest, "entries")
    if not need_dict(entries_field, entries):
        entries_field.fail("at least one entry point", entries)
    for name, record in entries.items():
        check_entry(entries_field[name], record, stored, kind)
    used = {spec["name"] for record in entries.values() for spec in record["params"]}
    for index, record in enumerate(manifest.get("weights", {}).get("tensors", [])):
        if record["name"] not in used:
            top["weights"]["tensors"][index]["name"].fail("the name of a parameter of an entry", record["name"])


def _check_file_table(where: Field, files: Any) -> dict[str, int]:
    """The ``files`` table: every file the artifact uses, with its size and SHA-256; name -> size."""
    sizes = {}
    for name, record in need_dict(where, files).items():
        field = where[name]
        safe_relative_path(Field(where.source, f"{where.path} key {name!r}"), name)
        record = need_dict(field, record)
        sizes[name] = need_int(*key(field, record, "size"))
        sha_field, sha = key(field, record, "sha256")
        if not isinstance(sha, str) or not _SHA256.match(sha):
            sha_field.fail("64 lowercase hex digits", sha)
    return sizes


def _listed(where: Field, name: str, files: Mapping[str, int]) -> int:
    """The size of ``name``, which the ``files`` table must list (it is then checked by hash)."""
    if name not in files:
        where.fail("a file listed in 'files' (with its size and SHA-256)", name)
    return files[name]


def _check_weights_table(where: Field, table: Any, files: Mapping[str, int]) -> dict[str, tuple]:
    """The weights table: name -> (shape, dtype) of each stored tensor, each inside the weights file."""
    table = need_dict(where, table)
    file_field, name = key(where, table, "file")
    size = _listed(file_field, safe_relative_path(file_field, name), files)
    tensors_field, tensors = key(where, table, "tensors")
    stored: dict[str, tuple] = {}
    ranges: list[tuple[int, int, int]] = []
    for index, record in enumerate(need_list(tensors_field, tensors)):
        field = tensors_field[index]
        shape, dtype, nbytes = tensor_spec(field, record, named=True)
        if record["name"] in stored:
            field["name"].fail("a name not stored before in this table", record["name"])
        offset = _placed(field, record, shape, dtype, nbytes, size, f"the weights file {name!r} ({size} bytes)")
        stored[record["name"]] = (shape, dtype)
        ranges.append((offset, offset + nbytes, index))
    ranges.sort()
    for (_, end, _), (start, _, index) in zip(ranges, ranges[1:]):
        if start < end:
            tensors_field[index].fail("bytes that no other stored tensor uses", f"bytes from {start}, "
                                      f"another tensor's end at {end}")
    return stored


def check_entry(where: Field, record: Any, stored: Mapping[str, tuple], kind: str) -> None:
    """One entry point's record: tensor tables, memory plan, steps and their argument references."""
    record = need_dict(where, record)
    inputs = _specs(*key(where, record, "inputs"), named=True)
    params = _specs(*key(where, record, "params"), named=True)
    outputs = _specs(*key(where, record, "outputs"))
    _unique_names(where["inputs"], record["inputs"])
    _unique_names(where["params"], record["params"])
    for index, spec in enumerate(record["inputs"]):
        if "alignment" in spec:
            _check_alignment(where["inputs"][index]["alignment"], spec["alignment"], inputs[index][1])
    _check_params_against_store(where["params"], record["params"], params, stored)
    arena = need_int(*key(where, record, "arena_bytes"))
    if "unplanned_bytes" in record:
        need_int(where["unplanned_bytes"], record["unplanned_bytes"])
    buffers = _check_buffers(*key(where, record, "buffers"), arena)
    prepared = _specs(where["prepared"], record.get("prepared", []))
    _check_memory(where, arena + sum(spec[2] for spec in inputs + outputs + prepared))
    counts = {"input": len(inputs), "param": len(params), "buffer": len(buffers), "output": len(outputs),
              "prepared": len(prepared)}
    _check_output_refs(where, record, {"input": inputs, "param": params, "buffer": buffers,
                                       "output": outputs, "prepared": prepared}, kind)
    _check_param_updates(where, record, params, outputs)
    for steps in ("prepare_steps", "steps"):
        if steps in record or steps == "steps":
            _check_steps(*key(where, record, steps), counts)


def _check_params_against_store(where: Field, table: list[dict], params: list, stored: Mapping[str, tuple]) -> None:
    """A stored parameter has the shape and dtype the entry declares (kernels read that many bytes)."""
    for index, spec in enumerate(table):
        if spec["name"].startswith(CONST_PREFIX) and spec["name"] not in stored:
            where[index]["name"].fail("a compiler constant stored in the weights table", spec["name"])
        if spec["name"] in stored and stored[spec["name"]] != params[index][:2]:
            shape, dtype = stored[spec["name"]]
            where[index].fail(f"what the weights table stores for {spec['name']!r}: {dtype}{list(shape)}",
                              f"{spec['dtype']}{list(spec['shape'])}")


def _check_buffers(where: Field, buffers: Any, arena: int) -> list[tuple[tuple[int, ...], str, int]]:
    """The planned intermediates: each 64-byte aligned, of its shape's size, inside the arena."""
    specs = _specs(where, buffers)
    for index, (buf, (shape, dtype, nbytes)) in enumerate(zip(buffers, specs)):
        _placed(where[index], buf, shape, dtype, nbytes, arena, f"the arena (arena_bytes {arena})")
    return specs


def _placed(field: Field, record: Mapping[str, Any], shape: tuple[int, ...], dtype: str, nbytes: int,
            limit: int, container: str) -> int:
    """The offset of a tensor stored at ``record["offset"]``, checked: 64-byte aligned, its
    ``nbytes`` equal to its shape's size, and all of it inside ``limit`` bytes of ``container``."""
    offset_field, offset = key(field, record, "offset")
    if type(offset) is not int or offset < 0 or offset % ALIGNMENT:  # noqa: E721
        offset_field.fail(f"a non-negative multiple of {ALIGNMENT}", offset)
    nbytes_field, declared = key(field, record, "nbytes")
    if need_int(nbytes_field, declared) != nbytes:
        nbytes_field.fail(f"{nbytes} (shape {list(shape)} of {dtype})", declared)
    if offset + nbytes > limit:
        field.fail(f"bytes inside {container}", f"bytes {offset} to {offset + nbytes}")
    return offset


def physical_memory() -> int | None:
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_memory(where: Field, nbytes: int) -> None:
    """An entry's inputs, outputs, prepared tensors and arena fit in memory: refused before allocating."""
    memory = physical_memory()
    if memory is not None and nbytes > memory:
        where.fail(f"an entry whose inputs, outputs, prepared tensors and arena fit this machine's memory "
                   f"({memory} bytes)", nbytes, " bytes")


def _check_alignment(where: Field, alignment: Any, dtype: str) -> None:
    itemsize = np.dtype(dtype).itemsize
    if type(alignment) is not int or not itemsize <= alignment <= ALIGNMENT or alignment % itemsize \
            or alignment & (alignment - 1):  # noqa: E721
        where.fail(f"a power of two from the element size {itemsize} to {ALIGNMENT}", alignment,
                   " (malformed alignment)")


def check_ref(where: Field, ref: Any, counts: Mapping[str, int], kinds: tuple[str, ...] = REF_KINDS) -> tuple[str, int]:
    """An argument reference ``{"kind", "index"}``: (kind, index), the index inside its table."""
    if not (isinstance(ref, dict) and ref.get("kind") in kinds and type(ref.get("index")) is int  # noqa: E721
            and 0 <= ref["index"] < counts[ref["kind"]]):
        sizes = ", ".join(f"{kind} {counts[kind]}" for kind in kinds)
        where.fail(f"{{'kind': K, 'index': i}} with i inside table K (sizes: {sizes})", ref,
                   " (malformed argument reference)")
    return ref["kind"], ref["index"]


def _check_output_refs(where: Field, record: dict, specs: Mapping[str, list], kind: str) -> None:
    """One reference per output, to a tensor of that output's shape and dtype."""
    field, refs = key(where, record, "output_refs")
    outputs = specs["output"]
    if len(need_list(field, refs)) != len(outputs):
        field.fail(f"one reference per output ({len(outputs)})", f"{len(refs)} references")
    kinds = ("input", "param", "output") if kind in GPU_KINDS else ("input", "param", "buffer", "output")
    counts = {name: len(table) for name, table in specs.items()}
    for index, ref in enumerate(refs):
        ref_kind, ref_index = check_ref(field[index], ref, counts, kinds)
        # an output is read from where the kernels wrote it: the first reference to it
        if ref_kind == "output" and refs[ref_index] != {"kind": "output", "index": ref_index}:
            field[index].fail(f"a reference to an output written in place (output_refs[{ref_index}] is "
                              f"{_show(refs[ref_index])})", ref)
        shape, dtype, _ = specs[ref_kind][ref_index]
        if (shape, dtype) != outputs[index][:2]:
            field[index].fail(f"a tensor of output {index}'s {outputs[index][1]}{list(outputs[index][0])}",
                              f"{ref_kind} {ref_index} of {dtype}{list(shape)}")


def _check_param_updates(where: Field, record: dict, params: list, outputs: list) -> None:
    field = where["param_updates"]
    for index, update in enumerate(need_list(field, record.get("param_updates", []))):
        update = need_dict(field[index], update)
        param = need_int(*key(field[index], update, "param"), 0, len(params) - 1)
        output = need_int(*key(field[index], update, "output"), 0, len(outputs) - 1)
        if params[param][:2] != outputs[output][:2]:
            shape, dtype, _ = params[param]
            field[index].fail(f"an output of the parameter's {dtype}{list(shape)}",
                              f"output {output} of {outputs[output][1]}{list(outputs[output][0])}")


def _check_steps(where: Field, steps: Any, counts: Mapping[str, int]) -> None:
    for index, step in enumerate(need_list(where, steps)):
        field = where[index]
        step = need_dict(field, step)
        need_symbol(*key(field, step, "kernel"))
        args_field, args = key(field, step, "args")
        for position, ref in enumerate(need_list(args_field, args)):
            check_ref(args_field[position], ref, counts)
        if "parallel" in step:
            extents = step["parallel"]
            if not (isinstance(extents, list) and
                    all(type(n) is int and 0 <= n <= MAX_INT32 for n in extents)):  # noqa: E721
                field["parallel"].fail("a list of non-negative 32-bit integers", extents,
                                       " (malformed parallel extents)")
        for cost in ("flops", "bytes"):  # the profiler's counts (schedules/kernel_costs.py)
            if cost in step:
                need_int(field[cost], step[cost], 0, MAX_COUNT)


# -- the files -----------------------------------------------------------------------------------

def resolve_inside(artifact_dir: str, name: str, where: Field | str = "files") -> str:
    """The path of ``name`` (checked by :func:`safe_relative_path`) if it stays inside the artifact.

    Raises:
        ArtifactError: a symbolic link (of the file or a folder on the way) leads outside.
    """
    safe_relative_path(where, name)
    root = os.path.realpath(artifact_dir)
    path = os.path.join(artifact_dir, name)
    real = os.path.realpath(path)
    if os.path.commonpath([root, real]) != root:
        (where if isinstance(where, Field) else Field(where)).fail(
            "a file inside the artifact directory", name, " (a symbolic link leads outside it)")
    return path


# -- GPU kernel tables ---------------------------------------------------------------------------

def check_kernel_table(table: Any, manifest: Mapping[str, Any], fmt: str, source: str) -> None:
    """A Vulkan (``aotnn-wgsl``) or CUDA (``aotnn-cuda``) kernel table, and every step of the manifest
    against the kernel it calls: argument count, and each argument's element count and dtype.
    ``manifest`` has passed :func:`check_manifest`.

    Raises:
        ArtifactError: the first wrong field, named by its path in ``source``.
    """
    top = Field(source)
    if not isinstance(table, dict) or table.get("format") != fmt:
        raise ArtifactError(f"{source}: format: expected {fmt!r} (a kernel table of this target), got "
                            f"{_show(table.get('format') if isinstance(table, dict) else table)}")
    if "version" in table:
        need_int(top["version"], table["version"], 0, MAX_INT32)
    files = manifest["files"]
    gpu = "cuda" if fmt == "aotnn-cuda" else "vulkan"
    if gpu == "cuda":
        arch = table.get("arch")
        if not isinstance(arch, str) or not _CUDA_ARCH.match(arch):
            top["arch"].fail("a CUDA architecture such as 'sm_80'", arch)
        _listed(top["cubin"], safe_relative_path(*key(top, table, "cubin")), files)
        if table.get("ptx") is not None:
            _listed(top["ptx"], safe_relative_path(top["ptx"], table["ptx"]), files)
    for index, feature in enumerate(need_list(top["features"], table.get("features", []))):
        need_str(top["features"][index], feature)
    functions_field, functions = key(top, table, "functions")
    params = {name: _check_function(functions_field[name], func, files, gpu)
              for name, func in need_dict(functions_field, functions).items()}
    for entry, record in manifest["entries"].items():
        where = Field("manifest.json", f"entries.{entry}")
        specs = {kind: [tensor_spec(where, spec)[:3] for spec in record.get(table_name, [])]
                 for kind, table_name in (("input", "inputs"), ("param", "params"), ("output", "outputs"),
                                          ("buffer", "buffers"), ("prepared", "prepared"))}
        for steps in ("prepare_steps", "steps"):
            for index, step in enumerate(record.get(steps, [])):
                _check_step_against_kernel(where[steps][index], step, params, specs, source)


def _check_function(where: Field, func: Any, files: Mapping[str, int], gpu: str) -> list:
    func = need_dict(where, func)
    params = _specs(*key(where, func, "params"))
    scratch_field, scratch = key(where, func, "scratch_bytes")
    for index, size in enumerate(need_list(scratch_field, scratch)):
        need_int(scratch_field[index], size)
    launches_field, launches = key(where, func, "launches")
    if not need_list(launches_field, launches):
        launches_field.fail("at least one launch", launches)
    counts = {"param": len(params), "scratch": len(scratch)}
    for index, launch in enumerate(launches):
        field = launches_field[index]
        launch = need_dict(field, launch)
        need_symbol(*key(field, launch, "kernel"))
        args_field, args = key(field, launch, "args")
        for position, ref in enumerate(need_list(args_field, args)):
            check_ref(args_field[position], ref, counts, ("param", "scratch"))
        for name in ("grid", "block"):
            if name in launch or gpu == "cuda" or name == "grid":
                dims_field, dims = key(field, launch, name)
                if len(need_list(dims_field, dims)) != 3:
                    dims_field.fail("3 extents (x, y, z)", dims)
                for axis, extent in enumerate(dims):
                    need_int(dims_field[axis], extent, 1, MAX_INT32)
        if "dynamic_shared_bytes" in launch or gpu == "cuda":
            need_int(*key(field, launch, "dynamic_shared_bytes"), 0, MAX_INT32)
        scalars_field, scalars = key(field, launch, "scalars")
        for position, scalar in enumerate(need_list(scalars_field, scalars)):
            _check_scalar(scalars_field[position], scalar, gpu)
        if gpu == "vulkan":
            shader_field, shader = key(field, launch, "shader")
            _listed(shader_field, safe_relative_path(shader_field, shader), files)
    return params


def _check_scalar(where: Field, scalar: Any, gpu: str) -> None:
    scalar = need_dict(where, scalar)
    dtype_field, dtype = key(where, scalar, "dtype")
    if dtype not in _SCALAR_DTYPES[gpu]:
        dtype_field.fail(f"one of {', '.join(_SCALAR_DTYPES[gpu])}", dtype)
    value_field, value = key(where, scalar, "value")
    if dtype in _SCALAR_RANGES:
        need_int(value_field, value, *_SCALAR_RANGES[dtype])
    elif type(value) not in (int, float):
        value_field.fail(f"a number ({dtype})", value)


def _check_step_against_kernel(where: Field, step: Mapping[str, Any], functions: Mapping[str, list],
                               specs: Mapping[str, list], source: str) -> None:
    kernel = step["kernel"]
    if kernel not in functions:
        where["kernel"].fail(f"a function of {source}", kernel)
    params = functions[kernel]
    if len(step["args"]) != len(params):
        where["args"].fail(f"{len(params)} arguments (what kernel {kernel!r} takes)", f"{len(step['args'])} arguments")
    for position, (ref, (shape, dtype, nbytes)) in enumerate(zip(step["args"], params)):
        got_shape, got_dtype, got_nbytes = specs[ref["kind"]][ref["index"]]
        if got_dtype != dtype or got_nbytes != nbytes:
            where["args"][position].fail(f"a tensor of {dtype}{list(shape)} (what kernel {kernel!r} touches)",
                                         f"{ref['kind']} {ref['index']} of {got_dtype}{list(got_shape)}")


def read_kernel_table(artifact_dir: str, manifest: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """Load and check the GPU kernel table the (checked) manifest names as its ``library``.

    Raises:
        ArtifactError: the table is missing, not JSON, of another format, or a field is wrong.
    """
    import json
    name = manifest.get("library")
    if name is None:
        raise ArtifactError(f"artifact {artifact_dir!r}: manifest.json: library: expected the kernel table "
                            f"file of this GPU artifact, got None")
    try:
        with open(resolve_inside(artifact_dir, name, Field("manifest.json", "library")), encoding="utf-8") as stream:
            table = json.load(stream)
    except (OSError, ValueError, RecursionError) as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: cannot read its kernel table {name!r} ({err})") from None
    try:
        check_kernel_table(table, manifest, fmt, name)
    except ArtifactError as err:
        raise ArtifactError(f"artifact {artifact_dir!r}: {err}") from None
    return table
