"""The kernels of a host artifact run in one native call (runtime/aotnn_runtime/native_steps.py)."""
from __future__ import annotations

import ctypes
import time

import numpy as np
import pytest

import aotnn_runtime
from aotnn_runtime.native_steps import NativeSteps, dlpack_code, supported

from tests.conftest import lenet_reference


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


def test_host_artifact_runs_its_steps_natively_with_python_loop_results(lenet_artifact):
    path, _, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    entry = module[module.entry_points[0]]
    assert entry._native is not None  # the library carries aotnn_run_steps
    assert entry._native._prefetch is not None  # and idle threads prefetch each next step's weights
    native = module.run(x)[0]
    _close(native, expected)
    entry._native = None  # what an artifact without the runner does: one Python call per kernel
    np.testing.assert_array_equal(module.run(x)[0], native)


def test_parameters_given_per_call_are_rebound_each_call(lenet_artifact):
    path, params, x, _ = lenet_artifact
    module = aotnn_runtime.load(path)
    for shift in (0.0, 1.5, -0.25):
        given = {"fc3.bias": params["fc3.bias"] + shift}
        _close(module.run(x, params=given)[0], lenet_reference({**params, **given}, x))
    _close(module.run(x)[0], lenet_reference(params, x))  # back to the stored weights


def _lenet_kernel(path):
    module = aotnn_runtime.load(path)
    record = module.manifest["entries"][module.entry_points[0]]
    step = record["steps"][0]
    tables = {"input": record["inputs"], "param": record["params"], "output": record["outputs"],
              "buffer": record["buffers"], "prepared": record.get("prepared", [])}
    specs = [(tuple(tables[a["kind"]][a["index"]]["shape"]), tables[a["kind"]][a["index"]]["dtype"]) for a in step["args"]]
    address = module._cdll["__tvm_ffi_" + step["kernel"]]
    return module, ctypes.cast(address, ctypes.c_void_p).value, specs


def test_a_kernel_error_is_raised_in_python_with_the_kernel_message(lenet_artifact):
    module, kernel, specs = _lenet_kernel(lenet_artifact[0])
    wrong = [((*shape[:-1], shape[-1] + 1), dtype) for shape, dtype in specs]  # every last axis one too long
    arrays = [aotnn_runtime.aligned_empty(shape, dtype) for shape, dtype in wrong]
    steps = NativeSteps(module._library["aotnn_run_steps"], [kernel], [[("tensor", i) for i in range(len(wrong))]],
                        {"tensor": wrong})
    steps.bind("tensor", arrays)
    with pytest.raises(Exception, match="(?i)shape|mismatch"):
        steps.run()


@pytest.mark.parametrize("args, message", [(("table", 1), "as integers"), ((0, 1), "NULL"), ((8, -1), "negative")])
def test_the_runner_refuses_malformed_arguments(lenet_artifact, args, message):
    runner = aotnn_runtime.load(lenet_artifact[0])._library["aotnn_run_steps"]
    with pytest.raises(ValueError, match=message):
        runner(*args)


def test_dlpack_codes_follow_the_dlpack_header():
    assert dlpack_code(np.dtype("float32")) == (2, 32)
    assert dlpack_code(np.dtype("float16")) == (2, 16)
    assert dlpack_code(np.dtype("int64")) == (0, 64)
    assert dlpack_code(np.dtype("uint8")) == (1, 8)
    assert dlpack_code(np.dtype("bool")) == (6, 8)
    assert dlpack_code(np.dtype("complex64")) is None
    assert supported({"input": [((2, 3), "float32")], "param": [((1,), "int32")]})
    assert not supported({"input": [((2,), "complex64")]})


def test_parallel_kernels_are_right_whether_the_pool_slept_or_spun(tmp_path):
    """Each call first wakes the thread pool with a launch that has no work: calls after the
    workers went to sleep and calls while they still poll must both run every chunk."""
    import torch

    path, weight, x = _conv_artifact(tmp_path)
    module = aotnn_runtime.load(path)
    module.set_num_threads(2)
    for pause in (0.0, 0.02, 0.0, 0.0, 0.02):
        time.sleep(pause)
        scale = 1.0 + pause * 10
        expected = torch.nn.functional.conv2d(torch.from_numpy(x * scale), torch.from_numpy(weight)).numpy()
        _close(module.run(x * scale)[0], expected)


def _conv_artifact(tmp_path):
    import aotnn
    from aotnn import Tensor, nn

    aotnn.set_seed(0)
    net = nn.Conv2d(8, 16, 3, pad_mode="valid", has_bias=False)  # 4.4 M multiply-adds: parallel
    x = np.random.default_rng(0).random((1, 8, 64, 64), dtype=np.float32)
    path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "conv"))
    return path, net.weight.asnumpy(), x


def _set_extents(path, extents):
    import json
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        manifest = json.load(stream)
    for step in manifest["entries"]["predict"]["steps"]:
        step["parallel"] = extents
    with open(f"{path}/manifest.json", "w", encoding="utf-8") as stream:
        json.dump(manifest, stream)


@pytest.mark.parametrize("extents", [[1], [7], [100000], [0], [3, 5, 9], []])
def test_wrong_parallel_extents_cost_speed_not_correctness(tmp_path, extents):
    """A kernel computes its whole loop for any task count the pool picks from a (wrong) extent."""
    import torch

    path, weight, x = _conv_artifact(tmp_path)
    _set_extents(path, extents)
    module = aotnn_runtime.load(path)
    module.set_num_threads(2)
    assert module[module.entry_points[0]]._native._parallel is not None
    expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(weight)).numpy()
    for _ in range(3):
        _close(module.run(x)[0], expected)


@pytest.mark.parametrize("extents", [[-1], ["8"], [True], 8, [1 << 31]])
def test_malformed_parallel_extents_are_refused(tmp_path, extents):
    path, _, _ = _conv_artifact(tmp_path)
    _set_extents(path, extents)
    with pytest.raises(aotnn_runtime.ArtifactError, match="parallel extents"):
        aotnn_runtime.load(path)


def _uneven_library(tmp_path):
    """A kernel whose first 32 of 64 parallel iterations are slow; each records the thread that ran it."""
    import tvm
    import tvm_ffi
    from tvm.script import tirx as T

    from schedules import backend, cache, target as targets

    @T.prim_func
    def uneven(thread: T.Buffer((64,), "int64"), value: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "uneven"})
        for i in T.parallel(64):
            value[i] = T.float32(0)
            for _ in range(T.if_then_else(i < 32, 300000, 10)):
                value[i] = value[i] * T.float32(0.5) + T.float32(1)
            thread[i] = T.call_extern("int64", "pthread_self")

    library = tvm.compile(tvm.IRModule({"uneven": uneven}), target=targets.to_tvm(targets.resolve(None)))
    path = str(tmp_path / "uneven.so")
    library.export_library(path, addons=backend.host_objects(str(tmp_path / "objects")))
    module, cdll = tvm_ffi.load_module(path), ctypes.CDLL(path)
    cdll.aotnn_install_backend()
    cdll.aotnn_set_num_threads(ctypes.c_int(2))
    return module, cdll


@pytest.mark.parametrize("extents, stolen", [([64], True), ([], False)])
def test_a_thread_whose_tasks_run_long_hands_some_to_the_other(tmp_path, extents, stolen):
    """With the loop's extent the pool cuts it into tasks and the thread done first takes the other's
    last ones; without it there are two tasks (TVM's halves), each run whole by one thread.

    Load-proof: on a busy machine the worker may not get a core before the caller is done (the
    caller then runs everything), so the hand-over is required of one run in several, while a
    half split between threads without an extent is refused in every run."""
    module, cdll = _uneven_library(tmp_path)
    kernel = ctypes.cast(cdll["__tvm_ffi_uneven"], ctypes.c_void_p).value
    specs = {"tensor": [((64,), "int64"), ((64,), "float32")]}
    steps = NativeSteps(module["aotnn_run_steps"], [kernel], [[("tensor", 0), ("tensor", 1)]], specs,
                        parallel=[extents])
    thread, value = (aotnn_runtime.aligned_empty(shape, dtype) for shape, dtype in specs["tensor"])
    steps.bind("tensor", [thread, value])
    steps.run()  # the first launch starts the worker thread
    handed_over = False
    for _ in range(8):
        thread[:] = 0
        steps.run()
        # x -> x / 2 + 1 from 0: 2 - 2^(1 - n) after n steps (2 in float32 from n = 25 on)
        np.testing.assert_allclose(value, np.where(np.arange(64) < 32, 2.0, 2.0 - 2.0 ** -9), rtol=1e-7)
        slow, fast = set(thread[:32].tolist()), set(thread[32:].tolist())
        assert 0 not in slow | fast  # every iteration ran
        if not stolen:
            assert len(slow) == 1 and len(fast) == 1, (slow, fast)  # a half is one task
        handed_over = handed_over or len(slow) == 2
        if handed_over:
            break
    assert handed_over == stolen
