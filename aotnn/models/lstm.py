"""A single-layer LSTM sequence model (the benchmark's recurrent network)."""
from __future__ import annotations

from .. import nn


class LSTMModel(nn.Cell):
    """An LSTM over a (seq, batch, input_size) sequence, returning every step's hidden state.

    Args:
        input_size: features per step. Default: 256.
        hidden_size: hidden state size. Default: 256.
        num_layers: stacked layers. Default: 1.

    Inputs:
        - **x** (Tensor) - float32 of shape (seq, batch, input_size).

    Outputs:
        Tensor of shape (seq, batch, hidden_size).
    """

    def __init__(self, input_size: int = 256, hidden_size: int = 256, num_layers: int = 1):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers=num_layers)

    def construct(self, x):
        output, _ = self.lstm(x)
        return output


def lstm_model(input_size: int = 256, hidden_size: int = 256) -> LSTMModel:
    """The benchmark's LSTM: one layer, 256 inputs, 256 hidden units."""
    return LSTMModel(input_size, hidden_size)
