"""GRU layers: each unrolled step fused into one kernel by the default ``gru`` rule, against PyTorch,
on pinned AVX2 and AVX-512 targets."""
import numpy as np
import pytest
import torch

from aotnn import Tensor, nn
from default_schedule_helpers import assert_close, lowered_kernels, rules_used, scalarized_loops, t

pytestmark = pytest.mark.usefixtures("cpu_target")  # the hidden block depends on the ISA: pinned, both run


def torch_gru(net, input_size, hidden, layers, bidirectional, has_bias):
    twin = torch.nn.GRU(input_size, hidden, num_layers=layers, bidirectional=bidirectional, bias=has_bias)
    twin.load_state_dict({name: t(param.asnumpy()) for name, param in net.parameters_and_names()})
    return twin


@pytest.mark.parametrize("input_size,hidden,layers,bidirectional,has_bias,fused", [
    (12, 16, 1, False, True, True),
    (8, 32, 2, True, True, True),
    (10, 16, 1, False, False, True),
    (6, 12, 1, False, True, False),
], ids=["one_layer", "two_layers_bidirectional", "no_bias", "hidden_not_a_vector_multiple"])
def test_gru_matches_torch(input_size, hidden, layers, bidirectional, has_bias, fused):
    net = nn.GRU(input_size, hidden, num_layers=layers, has_bias=has_bias, bidirectional=bidirectional)
    rng = np.random.default_rng(hidden + layers)
    x = rng.standard_normal((5, 2, input_size)).astype(np.float32)
    h0 = rng.standard_normal((layers * (2 if bidirectional else 1), 2, hidden)).astype(np.float32)
    output, h_n = net(Tensor(x), Tensor(h0))
    with torch.no_grad():
        want, want_h = torch_gru(net, input_size, hidden, layers, bidirectional, has_bias)(t(x), t(h0))
    assert_close(output, want)
    assert_close(h_n, want_h)
    rules = rules_used(lambda v, h: net(v, h)[0], [("x", x.shape, "float32"), ("h0", h0.shape, "float32")])
    steps = [name for name, rule in rules.items() if rule == "gru"]
    assert bool(steps) == fused, rules
    if fused:  # every step is the one fused kernel: no element-wise gate kernels are left
        assert not any("sigmoid" in name or "tanh" in name for name in rules), rules


def test_gru_step_kernel_is_vectorized():
    """The fused step's gate product and update run as whole vectors (no loop TVM had to scalarize)."""
    net = nn.GRU(8, 32, num_layers=1)
    kernels = lowered_kernels(lambda v: net(v)[0], [("x", (2, 1, 8), "float32")])
    steps = {name: text for name, text in kernels.items() if name.startswith("aotnn_gru_step")}
    assert steps, sorted(kernels)
    for name, text in steps.items():
        assert scalarized_loops(text) == [], name
