"""Prepare steps evaluated at compile time (bundles): results against numpy, what is kept, bad input."""
from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import te

from schedules.compile_time_prepare import fold_prepare_steps


def _kernels() -> tvm.IRModule:
    a = te.placeholder((3, 4), "float32", name="a")
    scaled = te.compute((4, 3), lambda i, j: a[j, i] * 2.0, name="scaled")
    b = te.placeholder((4, 3), "float32", name="b")
    c = te.placeholder((4, 3), "float32", name="c")
    summed = te.compute((4, 3), lambda i, j: b[i, j] + c[i, j], name="summed")
    return tvm.IRModule({"transpose_scale": te.create_prim_func([a, scaled]),
                         "add": te.create_prim_func([b, c, summed])})


def _record() -> dict:
    spec = {"shape": [4, 3], "dtype": "float32"}
    return {
        "inputs": [{"name": "x", **spec}],
        "params": [{"name": "w", "shape": [3, 4], "dtype": "float32"}, {"name": "shift", **spec},
                   {"name": "bias", **spec}],
        "outputs": [spec],
        "output_refs": [{"kind": "output", "index": 0}],
        "param_updates": [],
        "prepared": [spec, spec],
        "prepare_steps": [
            {"kernel": "transpose_scale", "args": [{"kind": "param", "index": 0}, {"kind": "prepared", "index": 0}]},
            {"kernel": "add", "args": [{"kind": "prepared", "index": 0}, {"kind": "param", "index": 1},
                                       {"kind": "prepared", "index": 1}]}],
        "steps": [{"kernel": "run", "args": [{"kind": "input", "index": 0}, {"kind": "prepared", "index": 1},
                                             {"kind": "param", "index": 2}, {"kind": "output", "index": 0}]}],
    }


def _stored(rng) -> list[tuple[str, np.ndarray]]:
    return [("w", rng.standard_normal((3, 4)).astype(np.float32)),
            ("shift", rng.standard_normal((4, 3)).astype(np.float32)),
            ("bias", rng.standard_normal((4, 3)).astype(np.float32))]


def test_results_are_stored_and_the_weights_that_fed_them_dropped():
    stored = _stored(np.random.default_rng(0))
    record, new_stored = fold_prepare_steps(_record(), _kernels(), stored)
    assert record["prepare_steps"] == [] and record["prepared"] == []
    # bias is read per call; w and shift fed only the prepare steps; prepared 0 was an intermediate
    assert [p["name"] for p in record["params"]] == ["bias", "__prepared1"]
    assert [name for name, _ in new_stored] == ["bias", "__prepared1"]
    np.testing.assert_array_equal(new_stored[0][1], stored[2][1])
    np.testing.assert_allclose(new_stored[1][1], stored[0][1].T * 2.0 + stored[1][1], rtol=1e-6)
    assert record["steps"][0]["args"] == [{"kind": "input", "index": 0}, {"kind": "param", "index": 1},
                                          {"kind": "param", "index": 0}, {"kind": "output", "index": 0}]


def test_a_record_that_updates_parameters_keeps_its_prepare_steps():
    record = {**_record(), "param_updates": [{"param": 0, "output": 0}]}
    stored = _stored(np.random.default_rng(1))
    folded, new_stored = fold_prepare_steps(record, _kernels(), stored)
    assert folded == record and new_stored == stored


def test_stored_tensors_that_do_not_match_the_record_are_refused():
    stored = _stored(np.random.default_rng(2))
    with pytest.raises(ValueError, match="stored: expected the record's 3 parameters"):
        fold_prepare_steps(_record(), _kernels(), stored[:2])
    wrong = [stored[0], ("shift", np.zeros((2, 2), np.float32)), stored[2]]
    with pytest.raises(ValueError, match=r"'shift' expected float32 of shape \(4, 3\), got float32 of shape \(2, 2\)"):
        fold_prepare_steps(_record(), _kernels(), wrong)


def test_a_training_record_folds_the_steps_that_read_only_frozen_weights():
    """shift is trained: the transpose of the frozen w is folded (numpy's value stored), the add
    that reads shift stays a prepare step over the folded tensor and the state."""
    record = {**_record(), "param_updates": [{"param": 1, "output": 0}]}
    stored = _stored(np.random.default_rng(3))
    folded, new_stored = fold_prepare_steps(record, _kernels(), stored)
    assert [p["name"] for p in folded["params"]] == ["shift", "bias", "__prepared0"]
    np.testing.assert_allclose(new_stored[2][1], stored[0][1].T * 2.0, rtol=1e-6)
    np.testing.assert_array_equal(new_stored[0][1], stored[1][1])
    assert folded["param_updates"] == [{"param": 0, "output": 0}]
    assert folded["prepared"] == [record["prepared"][1]]
    assert folded["prepare_steps"] == [{"kernel": "add", "args": [
        {"kind": "param", "index": 2}, {"kind": "param", "index": 0}, {"kind": "prepared", "index": 0}]}]
    assert folded["steps"][0]["args"] == [{"kind": "input", "index": 0}, {"kind": "prepared", "index": 0},
                                          {"kind": "param", "index": 1}, {"kind": "output", "index": 0}]


def test_a_training_record_that_updates_only_a_per_call_parameter_folds_every_prepare_step():
    record = {**_record(), "param_updates": [{"param": 2, "output": 0}]}
    stored = _stored(np.random.default_rng(4))
    folded, new_stored = fold_prepare_steps(record, _kernels(), stored)
    assert folded["prepare_steps"] == [] and folded["prepared"] == []
    assert [name for name, _ in new_stored] == ["bias", "__prepared1"]
    assert folded["param_updates"] == [{"param": 0, "output": 0}]
