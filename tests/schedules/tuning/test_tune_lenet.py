"""LeNet5 tuned with a small budget: records, baselines, the never-slower rule, builds side by side."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import lenet_reference

TRIALS = 24


@pytest.fixture(scope="module")
def lenet():
    """(net, input, PyTorch reference output)."""
    import aotnn

    aotnn.set_seed(5)
    net = aotnn.models.LeNet5()
    for param in net.get_parameters():
        param.set_data(np.random.default_rng(len(param.name)).normal(0, 0.2, param.shape).astype(np.float32))
    x = np.random.default_rng(1).random((1, 1, 32, 32), dtype=np.float32)
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    return net, x, lenet_reference(params, x)


@pytest.fixture(scope="module")
def tuned(lenet, tmp_path_factory):
    """(TuneResult, database path, the tasks) after tuning LeNet5 for TRIALS trials."""
    import schedules
    from aotnn.jit.compiled import capture_function
    from schedules.tuning import extract_tasks

    net, x, _ = lenet
    mod, _, _, _ = capture_function(lambda v: net(v), [("x", x.shape, "float32")])
    db = str(tmp_path_factory.mktemp("tuning") / "db")
    result = schedules.tune(mod, ["x"], db=db, trials=TRIALS, batch=4, seed=7, progress=False, model_name="lenet5")
    tasks = extract_tasks(mod, ["x"], schedules.target.to_tvm(schedules.resolve("x86")))
    return result, db, tasks


def test_every_trial_is_recorded_once_with_baselines(tuned):
    from schedules.tuning import TuningDatabase
    import schedules

    result, db, tasks = tuned
    database = TuningDatabase(db)
    target = schedules.resolve("x86")
    entries = [database.read(target, t.key) for t in tasks]
    assert all(e is not None and e["default"]["latency"] > 0 for e in entries), "each task's default is measured"
    records = [r for e in entries for r in e["records"]]
    assert len(records) == TRIALS == result.trials == result.new_trials
    assert len({(e["workload"]["name"], r["candidate"]) for e in entries for r in e["records"]}) == TRIALS
    assert sum(r["latency"] is not None for r in records) >= TRIALS // 2, "most candidates build and run"
    assert {t.key for t in tasks} == {r.key for r in result.tasks}
    assert result.latency <= result.default_latency  # the tuned estimate keeps the default where it is faster
    with open(result.plot_path, "rb") as stream:
        assert stream.read(8) == b"\x89PNG\r\n\x1a\n"
    assert len(result.curve) == TRIALS and result.curve[-1][1] <= result.curve[0][1] * 1.0001


def test_tuned_build_is_correct_and_applies_only_faster_records(tuned, lenet, tmp_path):
    """The tuned artifact computes the same function, and every record it applies beat the
    default schedule in the tuner's own measurement. End-to-end speed is measured by
    tools/tune_zoo.py (a benchmark), not here: wall-clock asserts on a shared CI machine are noise."""
    import aotnn
    import aotnn_runtime

    result, db, _ = tuned
    net, x, expected = lenet
    default_path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "default"))
    tuned_path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path / "tuned"), tuning_db=db)
    default, tuned_module = aotnn_runtime.load(default_path), aotnn_runtime.load(tuned_path)
    np.testing.assert_allclose(tuned_module.run(x)[0], expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(default.run(x)[0], expected, rtol=1e-4, atol=1e-5)
    for report in result.tasks:  # applied exactly when measured faster than the default
        faster = report.tuned_latency is not None and report.tuned_latency < report.default_latency
        assert report.applied == faster, report
    assert result.speedup >= 1.0


def test_build_applies_exactly_the_winning_records(tuned):
    import schedules
    from schedules import pipeline
    from schedules.build import _kernel_module
    from schedules.defaults import apply_default_schedules
    from schedules.tuning import apply_records
    from schedules.tuning.apply import choose
    from schedules.tuning.database import TuningDatabase
    from schedules.tuning.tasks import module_key, workload_module
    import tvm_ffi

    result, db, tasks = tuned
    target = schedules.resolve("x86")
    winners = {r.key for r in result.tasks if r.applied}
    database = TuningDatabase(db)
    for task in tasks:  # the report and the build agree on what is applied
        fingerprint = module_key(workload_module(task.default_module(schedules.target.to_tvm(target))["main"]))
        assert (choose(database.read(target, task.key), fingerprint).record is not None) == (task.key in winners)
    import aotnn
    from aotnn.jit.compiled import capture_function

    net = aotnn.models.LeNet5()
    mod, _, _, _ = capture_function(lambda v: net(v), [("x", (1, 1, 32, 32), "float32")])
    tvm_target = schedules.target.to_tvm(target)
    kernels = _kernel_module(pipeline.lower_to_kernels(mod, tvm_target))
    defaults = apply_default_schedules(kernels, tvm_target)
    applied = apply_records(kernels, defaults, target, db)
    changed = {module_key(workload_module(kernels[g.name_hint])) for g, f in applied.functions.items()
               if not tvm_ffi.structural_equal(f, defaults[g.name_hint])}
    assert changed == winners


def test_tuning_db_is_part_of_the_cache_key(tmp_path):
    import aotnn
    from aotnn.jit.compiled import compile_function
    from schedules.tuning import TuningDatabase

    db = TuningDatabase(tmp_path / "db")
    specs = [("x", (4, 8), "float32")]
    fn = lambda x: aotnn.ops.add(x, x)  # noqa: E731
    plain = compile_function(fn, specs).artifact
    with_db = compile_function(fn, specs, tuning_db=db.path).artifact
    assert with_db != plain
    assert compile_function(fn, specs, tuning_db=db.path).artifact == with_db
    db.update({"kind": "llvm", "mcpu": "none"}, "0123", records=[{"candidate": "c", "latency": 1.0, "trace": []}])
    changed = compile_function(fn, specs, tuning_db=db.path).artifact
    assert changed not in (plain, with_db)
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    np.testing.assert_array_equal(compile_function(fn, specs, tuning_db=db.path)([x]).asnumpy(), 2 * x)
    aotnn.set_context(tuning_db=db.path)  # the context's database applies to every compiled call
    try:
        assert compile_function(fn, specs).artifact == changed
    finally:
        aotnn.set_context(tuning_db=None)
    assert compile_function(fn, specs).artifact == plain
