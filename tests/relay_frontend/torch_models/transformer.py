"""A transformer encoder block: torch.nn.TransformerEncoderLayer, batch_first."""
from __future__ import annotations

from torch import nn


class EncoderBlock(nn.Module):
    """Args: d_model, nhead, dim_feedforward, activation: the layer's settings (dropout 0.1, off in eval)."""

    def __init__(self, d_model: int = 64, nhead: int = 4, dim_feedforward: int = 128, activation: str = "gelu"):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.1, activation=activation,
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)
