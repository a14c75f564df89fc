"""int8 dense on AVX-512 VNNI (``int8_vnni``): packed weights and vpdpbusd, bit-exact against numpy."""
from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import relax as R

from aotnn import Tensor, ops
from schedules import defaults
from schedules import target as targets



def _host_has_vnni() -> bool:
    with open("/proc/cpuinfo", encoding="utf-8") as stream:
        return any(line.startswith("flags") and "avx512_vnni" in line.split() for line in stream)


pytestmark = pytest.mark.skipif(not _host_has_vnni(), reason="the host has no AVX-512 VNNI")
RNG = np.random.default_rng(11)


@pytest.fixture
def vnni_cpu(monkeypatch):
    monkeypatch.setenv(targets.MCPU_ENV, "cascadelake")


def _requantize_ref(acc, bias, multiplier, zero_point, low, high):
    """int32 accumulators + bias, times the float32 multiplier, round half to even, shift, clamp."""
    total = (acc + bias).astype(np.float32) * multiplier
    return np.clip(np.round(total) + zero_point, low, high).astype(np.uint8)


@pytest.mark.parametrize("m, k, n", [(1, 400, 120), (3, 84, 10), (2, 64, 37)])
def test_int8_dense_with_requantize_is_exact(vnni_cpu, m, k, n):
    x = RNG.integers(0, 256, (m, k)).astype(np.uint8)
    w = RNG.integers(-128, 128, (n, k)).astype(np.int8)
    bias = RNG.integers(-5000, 5000, n).astype(np.int32)
    multiplier = RNG.uniform(1e-4, 4e-3, n).astype(np.float32)
    acc = ops.int8_dense(Tensor(x), Tensor(w)).asnumpy()
    np.testing.assert_array_equal(acc, x.astype(np.int64) @ w.astype(np.int64).T)
    y = ops.int8_requantize(ops.int8_dense(Tensor(x), Tensor(w)), Tensor(bias), Tensor(multiplier), 3, 3, 255,
                            "uint8").asnumpy()
    ref = _requantize_ref(x.astype(np.int32) @ w.astype(np.int32).T, bias, multiplier, 3, 3, 255)
    np.testing.assert_array_equal(y, ref)


def _dense_module(xdtype: str, k: int) -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((2, k), xdtype))
    w = relax.Var("w", R.Tensor((24, k), "int8"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.matmul(x, bb.emit(relax.op.permute_dims(w, [1, 0])), out_dtype="int32"))
        bb.emit_func_output(out)
    return bb.get()


def _kernel_names(mod: tvm.IRModule) -> set[str]:
    return {gv.name_hint for gv in mod.functions}


def test_rewrite_only_for_vnni_uint8_and_k_multiple_of_4():
    vnni = tvm.target.Target({"kind": "llvm", "mcpu": "cascadelake"})
    plain = tvm.target.Target({"kind": "llvm", "mcpu": "skylake-avx512"})
    assert "aotnn_int8_dense" in _kernel_names(defaults.rewrite_relax(_dense_module("uint8", 32), vnni))
    assert "aotnn_pack_int8_dense_weight" in _kernel_names(defaults.rewrite_relax(_dense_module("uint8", 32), vnni))
    for mod, target in ((_dense_module("uint8", 32), plain), (_dense_module("int8", 32), vnni),
                        (_dense_module("uint8", 30), vnni)):
        assert "aotnn_int8_dense" not in _kernel_names(defaults.rewrite_relax(mod, target))


def test_dequantized_int8_dense_takes_the_vnni_rule_on_two_cores(vnni_cpu):
    """A classifier's int8 dense with a dequantizing epilogue (bias, cast, per-channel scale), as post-training
    quantization leaves the last layer: scheduled by ``int8_vnni`` with its task loop parallel (the parallel
    mark came after the update's init was split off, which TVM refused), and exact. ``folded``: the input's
    zero point is left to the bias, so the product is of the raw uint8 values."""
    import dataclasses

    from default_schedule_helpers import _host_kernels

    w = Tensor(RNG.integers(-128, 128, (40, 64)).astype(np.int8))
    bias = Tensor(RNG.integers(-3000, 3000, (1, 40)).astype(np.int32))
    scale = Tensor(RNG.uniform(1e-4, 1e-3, 40).astype(np.float32))

    def net(x):
        return ops.int8_dequantize(ops.int8_dense(x, w, 5, None, True) + bias, scale, 0, 1)

    kernels, target = _host_kernels(net, [("x", (1, 64), "uint8")])
    cpu = dataclasses.replace(defaults.cpu_info(target), cores=2)
    for gv, func in kernels.functions.items():
        if "aotnn_int8_dense" in gv.name_hint and "pack" not in gv.name_hint:
            scheduled, rule = defaults.schedule_with_rule(func, cpu, target)
            assert rule == "int8_vnni", gv.name_hint
            assert "parallel" in scheduled.script(), "the task loop is not parallel"
    x = RNG.integers(0, 256, (1, 64)).astype(np.uint8)
    acc = x.astype(np.int64) @ w.asnumpy().astype(np.int64).T + bias.asnumpy()
    expected = acc.astype(np.float32) * scale.asnumpy()
    np.testing.assert_array_equal(net(Tensor(x)).asnumpy(), expected)
