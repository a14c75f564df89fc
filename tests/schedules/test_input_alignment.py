"""Kernels read the model's inputs where the caller's arrays lie (schedules/input_alignment.py)."""
import json
import os

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import s_tir, te

import aotnn_runtime
from schedules import target as targets
from schedules.input_alignment import relax_alignment

from tests.conftest import lenet_reference


def _doubling_kernel() -> tvm.tirx.PrimFunc:
    a = te.placeholder((1024,), "float32", name="A")
    b = te.compute((1024,), lambda i: a[i] * 2.0 + 1.0, name="B")
    return te.create_prim_func([a, b])


def _compiled(func):
    sch = s_tir.Schedule(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}))
    (loop,) = sch.get_loops(sch.get_sblock("B"))
    _, inner = sch.split(loop, [None, 8])
    sch.vectorize(inner)
    return tvm.compile(sch.mod, target=targets.to_tvm(targets.resolve(None)))


def _unaligned(values: np.ndarray) -> np.ndarray:
    raw = np.zeros(values.size + 16, values.dtype)
    start = next(i for i in range(16) if (raw[i:].ctypes.data % 64) == 4)
    view = raw[start:start + values.size]
    view[...] = values
    return view


def test_relaxed_kernel_reads_an_unaligned_buffer():
    x = _unaligned(np.random.default_rng(0).normal(size=1024).astype(np.float32))
    assert x.ctypes.data % 64 == 4
    y = aotnn_runtime.aligned_empty((1024,), np.float32)  # B keeps TVM's 64-byte assumption
    library = _compiled(relax_alignment(_doubling_kernel(), {0}, 4))  # kept: its code must outlive the call
    library["main"](tvm_ffi.from_dlpack(x), tvm_ffi.from_dlpack(y))
    np.testing.assert_allclose(y, x * 2.0 + 1.0, rtol=1e-6)


def test_only_the_named_parameter_changes():
    relaxed = relax_alignment(_doubling_kernel(), {0}, 4).script()
    assert 'A: T.Buffer((1024,), "float32", align=4)' in relaxed
    assert 'B: T.Buffer((1024,), "float32")' in relaxed  # the default 64 is not printed


@pytest.mark.parametrize("positions", [{2}, {-1}])
def test_a_position_that_is_no_parameter_is_refused(positions):
    with pytest.raises(ValueError, match="positions"):
        relax_alignment(_doubling_kernel(), positions, 4)


def test_artifact_reads_unaligned_inputs_without_staging(lenet_artifact):
    path, params, x, _ = lenet_artifact
    with open(os.path.join(path, "manifest.json"), encoding="utf-8") as stream:
        spec = json.load(stream)["entries"]["predict"]["inputs"][0]
    assert spec["alignment"] == 4
    module = aotnn_runtime.load(path)
    shifted = _unaligned(x.ravel()).reshape(x.shape)
    for scale in (1.0, -3.0):
        shifted[...] = x * scale
        expected = lenet_reference(params, x * scale)
        np.testing.assert_allclose(module.run(shifted)[0], expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())
    assert not module["predict"]._aligned_copies  # the caller's array went to the kernels as it was
