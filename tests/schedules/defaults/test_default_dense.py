"""Dense layers, parameter matmuls and activation x activation products under the default schedules."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Parameter, Tensor, nn, ops
from default_schedule_helpers import assert_close, randomize, rules_used, t
from schedules.defaults.cpu import CpuInfo
from schedules.defaults.dense import plan_dense

# (input shape, out features, activation)
DENSE = {
    "gemv_odd_width": ((1, 37), 45, None),
    "few_rows_relu": ((3, 17), 50, "relu"),
    "batch_rows_parallel": ((64, 256), 256, "gelu"),
    "three_d_input": ((2, 5, 24), 40, "sigmoid"),
}
TORCH_ACT = {None: lambda v: v, "relu": F.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid}


@pytest.mark.parametrize("case", list(DENSE), ids=list(DENSE))
def test_dense_matches_torch(case):
    shape, out_features, activation = DENSE[case]
    net = randomize(nn.Dense(shape[-1], out_features, activation=activation), seed=len(case))
    if activation == "gelu":
        net = nn.SequentialCell([randomize(nn.Dense(shape[-1], out_features), seed=2), nn.GELU(approximate=False)])
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    p = {name.split(".")[-1]: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    assert_close(net(Tensor(x)), TORCH_ACT[activation](F.linear(t(x), p["weight"], p["bias"])))
    rules = rules_used(lambda v: net(v), [("x", shape, "float32")])
    assert any(rule == "dense" for name, rule in rules.items() if "dense" in name and "pack" not in name), rules


class TimesParameter(nn.Cell):
    """x @ B with B a (K, N) parameter: packed like a dense weight."""

    def __init__(self, k, n):
        super().__init__()
        self.b = Parameter(Tensor(np.random.default_rng(3).standard_normal((k, n)).astype(np.float32)), name="b")

    def construct(self, x):
        return ops.matmul(x, self.b) * 2.0


@pytest.mark.parametrize("shape", [(6, 19), (5, 2, 19), (3, 1, 19)], ids=["2d", "3d", "3d_single_rows"])
def test_matmul_by_parameter(shape):
    # 3-D inputs: every output row must be written however row tiles straddle the leading axes
    net = TimesParameter(19, 33)
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    assert_close(net(Tensor(x)), (t(x) @ t(net.b.asnumpy())) * 2.0)
    assert "dense" in rules_used(lambda v: net(v), [("x", x.shape, "float32")]).values()


class Attention(nn.Cell):
    def construct(self, q, k, v):
        scores = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * 0.125
        return ops.matmul(ops.softmax(scores, -1), v)


def test_batched_products_of_activations():
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 3, 16, 24)).astype(np.float32) for _ in range(3))
    net = Attention()
    want = torch.softmax(t(q) @ t(k).transpose(2, 3) * 0.125, -1) @ t(v)
    assert_close(net(Tensor(q), Tensor(k), Tensor(v)), want)
    specs = [(name, q.shape, "float32") for name in "qkv"]
    assert list(rules_used(lambda a, b, c: net(a, b, c), specs).values()).count("matmul") == 2


def test_odd_sized_product():
    a = np.random.default_rng(6).standard_normal((5, 7)).astype(np.float32)
    b = np.random.default_rng(7).standard_normal((7, 9)).astype(np.float32)
    assert_close(ops.matmul(Tensor(a), Tensor(b)), t(a) @ t(b))


@pytest.mark.parametrize("m,n", [(1, 1000), (1, 5), (128, 256), (7, 64), (3, 3)])
def test_dense_tiles_fit_the_registers(m, n):
    for cpu in (CpuInfo(256, 16, 2), CpuInfo(512, 32, 2), CpuInfo(128, 32, 1)):
        plan = plan_dense(cpu, m, n, "float32")
        vectors = -(-plan.n_block // cpu.lanes("float32"))
        held = vectors if plan.m_block > 1 else 1  # one row streams the weights from memory
        assert plan.m_block * vectors + held + 1 <= cpu.vector_registers
        assert plan.m_padded % plan.m_block == 0 and m <= plan.m_padded < m + plan.m_block
        assert plan.n_padded % plan.n_block == 0 and n <= plan.n_padded
