"""How the default schedules pick targets and rules, and that a failing rule costs speed, not correctness."""
import numpy as np
import pytest
import torch.nn.functional as F
import tvm
from tvm import te

import schedules.defaults as defaults
from aotnn import Tensor, nn
from default_schedule_helpers import assert_close, rules_used, t
from schedules.defaults import cpu_info


@pytest.mark.parametrize("target,lanes,registers", [
    ({"kind": "llvm", "mcpu": "skylake-avx512", "num-cores": 4}, 16, 32),
    ({"kind": "llvm", "mcpu": "znver3", "num-cores": 2}, 8, 16),
    ({"kind": "llvm", "mtriple": "aarch64-linux-gnu", "mattr": ["+neon"]}, 4, 32),
    ({"kind": "llvm", "mcpu": "x86-64"}, 4, 16),
])
def test_cpu_info_from_target(target, lanes, registers):
    cpu = cpu_info(tvm.target.Target(target))
    assert cpu.lanes("float32") == lanes and cpu.vector_registers == registers
    assert cpu.cores == target.get("num-cores", 1)


def test_gpu_targets_are_left_alone():
    assert cpu_info(tvm.target.Target({"kind": "cuda", "arch": "sm_80"})) is None


def _elementwise_func():
    a = te.placeholder((64, 64), name="a")
    b = te.compute((64, 64), lambda i, j: a[i, j] * 2.0, name="b")
    return te.create_prim_func([a, b])


def test_elementwise_is_vectorized():
    target = tvm.target.Target({"kind": "llvm", "mcpu": "znver3", "num-cores": 2})
    func, rule = defaults.schedule_with_rule(_elementwise_func(), cpu_info(target), target)
    assert rule == "elementwise" and "T.vectorized" in func.script()


class _BrokenRule:
    __name__ = "broken"

    @staticmethod
    def matches(sch):
        return True

    @staticmethod
    def schedule(sch, cpu):
        raise RuntimeError("this rule always fails")


def test_failing_rule_leaves_the_kernel_as_it_was(monkeypatch):
    monkeypatch.setattr(defaults, "SCHEDULE_RULES", (_BrokenRule,))
    func = _elementwise_func()
    target = tvm.target.Target({"kind": "llvm", "mcpu": "znver3"})
    scheduled, rule = defaults.schedule_with_rule(func, cpu_info(target), target)
    assert rule is None and scheduled.same_as(func)


class _DecliningRule(_BrokenRule):
    __name__ = "declining"

    @staticmethod
    def schedule(sch, cpu):
        raise defaults.common.NotScheduled("not this kernel's shape")


def test_a_rule_that_breaks_is_reported_and_one_that_declines_is_not(monkeypatch, caplog):
    target = tvm.target.Target({"kind": "llvm", "mcpu": "znver3"})
    for rule, warned in ((_BrokenRule, True), (_DecliningRule, False)):
        monkeypatch.setattr(defaults, "SCHEDULE_RULES", (rule, *_RULES))
        caplog.clear()
        with caplog.at_level("WARNING", logger="schedules.defaults"):
            scheduled, used = defaults.schedule_with_rule(_elementwise_func(), cpu_info(target), target)
        assert used == "elementwise" and "T.vectorized" in scheduled.script()  # the next rule's schedule
        messages = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        if warned:
            assert len(messages) == 1 and "BrokenRule" in messages[0] and "this rule always fails" in messages[0]
        else:
            assert messages == []


_RULES = defaults.SCHEDULE_RULES


def test_failing_relax_rule_compiles_the_graph_unrewritten(monkeypatch, tmp_path):
    def broken(rw, var, call):
        if call.op.name == "relax.nn.conv2d":
            raise RuntimeError("this rewrite always fails")
        return False

    monkeypatch.setattr(defaults, "RELAX_RULES", (broken,))
    monkeypatch.setenv("AOTNN_CACHE_DIR", str(tmp_path))  # no artifact built with the real rules
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    weight = np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32)
    net = nn.Conv2d(3, 4, 3, pad_mode="valid", weight_init=Tensor(weight))
    assert_close(net(Tensor(x)), F.conv2d(t(x), t(weight)))


def test_kernels_with_bool_intermediates_compile_and_compute():
    """igamma's kernels combine stored and computed bools; vectorizing them trips LLVM's verifier."""
    import aotnn
    from scipy import special

    weights = np.arange(1, 9, dtype=np.float32)

    class Weighted(nn.Cell):
        def construct(self, a, x):
            return (aotnn.ops.igamma(a, x) * Tensor(weights)).sum()

    a = np.linspace(0.5, 4.0, 8, dtype=np.float32)
    x = np.linspace(0.2, 5.0, 8, dtype=np.float32)
    expected = float((special.gammainc(a.astype(np.float64), x.astype(np.float64)) * weights).sum())
    assert abs(float(Weighted()(Tensor(a), Tensor(x)).asnumpy()) - expected) < 1e-4 * abs(expected)


def test_reduction_whose_producers_form_a_diamond_is_scheduled():
    """``d = where(a > 1, a, exp(a))`` reads ``a`` twice (directly and through ``exp``): inlining
    the producers reaches ``a`` twice; the reduction rule used to break on the second visit."""
    x = te.placeholder((3, 4, 5), name="x")
    a = te.compute((3, 4, 5), lambda i, j, k: x[i, j, k] - 0.5, name="a")
    e = te.compute((3, 4, 5), lambda i, j, k: te.exp(a[i, j, k]), name="e")
    d = te.compute((3, 4, 5), lambda i, j, k: te.if_then_else(a[i, j, k] > 1.0, a[i, j, k], e[i, j, k]), name="d")
    r = te.reduce_axis((0, 4), "r")
    total = te.compute((3, 5), lambda i, k: te.sum(d[i, r, k], axis=r), name="total")
    target = tvm.target.Target({"kind": "llvm", "mcpu": "znver3", "num-cores": 2})
    func, rule = defaults.schedule_with_rule(te.create_prim_func([x, total]), cpu_info(target), target)
    assert rule == "reduction"
    data = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    out = np.empty((3, 5), np.float32)
    tvm.compile(tvm.IRModule({"main": func}), target=target)["main"](tvm.runtime.tensor(data), tvm_out := tvm.runtime.tensor(out))
    a_ref = data - 0.5
    np.testing.assert_allclose(tvm_out.numpy(), np.where(a_ref > 1.0, a_ref, np.exp(a_ref)).sum(axis=1), rtol=1e-5)


def test_float16_dense_keeps_its_matmul_schedule():
    """A float16 Dense casts its bias inside the kernel; the epilogue that adds it follows the
    register tiles only once that cast is inlined (the matmul rule broke on it before)."""
    import aotnn

    rng = np.random.default_rng(4)
    weight, bias, x = (rng.standard_normal(s).astype(np.float32) for s in ((16, 24), (16,), (8, 24)))
    net = nn.Dense(24, 16, weight_init=Tensor(weight), bias_init=Tensor(bias)).to_float(aotnn.float16)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float16")])
    assert [rule for name, rule in rules.items() if "matmul" in name] == ["matmul"], rules
    out = net(Tensor(x.astype(np.float16))).asnumpy().astype(np.float32)
    np.testing.assert_allclose(out, F.linear(t(x), t(weight), t(bias)).numpy(), atol=3e-2, rtol=1e-2)
