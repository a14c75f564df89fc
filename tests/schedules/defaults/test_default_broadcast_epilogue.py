"""Squeeze-and-excitation's last kernel (1x1 convolution over the pooled map, bias, gate, and the
multiply of the gate with the whole feature map) against PyTorch, and its schedule: the gate is
computed once per channel in the convolution's write-back, the broadcast multiply is vectorized
and spread over the cores (it was a serial scalar loop recomputing a sigmoid per element)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tvm import tirx
from tvm.s_tir import Schedule

from aotnn import Tensor, nn, ops
from default_schedule_helpers import _host_kernels, assert_close, randomize, rules_used, t, torch_params
from test_default_inverted_residual import _enclosing_loops
import schedules.defaults as defaults

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run

CHANNELS, SQUEEZED, SIZE = 64, 8, 36  # 64 x 36 x 36: enough elements for the multiply to go parallel


def hard_sigmoid(x):
    return ops.clip_by_value(x + 3.0, 0.0, 6.0) / 6.0


GATES = {"sigmoid": (ops.sigmoid, torch.sigmoid), "hard_sigmoid": (hard_sigmoid, F.hardsigmoid)}


class SqueezeExcite(nn.Cell):
    """mean -> 1x1 conv -> ReLU -> 1x1 conv -> gate -> x * gate."""

    def __init__(self, gate):
        super().__init__()
        self.reduce = nn.Conv2d(CHANNELS, SQUEEZED, 1, has_bias=True)
        self.expand = nn.Conv2d(SQUEEZED, CHANNELS, 1, has_bias=True)
        self.gate = gate

    def construct(self, x):
        s = ops.relu(self.reduce(ops.mean(x, (2, 3), True)))
        return x * self.gate(self.expand(s))


def reference(net, x, gate):
    p = torch_params(net)
    s = F.relu(F.conv2d(t(x).mean((2, 3), keepdim=True), p["reduce.weight"], p["reduce.bias"]))
    return t(x) * gate(F.conv2d(s, p["expand.weight"], p["expand.bias"]))


def _gate_kernel(net, x):
    """(name, scheduled TIR) of the kernel holding the broadcast multiply."""
    kernels, target = _host_kernels(lambda v: net(v), [("x", x.shape, "float32")])
    scheduled = defaults.apply_default_schedules(kernels, target)
    found = [(gv.name_hint, func) for gv, func in scheduled.functions.items()
             if "conv2d" in gv.name_hint and "multiply" in gv.name_hint]
    assert len(found) == 1, [gv.name_hint for gv in scheduled.functions]
    return found[0]


@pytest.mark.parametrize("gate", list(GATES))
def test_squeeze_excite_matches_pytorch(gate):
    ours, theirs = GATES[gate]
    net = randomize(SqueezeExcite(ours), seed=3)
    net.set_train(False)
    x = np.random.default_rng(4).standard_normal((1, CHANNELS, SIZE, SIZE)).astype(np.float32)
    with torch.no_grad():
        want = reference(net, x, theirs)
    assert_close(net(Tensor(x)), want)


def test_sigmoid_gate_once_per_channel_and_multiply_parallel():
    net = randomize(SqueezeExcite(ops.sigmoid), seed=3)
    x = np.zeros((1, CHANNELS, SIZE, SIZE), np.float32)
    name, func = _gate_kernel(net, x)
    assert rules_used(lambda v: net(v), [("x", x.shape, "float32")])[name] == "conv2d"
    loops_of = _enclosing_loops(func)
    multiply = [name for name in loops_of if name.startswith("T_multiply")]
    assert len(multiply) == 1, list(loops_of)
    block_name = multiply[0]
    sch = Schedule(func)
    body = str(sch.get(sch.get_sblock(block_name)).body)
    # the sigmoid (1 / (1 + exp(-x)): a division, a select on the exponent) is not in the map's loop
    assert "/" not in body and "Select" not in body, body
    loops = loops_of[block_name]
    assert any(loop.kind == tirx.ForKind.PARALLEL for loop in loops), loops
    assert loops[-1].kind == tirx.ForKind.VECTORIZED, loops
