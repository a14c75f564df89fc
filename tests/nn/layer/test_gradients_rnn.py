"""Compiled gradients of the recurrent layers and cells against finite differences."""
from __future__ import annotations

import pytest

import aotnn
from aotnn import nn

from .gradcheck_util import check_gradients, normal


class _LSTMCellCall(nn.Cell):
    """LSTMCell with its (h, c) state passed as two inputs."""

    def __init__(self, cell: nn.Cell):
        super().__init__()
        self.cell = cell

    def construct(self, x, h, c):
        return self.cell(x, (h, c))


class _LSTMCall(nn.Cell):
    def __init__(self, net: nn.Cell):
        super().__init__()
        self.net = net

    def construct(self, x, h, c):
        return self.net(x, (h, c))


CASES = [
    ("RNN-tanh", lambda: nn.RNN(3, 4), lambda: [normal(3, 2, 3), normal(1, 2, 4)], {}),
    # relu layers are covered by RNNCell-relu: a stack of them meets exact kinks (relu of a zero state)
    ("RNN-2layer-bidir-batchfirst", lambda: nn.RNN(3, 2, num_layers=2, batch_first=True, bidirectional=True),
     lambda: [normal(2, 3, 3), 0.5 + normal(4, 2, 2, scale=0.1)], {}),
    ("LSTM", lambda: _LSTMCall(nn.LSTM(3, 2)), lambda: [normal(3, 2, 3), normal(1, 2, 2), normal(1, 2, 2)], {}),
    ("LSTM-2layer-bidir", lambda: nn.LSTM(2, 2, num_layers=2, bidirectional=True, batch_first=True),
     lambda: [normal(1, 2, 2)], {}),
    ("GRU-bidir-nobias", lambda: nn.GRU(2, 3, has_bias=False, bidirectional=True),
     lambda: [normal(2, 2, 2), normal(2, 2, 3)], {}),
    # a smaller step: fewer finite differences straddle a relu kink in float32
    ("RNNCell-relu", lambda: nn.RNNCell(3, 4, nonlinearity="relu"), lambda: [normal(2, 3), normal(2, 4)],
     {"eps": 2e-3}),
    ("LSTMCell", lambda: _LSTMCellCall(nn.LSTMCell(3, 2)), lambda: [normal(2, 3), normal(2, 2), normal(2, 2)],
     {}),
    ("GRUCell", lambda: nn.GRUCell(3, 2), lambda: [normal(2, 3), normal(2, 2)], {}),
]


@pytest.mark.parametrize("make_net, make_inputs, options", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_recurrent_gradients_match_finite_differences(make_net, make_inputs, options):
    aotnn.set_seed(11)  # parameter initializers draw from the global seed
    check_gradients(make_net(), make_inputs(), dtype="float32", **options)  # recurrent layers take float16/32
