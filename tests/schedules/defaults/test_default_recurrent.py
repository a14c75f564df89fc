"""LSTM layers: each unrolled step fused into one kernel by the default schedules, against PyTorch."""
import numpy as np
import pytest
import torch

from aotnn import Tensor, nn
from default_schedule_helpers import assert_close, rules_used, t


def torch_lstm(net, input_size, hidden, layers):
    twin = torch.nn.LSTM(input_size, hidden, num_layers=layers)
    state = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    twin.load_state_dict(state)
    return twin


@pytest.mark.parametrize("input_size,hidden,layers,fused", [(12, 16, 1, True), (8, 32, 2, True), (6, 12, 1, False)],
                         ids=["one_layer", "two_layers", "hidden_not_a_vector_multiple"])
def test_lstm_matches_torch(input_size, hidden, layers, fused):
    net = nn.LSTM(input_size, hidden, num_layers=layers)
    x = np.random.default_rng(hidden).standard_normal((5, 2, input_size)).astype(np.float32)
    output, (h_n, c_n) = net(Tensor(x))
    with torch.no_grad():
        want, (want_h, want_c) = torch_lstm(net, input_size, hidden, layers)(t(x))
    assert_close(output, want)
    assert_close(h_n, want_h)
    assert_close(c_n, want_c)
    rules = rules_used(lambda v: net(v)[0], [("x", x.shape, "float32")])
    steps = [name for name, rule in rules.items() if rule == "recurrent"]
    assert bool(steps) == fused, rules
