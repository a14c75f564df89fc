"""A training step's record for a bundle: prepare steps moved into the step sequence (their results
in the arena), new parameter values written into the parameters where that is safe, the arena
planned again. The in-place kernels run on aliased arrays give numpy's values."""
from __future__ import annotations

import numpy as np
import tvm
from tvm import te

from schedules.training_step_memory import (plan_arena, prepare_steps_into_arena, write_updates_in_place)

SPEC = {"shape": [8, 8], "dtype": "float32"}


def _kernels() -> tvm.IRModule:
    """momentum: v' = 0.9 v + g (element-wise); transpose_add: p' = p.T + g (reads other elements);
    pack: q = 2 p; use: y = x + q."""
    v, g, p, x, q = (te.placeholder((8, 8), "float32", name=n) for n in ("v", "g", "p", "x", "q"))
    scaled = te.compute((8, 8), lambda i, j: v[i, j] * 0.9, name="scaled")
    momentum = te.compute((8, 8), lambda i, j: scaled[i, j] + g[i, j], name="momentum")
    transposed = te.compute((8, 8), lambda i, j: p[j, i] + g[i, j], name="transposed")
    packed = te.compute((8, 8), lambda i, j: p[i, j] * 2.0, name="packed")
    used = te.compute((8, 8), lambda i, j: x[i, j] + q[i, j], name="used")
    return tvm.IRModule({"momentum": te.create_prim_func([v, g, momentum]),
                         "transpose_add": te.create_prim_func([p, g, transposed]),
                         "pack": te.create_prim_func([p, q]), "use": te.create_prim_func([x, q, used])})


def _ref(kind: str, index: int) -> dict:
    return {"kind": kind, "index": index}


def _record(update_kernel: str, later_reader: bool = False) -> dict:
    """param 0 updated into output 1 by ``update_kernel`` (from param 0 and buffer 0); with
    ``later_reader``, a step after the update still reads param 0."""
    steps = [{"kernel": "use", "args": [_ref("input", 0), _ref("param", 1), _ref("buffer", 0)]},
             {"kernel": update_kernel, "args": [_ref("param", 0), _ref("buffer", 0), _ref("output", 1)]}]
    if later_reader:
        steps.append({"kernel": "use", "args": [_ref("buffer", 0), _ref("param", 0), _ref("output", 0)]})
    else:
        steps[0]["args"][-1] = _ref("output", 0)
        steps[1]["args"][1] = _ref("input", 0)
    return {"inputs": [{"name": "x", **SPEC}], "params": [{"name": "w", **SPEC}, {"name": "b", **SPEC}],
            "outputs": [SPEC, SPEC], "output_refs": [_ref("output", 0), _ref("output", 1)],
            "param_updates": [{"param": 0, "output": 1}], "prepared": [], "prepare_steps": [],
            "buffers": [{**SPEC, "offset": 0, "nbytes": 256}], "arena_bytes": 256, "steps": steps}


def test_an_element_wise_update_is_written_into_the_parameter():
    record = write_updates_in_place(_record("momentum"), _kernels())
    assert record["steps"][1]["args"] == [_ref("param", 0), _ref("input", 0), _ref("param", 0)]
    assert record["output_refs"][1] == _ref("param", 0)
    # the kernel on one array for the old and the new value: numpy's momentum
    library = tvm.compile(tvm.IRModule({"main": _kernels()["momentum"]}), target="llvm")
    rng = np.random.default_rng(0)
    v, g = rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
    state = tvm.runtime.tensor(v)
    library["main"](state, tvm.runtime.tensor(g), state)
    np.testing.assert_allclose(state.numpy(), 0.9 * v + g, rtol=1e-6)


def test_an_update_reading_other_elements_or_read_later_keeps_its_output():
    for record in (_record("transpose_add"), _record("momentum", later_reader=True)):
        result = write_updates_in_place(record, _kernels())
        assert result["steps"] == record["steps"] and result["output_refs"] == record["output_refs"]


def test_prepare_steps_run_before_their_first_reader_with_results_in_the_arena():
    record = _record("momentum")
    record["prepared"] = [SPEC]
    record["prepare_steps"] = [{"kernel": "pack", "args": [_ref("param", 1), _ref("prepared", 0)]}]
    record["steps"][0]["args"][1] = _ref("prepared", 0)
    moved = plan_arena(prepare_steps_into_arena(record))
    assert moved["prepare_steps"] == [] and moved["prepared"] == []
    assert [s["kernel"] for s in moved["steps"]] == ["pack", "use", "momentum"]
    assert moved["steps"][0]["args"] == [_ref("param", 1), _ref("buffer", 1)]
    assert moved["steps"][1]["args"][1] == _ref("buffer", 1)
    assert moved["buffers"][1]["nbytes"] == 256 and moved["arena_bytes"] == 256  # buffer 0 is unused now


def test_buffers_live_at_the_same_step_do_not_overlap():
    record = _record("momentum", later_reader=True)
    record["buffers"].append({**SPEC, "offset": 0, "nbytes": 256})
    record["steps"].insert(0, {"kernel": "use", "args": [_ref("input", 0), _ref("param", 1), _ref("buffer", 1)]})
    record["steps"][1]["args"][0] = _ref("buffer", 1)  # buffer 1 live over steps 0-1, buffer 0 over 1-3
    planned = plan_arena(record)
    first, second = planned["buffers"]
    assert abs(first["offset"] - second["offset"]) >= 256 and planned["arena_bytes"] == 512
