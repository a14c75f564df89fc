"""Per-kernel profiles (Module.profile, aotnn_runtime/profile.py) and the FLOPs/bytes the build records."""
from __future__ import annotations

import json
import statistics
import time

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn import nn
from aotnn_runtime.errors import ArtifactError
from aotnn_runtime.profile import chrome_trace, format_table, write_trace


class _DenseConv(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(64, 32, has_bias=False)
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="valid", has_bias=False)

    def construct(self, x, y):
        return self.fc(x), self.conv(y)


@pytest.fixture(scope="module")
def dense_conv(tmp_path_factory):
    x = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((2, 3, 10, 10)).astype(np.float32)
    path = aotnn.export(_DenseConv(), aotnn.Tensor(x), aotnn.Tensor(y),
                        file_name=str(tmp_path_factory.mktemp("prof") / "dense_conv"))
    return path, x, y


def _steps(path):
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        return json.load(stream)["entries"]["predict"]["steps"]


def test_manifest_counts_dense_and_conv_flops_as_by_hand(dense_conv):
    path, _, _ = dense_conv
    flops = {step["kernel"]: step.get("flops") for step in _steps(path)}
    dense = [count for name, count in flops.items() if "dense" in name]
    conv = [count for name, count in flops.items() if "conv2d" in name]
    assert dense == [2 * 8 * 32 * 64]  # 2*M*N*K
    assert conv == [2 * (2 * 8 * 8 * 8) * (3 * 3 * 3)]  # 2 * outputs * (C_in * kh * kw)


def test_manifest_bytes_count_each_tensor_of_a_step_once(dense_conv):
    path, _, _ = dense_conv
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        record = json.load(stream)["entries"]["predict"]
    tables = {"input": "inputs", "param": "params", "output": "outputs", "buffer": "buffers", "prepared": "prepared"}
    for step in record["steps"]:
        slots = {(ref["kind"], ref["index"]) for ref in step["args"]}
        expected = sum(int(np.prod(record[tables[k]][i]["shape"])) * np.dtype(record[tables[k]][i]["dtype"]).itemsize
                       for k, i in slots)
        assert step["bytes"] == expected


def test_profile_names_every_step_and_sums_to_about_the_call(lenet_artifact):
    path, _, x, _ = lenet_artifact
    module = aotnn_runtime.load(path)
    records = module.profile(x, repeat=7)
    assert [r.kernel for r in records] == [step["kernel"] for step in _steps(path)]
    assert all(len(r.durations_ns) == 7 and min(r.durations_ns) >= 0 for r in records)
    kernels_s = sum(r.median_ms for r in records) / 1e3
    calls = []
    for _ in range(7):
        start = time.perf_counter()
        module.run(x)
        calls.append(time.perf_counter() - start)
    # the kernels run inside the call: their sum is below a whole call, and not a tiny part of it
    assert 0 < kernels_s < 20 * max(calls)
    assert kernels_s > statistics.median(calls) / 1000


def test_profile_leaves_results_and_weights_as_they_were(lenet_artifact):
    path, _, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    module.profile(x, repeat=2)
    np.testing.assert_allclose(module.run(x)[0], expected, rtol=1e-4, atol=1e-4)


def test_trace_has_one_complete_event_per_kernel_call(lenet_artifact, tmp_path):
    path, _, x, _ = lenet_artifact
    records = aotnn_runtime.load(path).profile(x, repeat=3)
    write_trace(tmp_path / "t.json", records)
    trace = json.loads((tmp_path / "t.json").read_text())
    events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(events) == 3 * len(records)
    for record in records:
        mine = sorted((e for e in events if e["args"]["step"] == record.step), key=lambda e: e["args"]["repeat"])
        assert [e["name"] for e in mine] == [record.kernel] * 3
        assert [e["dur"] for e in mine] == [d / 1e3 for d in record.durations_ns]
    starts = [e["ts"] for e in events]
    assert starts == sorted(starts) and all(e["dur"] >= 0 for e in events)
    assert chrome_trace(records)["traceEvents"][1:] == trace["traceEvents"][1:]


def test_table_lists_kernels_slowest_first_with_rates(dense_conv):
    path, x, y = dense_conv
    records = aotnn_runtime.load(path).profile(x, y, repeat=3)
    lines = format_table(records).splitlines()
    body = [line for line in lines[2:] if line and not line.startswith("-") and "total" not in line]
    times = [float(line.split()[2]) for line in body]
    assert times == sorted(times, reverse=True) and len(body) == len(records)
    dense = next(r for r in records if "dense" in r.kernel)
    assert dense.gflops == pytest.approx(dense.flops / (dense.median_ms * 1e6))


def test_profile_refuses_bad_repeat_and_libraries_without_the_timed_runner(lenet_artifact):
    path, _, x, _ = lenet_artifact
    module = aotnn_runtime.load(path)
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="repeat"):
            module.profile(x, repeat=bad)
    module["predict"]._native._timed_runner = None  # what a library built before the profiler has
    with pytest.raises(ArtifactError, match="rebuild"):
        module.profile(x, repeat=1)


def test_native_timing_checks_the_timestamp_array(lenet_artifact):
    path, _, _, _ = lenet_artifact
    native = aotnn_runtime.load(path)["predict"]._native
    for bad in (np.zeros(3, np.int64), np.zeros(len(native._table) + 1, np.float64), [0] * (len(native._table) + 1)):
        with pytest.raises(ValueError, match="timestamps"):
            with native.timing(bad):
                pass
    assert "run" not in native.__dict__  # the untimed run is back


def test_manifest_validator_refuses_malformed_costs(lenet_artifact):
    from aotnn_runtime.validate import check_manifest
    path, _, _, _ = lenet_artifact
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        manifest = json.load(stream)
    check_manifest(manifest)
    for field, bad in (("flops", -1), ("flops", 1.5), ("bytes", "10"), ("bytes", True)):
        broken = json.loads(json.dumps(manifest))
        broken["entries"]["predict"]["steps"][0][field] = bad
        with pytest.raises(ArtifactError, match=rf"steps\[0\]\.{field}"):
            check_manifest(broken)
