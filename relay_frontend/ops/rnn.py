"""Lowering rules for recurrent cells and whole recurrent layers (one direction, one layer).

Gate layouts follow MindSpore (the same as PyTorch): LSTM rows are (i, f, g, o), GRU rows
(r, z, n). Weights are cast to the input's dtype first, as MindSpore's dynamic RNN does. A layer
is unrolled over its static time axis; the input projection ``x @ w_ih.T + b_ih`` is computed for
every step at once and only the recurrent product runs per step. Only ops that Relax can
differentiate are used (split rather than strided slices, where rather than gathers), so
compiled training steps can take gradients through these layers.
"""
from __future__ import annotations

from tvm import relax

from ..capture import dtype_of, static_shape
from ..errors import CaptureError
from .common import cast, emit
from .registry import rule

_op = relax.op
_MODES = ("tanh", "relu", "gru", "lstm")


def _linear(x: relax.Expr, weight: relax.Expr, bias: relax.Expr | None) -> relax.Expr:
    out = emit(_op.matmul(x, emit(_op.permute_dims(weight, [1, 0]))))
    return out if bias is None else emit(_op.add(out, bias))


def _chunks(x: relax.Expr, count: int, axis: int) -> list[relax.Expr]:
    parts = emit(_op.split(x, count, axis=axis))
    return [emit(relax.TupleGetItem(parts, i)) for i in range(count)]


def _step(mode: str, gi: relax.Expr, h: relax.Expr, c: relax.Expr | None, w_hh: relax.Expr,
          b_hh: relax.Expr | None) -> tuple[relax.Expr, relax.Expr | None]:
    """One time step from the input projection ``gi``; returns the new (h, c)."""
    gh = _linear(h, w_hh, b_hh)
    if mode == "tanh":
        return emit(_op.tanh(emit(_op.add(gi, gh)))), None
    if mode == "relu":
        return emit(_op.nn.relu(emit(_op.add(gi, gh)))), None
    if mode == "gru":
        i_r, i_z, i_n = _chunks(gi, 3, 1)
        h_r, h_z, h_n = _chunks(gh, 3, 1)
        reset = emit(_op.sigmoid(emit(_op.add(i_r, h_r))))
        update = emit(_op.sigmoid(emit(_op.add(i_z, h_z))))
        new = emit(_op.tanh(emit(_op.add(i_n, emit(_op.multiply(reset, h_n))))))
        return emit(_op.add(new, emit(_op.multiply(update, emit(_op.subtract(h, new)))))), None
    gates = emit(_op.add(gi, gh))
    i, f, g, o = _chunks(gates, 4, 1)
    c_new = emit(_op.add(emit(_op.multiply(emit(_op.sigmoid(f)), c)),
                         emit(_op.multiply(emit(_op.sigmoid(i)), emit(_op.tanh(g))))))
    return emit(_op.multiply(emit(_op.sigmoid(o)), emit(_op.tanh(c_new)))), c_new


def _check(mode: str, x: relax.Expr, h: relax.Expr, w_ih: relax.Expr, w_hh: relax.Expr) -> tuple[int, int]:
    """(hidden size, gate rows); raises CaptureError on inconsistent shapes or dtypes."""
    if mode not in _MODES:
        raise CaptureError(f"rnn: mode must be one of {_MODES}, got {mode!r}")
    chunks = {"tanh": 1, "relu": 1, "gru": 3, "lstm": 4}[mode]
    hidden = static_shape(h)[-1]
    rows, in_features = static_shape(w_ih)
    if rows != chunks * hidden or static_shape(w_hh) != (rows, hidden):
        raise CaptureError(f"rnn: weights {static_shape(w_ih)} and {static_shape(w_hh)} do not fit "
                           f"mode {mode!r} with hidden size {hidden}")
    if static_shape(x)[-1] != in_features:
        raise CaptureError(f"rnn: input has {static_shape(x)[-1]} features, weight_ih expects {in_features}")
    if dtype_of(h) != dtype_of(x):
        raise CaptureError(f"rnn: hidden state dtype {dtype_of(h)} differs from input dtype {dtype_of(x)}")
    return hidden, rows


def _weights(x, w_ih, w_hh, b_ih, b_hh):
    dtype = dtype_of(x)
    return tuple(None if w is None else cast(w, dtype) for w in (w_ih, w_hh, b_ih, b_hh))


@rule("rnn_cell")
def rnn_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None, mode: str = "tanh"):
    """One step of an Elman ('tanh'/'relu') or GRU ('gru') cell: x (B, I), h (B, H) -> h' (B, H)."""
    if mode == "lstm":
        raise CaptureError("rnn_cell: use lstm_cell for LSTM")
    _check(mode, x, h, w_ih, w_hh)
    w_ih, w_hh, b_ih, b_hh = _weights(x, w_ih, w_hh, b_ih, b_hh)
    return _step(mode, _linear(x, w_ih, b_ih), h, None, w_hh, b_hh)[0]


@rule("lstm_cell")
def lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: x (B, I), h and c (B, H) -> (h', c')."""
    _check("lstm", x, h, w_ih, w_hh)
    w_ih, w_hh, b_ih, b_hh = _weights(x, w_ih, w_hh, b_ih, b_hh)
    h_new, c_new = _step("lstm", _linear(x, w_ih, b_ih), h, c, w_hh, b_hh)
    return relax.Tuple([h_new, c_new])


@rule("rnn_layer")
def rnn_layer(x, h0, c0, w_ih, w_hh, b_ih=None, b_hh=None, seq_length=None, mode: str = "tanh",
              reverse: bool = False):
    """One direction of one recurrent layer over a time-major sequence.

    Args:
        x: (T, B, I). h0, c0: (B, H); c0 only for 'lstm' (else None).
        seq_length: None or (B,) int lengths: steps at and after a sequence's length leave the state
            unchanged and output zeros (MindSpore's masking of padded steps).
        mode: 'tanh', 'relu', 'gru' or 'lstm'.
        reverse: run from the last step to the first. With ``seq_length`` this equals MindSpore's
            ReverseSequence -> forward pass -> ReverseSequence: each sequence starts at its own last
            valid step.
    Returns:
        (output (T, B, H), h_n) or, for 'lstm', (output, h_n, c_n).
    """
    hidden, _ = _check(mode, x, h0, w_ih, w_hh)
    steps, batch = static_shape(x)[:2]
    if (mode == "lstm") != (c0 is not None):
        raise CaptureError("rnn_layer: c0 is required for 'lstm' and only for it")
    w_ih, w_hh, b_ih, b_hh = _weights(x, w_ih, w_hh, b_ih, b_hh)
    projected = _linear(x, w_ih, b_ih)
    gate_rows = static_shape(projected)[-1]
    slices = _chunks(projected, steps, 0) if steps > 1 else [projected]
    per_step = [emit(_op.reshape(p, [batch, gate_rows])) for p in slices]
    zero = relax.const(0, dtype_of(x))
    h, c = h0, c0
    outputs: list[relax.Expr] = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        h_new, c_new = _step(mode, per_step[t], h, c, w_hh, b_hh)
        if seq_length is None:
            h, c, outputs[t] = h_new, c_new, h_new
            continue
        valid = emit(_op.expand_dims(emit(_op.less(relax.const(t, dtype_of(seq_length)), seq_length)), 1))
        h = emit(_op.where(valid, h_new, h))
        if c is not None:
            c = emit(_op.where(valid, c_new, c))
        outputs[t] = emit(_op.where(valid, h_new, zero))
    output = emit(_op.concat([emit(_op.expand_dims(o, 0)) for o in outputs], axis=0))
    if static_shape(output) != (steps, batch, hidden):
        raise CaptureError(f"rnn_layer: unexpected output shape {static_shape(output)}")
    return relax.Tuple([output, h] if c is None else [output, h, c])
