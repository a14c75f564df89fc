"""Recurrent layers: RNN, LSTM, GRU (stacked, optionally bidirectional) and their single-step cells."""
from __future__ import annotations

__all__ = ['RNN', 'LSTM', 'GRU', 'RNNCell', 'LSTMCell', 'GRUCell']

import math
import numbers

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import Uniform, initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops import rnn_ops
from ..cell import Cell
from ._checks import check_bool, strict_positive_int
from .dropout import Dropout

_FLOATS = (mstype.float16, mstype.float32)
_GATES = {"tanh": 1, "relu": 1, "gru": 3, "lstm": 4}


def _check_float_tensor(value, name: str, cls: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{cls}', the '{name}' must be Tensor, but got {type(value).__name__}.")
    if value.dtype not in _FLOATS:
        raise TypeError(f"For '{cls}', the dtype of '{name}' must be float16 or float32, but got {value.dtype}.")
    return value


def _check_state(value, name: str, shape: tuple, dtype, cls: str) -> None:
    _check_float_tensor(value, name, cls)
    if value.dtype != dtype:
        raise TypeError(f"For '{cls}', the dtype of '{name}' must be the same as 'x' ({dtype}), "
                        f"but got {value.dtype}.")
    if tuple(value.shape) != tuple(shape):
        raise ValueError(f"For '{cls}', the shape of '{name}' must be {tuple(shape)}, but got {value.shape}.")


class _RNNBase(Cell):
    """Stacked recurrent layers sharing MindSpore's parameter layout and call convention."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, has_bias: bool = True,
                 batch_first: bool = False, dropout=0., bidirectional: bool = False, dtype=mstype.float32):
        super().__init__()
        cls = type(self).__name__
        strict_positive_int(hidden_size, "hidden_size", cls)
        strict_positive_int(input_size, "input_size", cls)
        strict_positive_int(num_layers, "num_layers", cls)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise TypeError(f"For '{cls}', the 'dropout' must be float or int, but got {type(dropout).__name__}.")
        check_bool(has_bias, "has_bias", cls)
        check_bool(batch_first, "batch_first", cls)
        check_bool(bidirectional, "bidirectional", cls)
        if not 0 <= dropout < 1:
            raise ValueError(f"For '{cls}', the 'dropout' must be a number in range [0, 1) representing the "
                             f"probability of an element being zeroed, but got {dropout}.")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.has_bias, self.batch_first, self.bidirectional = has_bias, batch_first, bidirectional
        self.dropout = float(dropout)
        self.dropout_op = Dropout(p=self.dropout)
        self.is_lstm = mode == "lstm"
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        stdv = 1 / math.sqrt(hidden_size)
        # numpy's global generator in this order, as MindSpore draws them (set_seed seeds it)
        tables: dict[str, list[tuple[str, np.ndarray]]] = {"weight_ih": [], "weight_hh": [], "bias_ih": [],
                                                           "bias_hh": []}
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * num_directions
            for direction in range(num_directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = {"weight_ih": (gate_size, layer_input), "weight_hh": (gate_size, hidden_size)}
                if has_bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                for kind, shape in shapes.items():
                    tables[kind].append((kind + suffix, np.random.uniform(-stdv, stdv, shape).astype(np.float32)))
        np_dtype = mstype.to_numpy(dtype)
        self._names: dict[str, list[str]] = {}
        for kind, entries in tables.items():  # every weight_ih first, then weight_hh, bias_ih, bias_hh
            self._names[kind] = [name for name, _ in entries]
            for name, value in entries:
                setattr(self, name, Parameter(Tensor(value.astype(np_dtype)), name=name))

    def _layer_params(self, index: int) -> tuple:
        def get(kind):
            return getattr(self, self._names[kind][index]) if self._names[kind] else None
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _check_inputs(self, x, hx, seq_length) -> None:
        cls = type(self).__name__
        _check_float_tensor(x, "x", cls)
        if x.ndim != 3 or x.shape[-1] != self.input_size:
            raise ValueError(f"For '{cls}', 'x' must be 3-D with {self.input_size} features in its last "
                             f"dimension, but got shape {x.shape}.")
        batch = x.shape[0] if self.batch_first else x.shape[1]
        state_shape = (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)
        if hx is not None:
            if self.is_lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise TypeError(f"For '{cls}', the 'hx' must be a tuple of two Tensors (h_0, c_0), "
                                    f"but got {type(hx).__name__}.")
                _check_state(hx[0], "hx[0]", state_shape, x.dtype, cls)
                _check_state(hx[1], "hx[1]", state_shape, x.dtype, cls)
            else:
                _check_state(hx, "hx", state_shape, x.dtype, cls)
        if seq_length is not None:
            if not isinstance(seq_length, Tensor) or seq_length.dtype not in (mstype.int32, mstype.int64):
                got = seq_length.dtype if isinstance(seq_length, Tensor) else type(seq_length).__name__
                raise TypeError(f"For '{cls}', the 'seq_length' must be an int32 or int64 Tensor, but got {got}.")
            if tuple(seq_length.shape) != (batch,):
                raise ValueError(f"For '{cls}' batch size of x and seq_length must be equal, but got {batch} "
                                 f"of x and shape {seq_length.shape} of seq_length.")

    def construct(self, x, hx=None, seq_length=None):
        self._check_inputs(x, hx, seq_length)
        directions = 2 if self.bidirectional else 1
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        batch = x.shape[1]
        if hx is None:
            zeros = ops.zeros((self.num_layers * directions, batch, self.hidden_size), x.dtype)
            hx = (zeros, zeros) if self.is_lstm else zeros
        h_all, c_all = (hx[0], hx[1]) if self.is_lstm else (hx, None)
        h_n, c_n = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                index = layer * directions + direction
                c0 = c_all[index] if self.is_lstm else None
                result = rnn_ops.rnn_layer(layer_input, h_all[index], c0, *self._layer_params(index),
                                           seq_length, mode=self.mode, reverse=direction == 1)
                outputs.append(result[0])
                h_n.append(result[1])
                if self.is_lstm:
                    c_n.append(result[2])
            output = outputs[0] if directions == 1 else ops.concat(outputs, axis=2)
            if self.dropout != 0 and layer < self.num_layers - 1:
                output = self.dropout_op(output)
            layer_input = output
        if self.batch_first:
            output = ops.transpose(output, (1, 0, 2))
        if self.is_lstm:
            return output, (ops.stack(h_n, axis=0), ops.stack(c_n, axis=0))
        return output, ops.stack(h_n, axis=0)

    def extend_repr(self) -> str:
        return (f"input_size={self.input_size}, hidden_size={self.hidden_size}, num_layers={self.num_layers}, "
                f"has_bias={self.has_bias}, batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")


class RNN(_RNNBase):
    r"""Stacked Elman RNN layers: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{(t-1)} + b_{hh})`.

    Parameters are named ``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (with
    ``_reverse`` for the backward direction), listed every ``weight_ih`` first, then ``weight_hh``, ``bias_ih``,
    ``bias_hh``; each starts as U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        num_layers (int): stacked layers. Default: 1.
        nonlinearity (str): 'tanh' or 'relu'. Default: 'tanh'.
        has_bias (bool): whether the layers have ``b_ih`` and ``b_hh``. Default: True.
        batch_first (bool): whether ``x`` is (batch, seq, feature). Default: False.
        dropout (float): drop rate applied (in training only) to the outputs of every layer but the last,
            in [0, 1). Default: 0.0.
        bidirectional (bool): run a second, backward direction. Default: False.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Inputs:
        - **x** (Tensor) - float16 or float32, (seq_len, batch, input_size) or batch first.
        - **hx** (Tensor) - (num_directions * num_layers, batch, hidden_size), dtype of ``x``. Default: zeros.
        - **seq_length** (Tensor) - int32/int64 (batch,): valid steps per sequence. Later steps leave the
          state unchanged and output zeros. Default: None (all steps valid).

    Outputs:
        Tuple (output, hx_n): output (seq_len, batch, num_directions * hidden_size) (or batch first),
        hx_n (num_directions * num_layers, batch, hidden_size).

    Raises:
        TypeError: If `input_size`, `hidden_size` or `num_layers` is not an int.
        TypeError: If `has_bias`, `batch_first` or `bidirectional` is not a bool.
        TypeError: If `dropout` is neither a float nor an int.
        ValueError: If `dropout` is not in range [0.0, 1.0).
        ValueError: If `nonlinearity` is not in ['tanh', 'relu'].
    """

    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        # MindSpore passes positional arguments after num_layers on to has_bias, ...; its documented
        # signature puts nonlinearity there: accept a string in that place as nonlinearity.
        if len(args) > 3 and isinstance(args[3], str):
            nonlinearity, args = args[3], args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNN', the 'nonlinearity' must be in ['tanh', 'relu'], but got {nonlinearity}.")
        super().__init__(nonlinearity, *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(_RNNBase):
    r"""Stacked LSTM layers (gates i, f, g, o as MindSpore and PyTorch order them).

    .. math::
        i_t = \sigma(W_{ix} x_t + b_{ix} + W_{ih} h_{(t-1)} + b_{ih}), \quad
        f_t = \sigma(\dots), \quad \tilde{c}_t = \tanh(\dots), \quad o_t = \sigma(\dots), \\
        c_t = f_t * c_{(t-1)} + i_t * \tilde{c}_t, \quad h_t = o_t * \tanh(c_t)

    Args, inputs and parameter names as :class:`RNN` (without ``nonlinearity``), except that ``hx`` is a tuple
    ``(h_0, c_0)``.

    Outputs:
        Tuple (output, (h_n, c_n)).

    Raises:
        TypeError: If `input_size`, `hidden_size` or `num_layers` is not an int.
        TypeError: If `has_bias`, `batch_first` or `bidirectional` is not a bool.
        TypeError: If `dropout` is neither a float nor an int.
        ValueError: If `dropout` is not in range [0.0, 1.0).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("lstm", *args, **kwargs)


class GRU(_RNNBase):
    r"""Stacked GRU layers (gates r, z, n).

    .. math::
        r_t = \sigma(W_{ir} x_t + b_{ir} + W_{hr} h_{(t-1)} + b_{hr}), \quad
        z_t = \sigma(W_{iz} x_t + b_{iz} + W_{hz} h_{(t-1)} + b_{hz}), \\
        n_t = \tanh(W_{in} x_t + b_{in} + r_t * (W_{hn} h_{(t-1)} + b_{hn})), \quad
        h_t = (1 - z_t) * n_t + z_t * h_{(t-1)}

    Args, inputs, outputs and parameter names as :class:`RNN` (without ``nonlinearity``).

    Raises:
        TypeError: If `input_size`, `hidden_size` or `num_layers` is not an int.
        TypeError: If `has_bias`, `batch_first` or `bidirectional` is not a bool.
        TypeError: If `dropout` is neither a float nor an int.
        ValueError: If `dropout` is not in range [0.0, 1.0).
    """

    def __init__(self, *args, **kwargs):
        super().__init__("gru", *args, **kwargs)


class _RNNCellBase(Cell):
    """One step of a recurrent cell; parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool, chunks: int):
        super().__init__()
        cls = type(self).__name__
        check_bool(has_bias, "has_bias", cls)
        strict_positive_int(hidden_size, "hidden_size", cls)
        strict_positive_int(input_size, "input_size", cls)
        self.input_size, self.hidden_size, self.has_bias = input_size, hidden_size, has_bias
        init = Uniform(1 / math.sqrt(hidden_size))
        self.weight_ih = Parameter(initializer(init, [chunks * hidden_size, input_size]), name="weight_ih")
        self.weight_hh = Parameter(initializer(init, [chunks * hidden_size, hidden_size]), name="weight_hh")
        if has_bias:
            self.bias_ih = Parameter(initializer(init, [chunks * hidden_size]), name="bias_ih")
            self.bias_hh = Parameter(initializer(init, [chunks * hidden_size]), name="bias_hh")
        else:
            self.bias_ih = self.bias_hh = None

    def _check_step(self, x, states: dict) -> None:
        cls = type(self).__name__
        _check_float_tensor(x, "x", cls)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"For '{cls}', 'x' must be (batch_size, {self.input_size}), but got {x.shape}.")
        for name, value in states.items():
            _check_float_tensor(value, name, cls)
            if value.ndim != 2 or value.shape[0] != x.shape[0]:
                raise ValueError(f"For '{cls}' batch size of x and {name} should be equal, but got {x.shape[0]} "
                                 f"of x and shape {value.shape} of {name}.")
            if value.shape[1] != self.hidden_size:
                raise ValueError(f"For '{cls}', '{name}' must have {self.hidden_size} features, got {value.shape}.")

    def extend_repr(self) -> str:
        return f"input_size={self.input_size}, hidden_size={self.hidden_size}, has_bias={self.has_bias}"


class RNNCell(_RNNCellBase):
    r"""An Elman RNN cell: :math:`h' = act(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})`, act tanh or ReLU.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        has_bias (bool): whether the cell has ``b_ih`` and ``b_hh``. Default: True.
        nonlinearity (str): 'tanh' or 'relu'. Default: 'tanh'.

    Inputs:
        - **x** (Tensor) - (batch_size, input_size), float16 or float32.
        - **hx** (Tensor) - (batch_size, hidden_size), dtype of ``x``.

    Outputs:
        Tensor (batch_size, hidden_size).

    Raises:
        TypeError: If `input_size` or `hidden_size` is not an int.
        ValueError: If `input_size` or `hidden_size` is not greater than 0.
        TypeError: If `has_bias` is not a bool.
        ValueError: If `nonlinearity` is not in ['tanh', 'relu'].
    """

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, nonlinearity: str = "tanh"):
        super().__init__(input_size, hidden_size, has_bias, chunks=1)
        if not isinstance(nonlinearity, str):
            raise TypeError(f"For 'RNNCell', the 'nonlinearity' must be str, but got {type(nonlinearity).__name__}.")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"For 'RNNCell', the 'nonlinearity' must be in ['tanh', 'relu'], "
                             f"but got {nonlinearity}.")
        self.nonlinearity = nonlinearity

    def construct(self, x, hx):
        self._check_step(x, {"hx": hx})
        return rnn_ops.rnn_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh,
                                mode=self.nonlinearity)


class GRUCell(_RNNCellBase):
    r"""A GRU cell (gates r, z, n): :math:`h' = (1 - z) * n + z * h`.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        has_bias (bool): whether the cell has ``b_ih`` and ``b_hh``. Default: True.

    Inputs:
        - **x** (Tensor) - (batch_size, input_size), float16 or float32.
        - **hx** (Tensor) - (batch_size, hidden_size), dtype of ``x``.

    Outputs:
        Tensor (batch_size, hidden_size).

    Raises:
        TypeError: If `input_size` or `hidden_size` is not an int, or `has_bias` not a bool.
    """

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True):
        super().__init__(input_size, hidden_size, has_bias, chunks=3)

    def construct(self, x, hx):
        self._check_step(x, {"hx": hx})
        return rnn_ops.rnn_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, mode="gru")


_OLD_LSTMCELL = ("The arguments of `nn.LSTMCell` from old MindSpore version(<1.6) are detected, if you still "
                 "need use single LSTM layer, please use `nn.LSTM` instead.")


class LSTMCell(_RNNCellBase):
    r"""An LSTM cell (gates i, f, g, o): returns :math:`(h', c')` for one step.

    The old single-layer form (``batch_first``, ``dropout``, ``bidirectional`` arguments and a call with
    a flat weight ``w``) was removed in MindSpore 1.6; as MindSpore does, it raises ValueError pointing to
    :class:`LSTM`.

    Args:
        input_size (int): features of the input.
        hidden_size (int): features of the hidden state.
        has_bias (bool): whether the cell has ``b_ih`` and ``b_hh``. Default: True.

    Inputs:
        - **x** (Tensor) - (batch_size, input_size), float16 or float32.
        - **hx** (tuple) - (h, c), each (batch_size, hidden_size), dtype of ``x``.

    Outputs:
        Tuple (h', c'), each (batch_size, hidden_size).

    Raises:
        TypeError: If `input_size` or `hidden_size` is not an int, or `has_bias` not a bool.
        ValueError: If the arguments of the old (< 1.6) LSTMCell are given.
    """

    def __init__(self, input_size: int, hidden_size: int, has_bias: bool = True, *old_args, **old_kwargs):
        if old_args or old_kwargs.keys() & {"batch_first", "batch_size", "dropout", "bidirectional"}:
            raise ValueError(_OLD_LSTMCELL)
        if old_kwargs:
            raise TypeError(f"LSTMCell got unexpected keyword arguments {sorted(old_kwargs)}")
        super().__init__(input_size, hidden_size, has_bias, chunks=4)

    def construct(self, x, hx, *old_inputs):
        if old_inputs:
            raise ValueError(f"For 'LSTMCell', the number of input args of construct is {2 + len(old_inputs)}, "
                             "if you are using the implementation of `nn.LSTMCell` from old MindSpore "
                             "version(<1.6), please notice that: LSTMCell has been changed from 'single LSTM "
                             "layer' to 'single LSTM cell', if you still need use single LSTM layer, please "
                             "use `nn.LSTM` instead.")
        if not isinstance(hx, (tuple, list)) or len(hx) != 2:
            raise TypeError(f"For 'LSTMCell', the 'hx' must be a tuple of two Tensors (h, c), "
                            f"but got {type(hx).__name__}.")
        self._check_step(x, {"hx[0]": hx[0], "hx[1]": hx[1]})
        return rnn_ops.lstm_cell(x, hx[0], hx[1], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
