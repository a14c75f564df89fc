"""Recurrent ops used by the RNN layers (``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells).

MindSpore exposes these computations only through its layers, so nothing here is re-exported
into ``aotnn.ops`` (``__all__`` is empty); the layers import the functions from this module.
"""
from __future__ import annotations

from ._dispatch import apply

__all__: list[str] = []


def rnn_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None, mode: str = "tanh"):
    """One Elman ('tanh' or 'relu') or GRU ('gru') step: ``x`` (B, I), ``h`` (B, H) -> h' (B, H)."""
    return apply("rnn_cell", x, h, w_ih, w_hh, b_ih, b_hh, mode=mode)


def lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: returns ``(h', c')``; gate rows of the weights are (i, f, g, o)."""
    return apply("lstm_cell", x, h, c, w_ih, w_hh, b_ih, b_hh)


def rnn_layer(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, seq_length=None, mode: str = "tanh",
              reverse: bool = False):
    """One direction of one recurrent layer over a time-major ``x`` (T, B, I).

    Returns:
        ``(output, h_n)``, or ``(output, h_n, c_n)`` for mode 'lstm' (``c0`` given only then).
    """
    return apply("rnn_layer", x, h0, c0, w_ih, w_hh, b_ih, b_hh, seq_length, mode=mode, reverse=bool(reverse))
