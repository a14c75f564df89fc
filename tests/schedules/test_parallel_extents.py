"""Each step records its kernel's parallel loop extents for the thread pool (schedules/parallel_extents.py)."""
import json
import re

import numpy as np
import tvm
from tvm.script import tirx as T

import aotnn
from aotnn import Tensor, nn
from aotnn.jit.compiled import capture_function
from schedules import pipeline, target as targets
from schedules.build import _kernel_module
from schedules.defaults import apply_default_schedules
from schedules.parallel_extents import parallel_extents


@T.prim_func
def _two_parallel_loops(a: T.Buffer((64, 8), "float32"), b: T.Buffer((64, 8), "float32"),
                        c: T.Buffer((12,), "float32"), flag: T.int32):
    for i in T.parallel(64):
        for j in range(8):
            b[i, j] = a[i, j] * T.float32(2)
    if flag > 0:
        for k in T.parallel(12):
            c[k] = T.float32(1)


@T.prim_func
def _serial(a: T.Buffer((16,), "float32")):
    for i in range(16):
        a[i] = T.float32(0)


@T.prim_func
def _launch_point(a: T.Buffer((16, 4), "float32")):
    with T.attr(0, "pragma_parallel_launch_point", 1):
        for i in T.parallel(16):
            for j in range(4):
                a[i, j] = T.float32(0)


def test_loops_are_listed_in_launch_order_conditional_ones_included():
    assert parallel_extents(_two_parallel_loops) == [64, 12]


def test_a_kernel_without_parallel_loops_has_none():
    assert parallel_extents(_serial) == []


def test_loops_under_a_launch_point_are_not_matched_to_launches():
    # one launch runs every loop under the pragma: a per-loop list would not match the launches
    assert parallel_extents(_launch_point) == []


class _Block(nn.Cell):
    """Expansion, depthwise and projection over a 56x56 map: big enough for parallel kernels."""

    def __init__(self):
        super().__init__()
        self.expand = nn.Conv2d(16, 64, 1, has_bias=True)
        self.depthwise = nn.Conv2d(64, 64, 3, stride=2, pad_mode="pad", padding=1, group=64, has_bias=True)
        self.project = nn.Conv2d(64, 24, 1, has_bias=True)
        self.relu = nn.ReLU6()

    def construct(self, x):
        return self.project(self.relu(self.depthwise(self.relu(self.expand(x)))))


def test_recorded_extents_match_the_parallel_loops_tvm_lowers():
    """Against TVM's own lowering: the loops left in each kernel after its full TIR pipeline (the
    code the library runs), read from the lowered script in order."""
    aotnn.set_seed(0)
    net = _Block()
    x = np.zeros((1, 16, 56, 56), np.float32)
    mod, _, _, _ = capture_function(lambda v: net(v), [("x", x.shape, "float32")])
    target = targets.to_tvm(targets.resolve(None))
    scheduled = apply_default_schedules(_kernel_module(pipeline.lower_to_kernels(mod, target)), target)
    bound = tvm.tirx.transform.BindTarget(target.with_host(target))(scheduled)
    passes, _, _ = tvm.tirx.get_default_tir_pipeline(target)
    lowered = passes(bound)
    parallel_kernels = 0
    for gvar, func in scheduled.functions.items():
        launched = [int(n) for n in re.findall(r"in T\.parallel\((\d+)\)", lowered[gvar.name_hint].script())]
        assert parallel_extents(func) == launched, gvar.name_hint
        parallel_kernels += bool(launched)
    assert parallel_kernels >= 1


def test_the_manifest_lists_each_steps_extents(tmp_path):
    aotnn.set_seed(0)
    net = _Block()
    x = np.random.default_rng(0).random((1, 16, 56, 56), dtype=np.float32)
    path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "block"))
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        steps = json.load(stream)["entries"]["predict"]["steps"]
    assert all(isinstance(step["parallel"], list) for step in steps)
    assert any(step["parallel"] for step in steps)
