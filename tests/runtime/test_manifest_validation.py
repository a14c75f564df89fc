"""A hand-edited manifest.json is refused before any native code runs, with an error naming the field."""
from __future__ import annotations

import copy
import json
import os
import shutil

import numpy as np
import pytest

import aotnn_runtime
from aotnn_runtime import ArtifactError
from aotnn_runtime.validate import check_kernel_table


@pytest.fixture
def artifact(lenet_artifact, tmp_path):
    """(a copy of the LeNet artifact, its manifest) in a folder that also holds a canary file."""
    target = tmp_path / "lenet.aot"
    shutil.copytree(lenet_artifact[0], target)
    (tmp_path / "canary.bin").write_bytes(b"canary")
    return target, json.loads((target / "manifest.json").read_text())


def _write(target, manifest) -> None:
    (target / "manifest.json").write_text(json.dumps(manifest))


def _refused(target, manifest, field: str) -> str:
    """Write ``manifest`` and assert loading it raises ArtifactError naming ``field`` (a literal)."""
    _write(target, manifest)
    with pytest.raises(ArtifactError) as info:
        aotnn_runtime.load(target)
    assert f"manifest.json: {field}" in str(info.value), str(info.value)
    return str(info.value)


def _entry(manifest):
    return manifest["entries"]["predict"]


def _param_index(manifest, name):
    return next(i for i, spec in enumerate(_entry(manifest)["params"]) if spec["name"] == name)


def _weight_index(manifest, name):
    return next(i for i, rec in enumerate(manifest["weights"]["tensors"]) if rec["name"] == name)


def test_misaligned_buffer_offset(artifact):
    target, manifest = artifact
    _entry(manifest)["buffers"][1]["offset"] = 4
    message = _refused(target, manifest, "entries.predict.buffers[1].offset")
    assert "expected a non-negative multiple of 64, got 4" in message


def test_buffer_outside_the_arena(artifact):
    target, manifest = artifact
    entry = _entry(manifest)
    entry["buffers"][0]["offset"] = -(-entry["arena_bytes"] // 64) * 64
    message = _refused(target, manifest, "entries.predict.buffers[0]")
    assert "inside the arena" in message


def test_buffer_size_that_is_not_shape_times_itemsize(artifact):
    target, manifest = artifact
    _entry(manifest)["buffers"][0]["nbytes"] += 4
    _refused(target, manifest, "entries.predict.buffers[0].nbytes")


def test_stored_parameter_smaller_than_the_entry_declares(artifact):
    """The weights table stores fc3.bias as [1] while the kernels read [10]: refused, not read past."""
    target, manifest = artifact
    record = manifest["weights"]["tensors"][_weight_index(manifest, "fc3.bias")]
    record["shape"], record["nbytes"] = [1], 4
    index = _param_index(manifest, "fc3.bias")
    message = _refused(target, manifest, f"entries.predict.params[{index}]")
    assert "'fc3.bias': float32[1]" in message


def test_stored_tensor_outside_the_weights_file(artifact):
    target, manifest = artifact
    index = _weight_index(manifest, "fc3.bias")
    manifest["weights"]["tensors"][index]["offset"] = -(-manifest["files"]["weights.bin"]["size"] // 64) * 64
    message = _refused(target, manifest, f"weights.tensors[{index}]")
    assert "inside the weights file" in message


def test_stored_tensors_misaligned_or_overlapping(artifact):
    target, manifest = artifact
    manifest["weights"]["tensors"][1]["offset"] += 4
    _refused(target, manifest, "weights.tensors[1].offset: expected a non-negative multiple of 64")
    manifest = json.loads(json.dumps(artifact[1]))
    manifest["weights"]["tensors"][1]["offset"] = manifest["weights"]["tensors"][0]["offset"]
    message = _refused(target, manifest, "weights.tensors[")
    assert "no other stored tensor uses" in message


def test_stored_tensor_of_no_entry_and_missing_constant(artifact):
    target, manifest = artifact
    manifest["weights"]["tensors"][0]["name"] = "../canary.bin"
    _refused(target, manifest, "weights.tensors[0].name: expected the name of a parameter")
    manifest = json.loads(json.dumps(artifact[1]))
    _entry(manifest)["params"].append({"name": "__const0", "shape": [1], "dtype": "float32"})
    _refused(target, manifest, f"entries.predict.params[{len(_entry(manifest)['params']) - 1}].name")


def test_stored_tensor_size_that_is_not_shape_times_itemsize(artifact):
    target, manifest = artifact
    manifest["weights"]["tensors"][0]["nbytes"] = 4
    _refused(target, manifest, "weights.tensors[0].nbytes")


def test_missing_files_table(artifact):
    """Without "files" no hash would be checked: the table is required."""
    target, manifest = artifact
    del manifest["files"]
    message = _refused(target, manifest, "files")
    assert "missing" in message


def test_used_file_not_listed_in_files(artifact):
    target, manifest = artifact
    del manifest["files"]["weights.bin"]
    _refused(target, manifest, "weights.file")
    manifest = json.loads(json.dumps(artifact[1]))
    del manifest["files"]["kernels.so"]
    _refused(target, manifest, "library")


@pytest.mark.parametrize("name", ["../canary.bin", "/etc/hostname", "a/../../canary.bin", "./weights.bin", ""])
def test_weights_file_outside_the_artifact(artifact, name):
    target, manifest = artifact
    manifest["files"][name] = manifest["files"].pop("weights.bin")
    manifest["weights"]["file"] = name
    _refused(target, manifest, "files key")
    manifest["files"]["weights.bin"] = manifest["files"].pop(name)
    _refused(target, manifest, "weights.file")
    assert (target.parent / "canary.bin").read_bytes() == b"canary"


@pytest.mark.parametrize("name", ["../kernels.so", "/usr/lib/x86_64-linux-gnu/libc.so.6", "sub/../../kernels.so"])
def test_library_outside_the_artifact(artifact, name):
    target, manifest = artifact
    manifest["library"] = name
    _refused(target, manifest, "library")


def test_symbolic_link_leading_out_is_refused(artifact):
    """weights.bin replaced by a link to an identical file outside: same hash, still refused."""
    target, manifest = artifact
    outside = target.parent / "weights-outside.bin"
    shutil.copyfile(target / "weights.bin", outside)
    os.remove(target / "weights.bin")
    os.symlink(outside, target / "weights.bin")
    _write(target, manifest)
    with pytest.raises(ArtifactError, match="symbolic link leads outside"):
        aotnn_runtime.load(target)


def test_save_weights_never_touches_a_file_outside(artifact):
    """A manifest edited in memory after load cannot make save_weights() write or delete outside."""
    target, _ = artifact
    module = aotnn_runtime.load(target)
    module.manifest["weights"]["file"] = "../canary.bin"
    before = sorted(os.listdir(target))
    with pytest.raises(ArtifactError, match="weights.file"):
        module.save_weights()
    assert (target.parent / "canary.bin").read_bytes() == b"canary"
    assert sorted(os.listdir(target)) == before


@pytest.mark.parametrize("format_version", [2, "1", True, None, 1.0])
def test_wrong_format_version(artifact, format_version):
    target, manifest = artifact
    manifest["format_version"] = format_version
    message = _refused(target, manifest, "format_version")
    assert "format version" in message


@pytest.mark.parametrize("mutate, field", [
    (lambda m: m.update(entries=[]), "entries: expected an object, got []"),
    (lambda m: m.update(entries={}), "entries: expected at least one entry point"),
    (lambda m: m.update(target="llvm"), "target: expected an object, got 'llvm'"),
    (lambda m: m.update(files=[]), "files: expected an object"),
    (lambda m: m["files"]["weights.bin"].update(size=-1), "files.weights.bin.size: expected an integer"),
    (lambda m: m["files"]["weights.bin"].update(sha256=5), "files.weights.bin.sha256: expected 64 lowercase hex"),
    (lambda m: _entry(m).update(steps=5), "entries.predict.steps: expected a list, got 5"),
    (lambda m: _entry(m)["steps"][1].update(args={"kind": "input"}), "entries.predict.steps[1].args: expected a list"),
    (lambda m: _entry(m)["steps"][0]["args"].__setitem__(0, 3), "entries.predict.steps[0].args[0]: expected"),
    (lambda m: _entry(m)["steps"][0].update(kernel="../evil"),
     "entries.predict.steps[0].kernel: expected a kernel name"),
    (lambda m: _entry(m)["steps"][0].pop("kernel"), "entries.predict.steps[0].kernel: missing"),
    (lambda m: _entry(m)["inputs"][0].update(shape="2,1,32,32"), "entries.predict.inputs[0].shape: expected a list"),
    (lambda m: _entry(m)["inputs"][0].update(name=7), "entries.predict.inputs[0].name: expected a non-empty string"),
    (lambda m: _entry(m)["outputs"][0].pop("dtype"), "entries.predict.outputs[0].dtype: missing"),
    (lambda m: _entry(m).update(arena_bytes="47040"), "entries.predict.arena_bytes: expected an integer"),
    (lambda m: _entry(m)["buffers"][0].update(offset=64.0), "entries.predict.buffers[0].offset: expected"),
    (lambda m: _entry(m)["output_refs"].append({"kind": "output", "index": 0}), "entries.predict.output_refs"),
    (lambda m: _entry(m)["output_refs"].__setitem__(0, {"kind": "prepared", "index": 0}),
     "entries.predict.output_refs[0]: expected"),
    (lambda m: _entry(m)["output_refs"].__setitem__(0, {"kind": "input", "index": 0}),
     "entries.predict.output_refs[0]: expected a tensor of output 0's float32[2, 10], "
     "got 'input 0 of float32[2, 1, 32, 32]'"),
    (lambda m: _entry(m)["param_updates"].append({"param": 0, "output": 0}), "entries.predict.param_updates[0]"),
    (lambda m: _entry(m)["param_updates"].append({"param": 99, "output": 0}), "entries.predict.param_updates[0].param"),
    (lambda m: m["weights"].update(tensors={}), "weights.tensors: expected a list"),
    (lambda m: m["weights"]["tensors"].append(copy.deepcopy(m["weights"]["tensors"][0])), "weights.tensors[8].name"),
    (lambda m: m.update(metadata=[]), "metadata: expected an object"),
])
def test_wrong_types_and_references(artifact, mutate, field):
    target, manifest = artifact
    mutate(manifest)
    _refused(target, manifest, field)


@pytest.mark.parametrize("dtype", ["float128", "object", "<f4", "bfloat16", 5, None])
def test_unknown_dtype(artifact, dtype):
    target, manifest = artifact
    _entry(manifest)["inputs"][0]["dtype"] = dtype
    message = _refused(target, manifest, "entries.predict.inputs[0].dtype")
    assert "float32" in message  # the known set is listed


@pytest.mark.parametrize("shape, field", [
    ([-1, 10], "entries.predict.outputs[0].shape[0]"),
    ([2, 1 << 62], "entries.predict.outputs[0].shape[1]"),
    ([1 << 30, 1 << 30], "entries.predict.outputs[0].shape: expected a tensor of at most"),
    ([1] * 40, "entries.predict.outputs[0].shape: expected a list of at most 32"),
    ([2, 10.0], "entries.predict.outputs[0].shape[1]"),
    ([2, True], "entries.predict.outputs[0].shape[1]"),
])
def test_negative_or_absurd_dimensions(artifact, shape, field):
    target, manifest = artifact
    _entry(manifest)["outputs"][0]["shape"] = shape
    _refused(target, manifest, field)


def test_entry_larger_than_memory_is_refused_before_allocating(artifact):
    from aotnn_runtime.validate import physical_memory
    target, manifest = artifact
    if physical_memory() is None:
        pytest.skip("this system does not report its memory")
    _entry(manifest)["outputs"][0]["shape"] = [physical_memory() // 4 + 1]
    message = _refused(target, manifest, "entries.predict: expected an entry whose inputs, outputs")
    assert f"fit this machine's memory ({physical_memory()} bytes)" in message


def test_the_builders_artifact_still_loads_and_runs(artifact, lenet_artifact):
    """The validator accepts what the builder writes (the reference: PyTorch, in conftest)."""
    target, _ = artifact
    _, _, x, expected = lenet_artifact
    out = aotnn_runtime.load(target).run(x)[0]
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


# -- GPU kernel tables (checked without a device: the checks are pure) -------------------------

def _gpu_pair(fmt: str = "aotnn-wgsl"):
    """A one-step manifest (input [4] -> output [4]) and a kernel table calling kernel 'k'."""
    spec = {"shape": [4], "dtype": "float32"}
    manifest = {"files": {"kernels.json": {}, "shaders/k_kernel.wgsl": {}, "kernels.cubin": {}},
                "entries": {"predict": {"inputs": [{"name": "x", **spec}], "params": [], "outputs": [dict(spec)],
                                        "buffers": [], "prepared": [], "steps": [
                                            {"kernel": "k", "args": [{"kind": "input", "index": 0},
                                                                     {"kind": "output", "index": 0}]}]}}}
    launch = {"kernel": "k_kernel", "args": [{"kind": "param", "index": 0}, {"kind": "param", "index": 1}],
              "scalars": [{"dtype": "int32", "value": 4}], "grid": [1, 1, 1], "block": [64, 1, 1],
              "dynamic_shared_bytes": 0, "shader": "shaders/k_kernel.wgsl"}
    table = {"format": fmt, "version": 1, "functions": {"k": {"params": [dict(spec), dict(spec)],
                                                              "scratch_bytes": [], "launches": [launch]}}}
    if fmt == "aotnn-cuda":
        table.update(arch="sm_80", cubin="kernels.cubin", ptx=None)
    return manifest, table


def test_gpu_kernel_table_of_the_right_form_passes():
    for fmt in ("aotnn-wgsl", "aotnn-cuda"):
        manifest, table = _gpu_pair(fmt)
        check_kernel_table(table, manifest, fmt, "kernels.json")


@pytest.mark.parametrize("mutate, field", [
    (lambda m, t: m["entries"]["predict"]["inputs"][0].update(shape=[8]),
     "manifest.json: entries.predict.steps[0].args[0]: expected a tensor of float32[4]"),
    (lambda m, t: m["entries"]["predict"]["steps"][0].update(kernel="other"),
     "manifest.json: entries.predict.steps[0].kernel: expected a function of kernels.json"),
    (lambda m, t: m["entries"]["predict"]["steps"][0]["args"].pop(),
     "manifest.json: entries.predict.steps[0].args: expected 2 arguments"),
    (lambda m, t: t["functions"]["k"]["launches"][0].update(shader="../k.wgsl"),
     "kernels.json: functions.k.launches[0].shader: expected a relative file name"),
    (lambda m, t: t["functions"]["k"]["launches"][0].update(shader="shaders/unlisted.wgsl"),
     "kernels.json: functions.k.launches[0].shader: expected a file listed in 'files'"),
    (lambda m, t: t["functions"]["k"]["launches"][0].update(grid=[0, 1, 1]),
     "kernels.json: functions.k.launches[0].grid[0]"),
    (lambda m, t: t["functions"]["k"]["launches"][0]["args"].__setitem__(1, {"kind": "scratch", "index": 0}),
     "kernels.json: functions.k.launches[0].args[1]"),
    (lambda m, t: t["functions"]["k"]["launches"][0]["scalars"][0].update(dtype="int8"),
     "kernels.json: functions.k.launches[0].scalars[0].dtype"),
    (lambda m, t: t["functions"]["k"]["launches"][0]["scalars"][0].update(value=1 << 40),
     "kernels.json: functions.k.launches[0].scalars[0].value"),
    (lambda m, t: t["functions"]["k"].update(scratch_bytes=[-4]), "kernels.json: functions.k.scratch_bytes[0]"),
    (lambda m, t: t.update(format="aotnn-cuda"), "kernels.json: format: expected 'aotnn-wgsl'"),
])
def test_gpu_kernel_table_inconsistencies(mutate, field):
    manifest, table = _gpu_pair()
    mutate(manifest, table)
    with pytest.raises(ArtifactError) as info:
        check_kernel_table(table, manifest, "aotnn-wgsl", "kernels.json")
    assert field in str(info.value), str(info.value)


@pytest.mark.parametrize("mutate, field", [
    (lambda t: t.update(cubin="../x.cubin"), "kernels.json: cubin"),
    (lambda t: t.update(ptx="kernels.ptx"), "kernels.json: ptx: expected a file listed"),
    (lambda t: t.update(arch="80"), "kernels.json: arch"),
    (lambda t: t["functions"]["k"]["launches"][0].update(dynamic_shared_bytes=-1),
     "kernels.json: functions.k.launches[0].dynamic_shared_bytes"),
])
def test_cuda_kernel_table_inconsistencies(mutate, field):
    manifest, table = _gpu_pair("aotnn-cuda")
    mutate(table)
    with pytest.raises(ArtifactError) as info:
        check_kernel_table(table, manifest, "aotnn-cuda", "kernels.json")
    assert field in str(info.value), str(info.value)
