"""ONNX LSTM, GRU and RNN nodes as Relax ops, unrolled over the static sequence length.

TVM's ONNX frontend has no converter for the recurrent family; :func:`convert_recurrent` gives one
(called by :class:`relay_frontend.onnx_converters.AotnnOnnxImporter`). Per direction the input
projection ``X @ W.T + Wb`` is computed for every step at once and only the recurrent product runs
per step, as ``relay_frontend.ops.rnn`` does for MindSpore's layers. Gate orders are ONNX's: LSTM
(i, o, f, c), GRU (z, r, h). ``sequence_lens`` masks steps at and after a sequence's length (state
kept, output zero); ``reverse`` then starts each sequence at its own last valid step.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from tvm import relax

from .capture import dtype_of, static_shape
from .errors import CaptureError

_op = relax.op
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}
# activation -> (alpha default, beta default); None where it takes no such parameter
_ACTIVATION_PARAMS: dict[str, tuple[float | None, float | None]] = {
    "relu": (None, None), "tanh": (None, None), "sigmoid": (None, None), "softsign": (None, None),
    "softplus": (None, None), "affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None),
    "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, None),
}


class RecurrentImportError(CaptureError, ValueError):
    """A recurrent node has an attribute or input form that cannot be imported (the message names it)."""


def _emit(bb: relax.BlockBuilder, expr: relax.Expr) -> relax.Var:
    return bb.emit(expr)


def _const(value: float, dtype: str) -> relax.Expr:
    return relax.const(np.array(value, dtype=dtype), dtype)


class _Activation:
    """One ONNX recurrent activation (name, alpha, beta) applied to a Relax tensor."""

    def __init__(self, name: str, alpha: float | None, beta: float | None):
        self.name, self.alpha, self.beta = name, alpha, beta

    def __call__(self, bb: relax.BlockBuilder, x: relax.Expr) -> relax.Expr:
        dtype = dtype_of(x)
        e = lambda expr: _emit(bb, expr)  # noqa: E731
        c = lambda value: _const(value, dtype)  # noqa: E731
        if self.name == "sigmoid":
            return e(_op.sigmoid(x))
        if self.name == "tanh":
            return e(_op.tanh(x))
        if self.name == "relu":
            return e(_op.nn.relu(x))
        if self.name == "softsign":
            return e(_op.divide(x, e(_op.add(c(1.0), e(_op.abs(x))))))
        if self.name == "softplus":
            return e(_op.log(e(_op.add(c(1.0), e(_op.exp(x))))))
        if self.name == "affine":
            return e(_op.add(e(_op.multiply(x, c(self.alpha))), c(self.beta)))
        if self.name == "leakyrelu":
            return e(_op.where(e(_op.greater_equal(x, c(0.0))), x, e(_op.multiply(x, c(self.alpha)))))
        if self.name == "thresholdedrelu":
            return e(_op.where(e(_op.greater(x, c(self.alpha))), x, c(0.0)))
        if self.name == "scaledtanh":
            return e(_op.multiply(c(self.alpha), e(_op.tanh(e(_op.multiply(x, c(self.beta)))))))
        if self.name == "hardsigmoid":
            return e(_op.clip(e(_op.add(e(_op.multiply(x, c(self.alpha))), c(self.beta))), 0.0, 1.0))
        # elu
        return e(_op.where(e(_op.greater(x, c(0.0))), x,
                           e(_op.multiply(c(self.alpha), e(_op.subtract(e(_op.exp(x)), c(1.0)))))))


def _activations(op_type: str, attrs: dict, directions: int) -> list[list[_Activation]]:
    """The activations per direction; alphas and betas are consumed in order by the activations that
    take them (onnxruntime's reading of the spec)."""
    per_direction = len(DEFAULT_ACTIVATIONS[op_type])
    names = [n.decode() if isinstance(n, bytes) else str(n) for n in attrs.get("activations", ())]
    if not names:
        names = list(DEFAULT_ACTIVATIONS[op_type]) * directions
    if len(names) != per_direction * directions:
        raise RecurrentImportError(f"attribute 'activations': expected {per_direction * directions} names "
                                   f"({per_direction} per direction), got {names}")
    alphas = list(attrs.get("activation_alpha", ()))
    betas = list(attrs.get("activation_beta", ()))
    result = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATION_PARAMS:
            raise RecurrentImportError(f"attribute 'activations': {name!r} is not supported; expected one of "
                                       f"{sorted(_ACTIVATION_PARAMS)}")
        alpha, beta = _ACTIVATION_PARAMS[key]
        if alpha is not None and alphas:
            alpha = float(alphas.pop(0))
        if beta is not None and betas:
            beta = float(betas.pop(0))
        result.append(_Activation(key, alpha, beta))
    return [result[d * per_direction:(d + 1) * per_direction] for d in range(directions)]


def _direction_slice(bb: relax.BlockBuilder, value: relax.Expr | None, d: int) -> relax.Expr | None:
    """``value[d]`` (the leading num_directions axis dropped)."""
    if value is None:
        return None
    sliced = _emit(bb, _op.strided_slice(value, axes=[0], begin=[d], end=[d + 1]))
    return _emit(bb, _op.squeeze(sliced, [0]))


def _chunks(bb: relax.BlockBuilder, x: relax.Expr, count: int, axis: int) -> list[relax.Expr]:
    if count == 1:
        return [x]
    parts = _emit(bb, _op.split(x, count, axis=axis))
    return [_emit(bb, relax.TupleGetItem(parts, i)) for i in range(count)]


def _matmul_t(bb: relax.BlockBuilder, x: relax.Expr, weight: relax.Expr) -> relax.Expr:
    """``x @ weight.T``."""
    return _emit(bb, _op.matmul(x, _emit(bb, _op.permute_dims(weight, [1, 0]))))


def _add(bb: relax.BlockBuilder, a: relax.Expr, b: relax.Expr | None) -> relax.Expr:
    return a if b is None else _emit(bb, _op.add(a, b))


class _Cell:
    """The step function of one direction: weights, biases and activations of that direction."""

    def __init__(self, bb, op_type, attrs, r, rb, peephole, acts, hidden):
        self.bb, self.op_type, self.r, self.rb, self.acts, self.hidden = bb, op_type, r, rb, acts, hidden
        self.clip = attrs.get("clip")
        self.input_forget = bool(attrs.get("input_forget", 0))
        self.linear_before_reset = bool(attrs.get("linear_before_reset", 0))
        self.peephole = _chunks(bb, peephole, 3, 0) if peephole is not None else None
        if op_type == "GRU":
            self.r_parts = _chunks(bb, r, 3, 0)
            self.rb_parts = _chunks(bb, rb, 3, 0) if rb is not None else [None] * 3

    def _clip(self, x: relax.Expr) -> relax.Expr:
        if self.clip is None:
            return x
        return _emit(self.bb, _op.clip(x, -float(self.clip), float(self.clip)))

    def step(self, gx: relax.Expr, h: relax.Expr, c: relax.Expr | None) -> tuple[relax.Expr, relax.Expr | None]:
        bb, e = self.bb, (lambda expr: _emit(self.bb, expr))
        if self.op_type == "RNN":
            return self.acts[0](bb, self._clip(_add(bb, e(_op.add(gx, _matmul_t(bb, h, self.r))), self.rb))), None
        if self.op_type == "GRU":
            f, g = self.acts
            gx_z, gx_r, gx_h = _chunks(bb, gx, 3, 1)
            z = f(bb, self._clip(_add(bb, e(_op.add(gx_z, _matmul_t(bb, h, self.r_parts[0]))), self.rb_parts[0])))
            r = f(bb, self._clip(_add(bb, e(_op.add(gx_r, _matmul_t(bb, h, self.r_parts[1]))), self.rb_parts[1])))
            if self.linear_before_reset:
                recurrent = e(_op.multiply(r, _add(bb, _matmul_t(bb, h, self.r_parts[2]), self.rb_parts[2])))
            else:
                recurrent = _add(bb, _matmul_t(bb, e(_op.multiply(r, h)), self.r_parts[2]), self.rb_parts[2])
            candidate = g(bb, self._clip(e(_op.add(gx_h, recurrent))))
            # (1 - z) * h~ + z * h
            return e(_op.add(candidate, e(_op.multiply(z, e(_op.subtract(h, candidate)))))), None
        f, g, act_h = self.acts
        gates = _add(bb, e(_op.add(gx, _matmul_t(bb, h, self.r))), self.rb)
        gi, go, gf, gc = _chunks(bb, gates, 4, 1)
        if self.peephole is not None:
            p_i, p_o, p_f = self.peephole
            gi = e(_op.add(gi, e(_op.multiply(p_i, c))))
            gf = e(_op.add(gf, e(_op.multiply(p_f, c))))
        i = f(bb, self._clip(gi))
        forget = (e(_op.subtract(_const(1.0, dtype_of(i)), i)) if self.input_forget else f(bb, self._clip(gf)))
        c_new = e(_op.add(e(_op.multiply(forget, c)), e(_op.multiply(i, g(bb, self._clip(gc))))))
        if self.peephole is not None:
            go = e(_op.add(go, e(_op.multiply(self.peephole[1], c_new))))
        o = f(bb, self._clip(go))
        return e(_op.multiply(o, act_h(bb, c_new))), c_new


def _run_direction(bb, cell: _Cell, projected, h0, c0, seq_lens, reverse: bool):
    """(outputs per step (B, H) in time order, last h, last c) of one direction."""
    steps, batch, rows = static_shape(projected)
    slices = _chunks(bb, projected, steps, 0)
    per_step = [_emit(bb, _op.reshape(p, [batch, rows])) for p in slices]
    zero = _const(0.0, dtype_of(h0))
    h, c = h0, c0
    outputs: list[Any] = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        h_new, c_new = cell.step(per_step[t], h, c)
        if seq_lens is None:
            h, c, outputs[t] = h_new, c_new, h_new
            continue
        valid = _emit(bb, _op.expand_dims(_emit(bb, _op.less(relax.const(t, dtype_of(seq_lens)), seq_lens)), 1))
        h = _emit(bb, _op.where(valid, h_new, h))
        if c is not None:
            c = _emit(bb, _op.where(valid, c_new, c))
        outputs[t] = _emit(bb, _op.where(valid, h_new, zero))
    return outputs, h, c


def _stack(bb: relax.BlockBuilder, values: Sequence[relax.Expr], axis: int) -> relax.Expr:
    expanded = [_emit(bb, _op.expand_dims(v, axis)) for v in values]
    return expanded[0] if len(expanded) == 1 else _emit(bb, _op.concat(expanded, axis=axis))


def _input(inputs: Sequence[Any], index: int) -> relax.Expr | None:
    return inputs[index] if index < len(inputs) and inputs[index] is not None else None


def convert_recurrent(bb: relax.BlockBuilder, op_type: str, inputs: Sequence[Any], attrs: dict) -> relax.Tuple:
    """An ONNX LSTM/GRU/RNN node as Relax ops.

    Args:
        bb: the importer's block builder.
        op_type: 'LSTM', 'GRU' or 'RNN'.
        inputs: the node's inputs (None where omitted): X, W, R, B, sequence_lens, initial_h, and for LSTM
            initial_c and P.
        attrs: the node's attributes as TVM's importer parses them.
    Returns:
        (Y, Y_h) or, for LSTM, (Y, Y_h, Y_c).
    Raises:
        RecurrentImportError: an attribute or a shape the conversion does not take (named).
    """
    gate_count = GATES[op_type]
    x, w, r, b = (_input(inputs, i) for i in range(4))
    seq_lens, h_init = _input(inputs, 4), _input(inputs, 5)
    c_init, peephole = (_input(inputs, 6), _input(inputs, 7)) if op_type == "LSTM" else (None, None)
    if x is None or w is None or r is None:
        raise RecurrentImportError("inputs 'X', 'W' and 'R' are required")
    for name, value in (("X", x), ("W", w), ("R", r), ("B", b), ("initial_h", h_init), ("initial_c", c_init),
                        ("P", peephole), ("sequence_lens", seq_lens)):
        if value is not None and (not isinstance(value.ty, relax.TensorType) or value.ty.shape is None
                                  or not all(hasattr(d, "value") or isinstance(d, int) for d in value.ty.shape.values)):
            raise RecurrentImportError(f"input {name!r} must have a static shape (aotnn unrolls the sequence), "
                                       f"got {value.ty}")
    direction = attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    if direction not in ("forward", "reverse", "bidirectional"):
        raise RecurrentImportError(f"attribute 'direction': expected 'forward', 'reverse' or 'bidirectional', "
                                   f"got {direction!r}")
    directions = 2 if direction == "bidirectional" else 1
    layout = int(attrs.get("layout", 0))
    if layout not in (0, 1):
        raise RecurrentImportError(f"attribute 'layout': expected 0 or 1, got {layout}")
    if op_type != "LSTM" and attrs.get("input_forget"):
        raise RecurrentImportError("attribute 'input_forget' is only defined for LSTM")
    dtype = dtype_of(x)
    if layout == 1:  # batch-major: (B, T, I) and (B, D, H)
        x = _emit(bb, _op.permute_dims(x, [1, 0, 2]))
        h_init = None if h_init is None else _emit(bb, _op.permute_dims(h_init, [1, 0, 2]))
        c_init = None if c_init is None else _emit(bb, _op.permute_dims(c_init, [1, 0, 2]))
    steps, batch, features = static_shape(x)
    w_shape, r_shape = static_shape(w), static_shape(r)
    hidden = int(attrs.get("hidden_size", r_shape[-1]))
    if w_shape != (directions, gate_count * hidden, features):
        raise RecurrentImportError(f"input 'W': expected shape {(directions, gate_count * hidden, features)} "
                                   f"(direction {direction!r}, hidden_size {hidden}, {features} input features), "
                                   f"got {w_shape}")
    if r_shape != (directions, gate_count * hidden, hidden):
        raise RecurrentImportError(f"input 'R': expected shape {(directions, gate_count * hidden, hidden)}, "
                                   f"got {r_shape}")
    expected = {"B": (b, (directions, 2 * gate_count * hidden)), "initial_h": (h_init, (directions, batch, hidden)),
                "initial_c": (c_init, (directions, batch, hidden)), "P": (peephole, (directions, 3 * hidden)),
                "sequence_lens": (seq_lens, (batch,))}
    for name, (value, shape) in expected.items():
        if value is not None and static_shape(value) != shape:
            raise RecurrentImportError(f"input {name!r}: expected shape {shape}, got {static_shape(value)}")
    activations = _activations(op_type, attrs, directions)
    zeros = relax.const(np.zeros((batch, hidden), dtype), dtype)
    outputs, last_h, last_c = [], [], []
    for d in range(directions):
        bias = _direction_slice(bb, b, d)
        wb, rb = _chunks(bb, bias, 2, 0) if bias is not None else (None, None)
        projected = _add(bb, _emit(bb, _op.matmul(x, _emit(bb, _op.permute_dims(_direction_slice(bb, w, d),
                                                                                 [1, 0])))), wb)
        cell = _Cell(bb, op_type, attrs, _direction_slice(bb, r, d), rb, _direction_slice(bb, peephole, d),
                     activations[d], hidden)
        h0 = _direction_slice(bb, h_init, d) if h_init is not None else zeros
        c0 = (_direction_slice(bb, c_init, d) if c_init is not None else zeros) if op_type == "LSTM" else None
        reverse = direction == "reverse" or d == 1
        step_outputs, h, c = _run_direction(bb, cell, projected, h0, c0, seq_lens, reverse)
        outputs.append(_stack(bb, step_outputs, 0))  # (T, B, H)
        last_h.append(h)
        last_c.append(c)
    y = _stack(bb, outputs, 1)          # (T, D, B, H)
    y_h = _stack(bb, last_h, 0)         # (D, B, H)
    y_c = _stack(bb, last_c, 0) if op_type == "LSTM" else None
    if layout == 1:
        y = _emit(bb, _op.permute_dims(y, [2, 0, 1, 3]))
        y_h = _emit(bb, _op.permute_dims(y_h, [1, 0, 2]))
        y_c = None if y_c is None else _emit(bb, _op.permute_dims(y_c, [1, 0, 2]))
    return relax.Tuple([y, y_h] if y_c is None else [y, y_h, y_c])
