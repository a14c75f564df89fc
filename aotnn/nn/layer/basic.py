"""Dense, Linear, Flatten and Identity."""
from __future__ import annotations

__all__ = ['Dense', 'Linear', 'Flatten', 'Identity']

import math

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ..cell import Cell
from ._checks import check_bool, strict_positive_int
from ._default_init import default_bias_init, default_weight_init


class Flatten(Cell):
    """Flattens the axes ``start_dim`` to ``end_dim`` into one: by default (N, ...) -> (N, prod(...)).

    Args:
        start_dim (int): the first axis flattened. Default: 1.
        end_dim (int): the last axis flattened. Default: -1.

    Raises:
        TypeError: ``start_dim`` or ``end_dim`` not an int.
        ValueError: at call time, an axis outside [-rank, rank) or ``start_dim`` after ``end_dim``.
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        for name, value in (("start_dim", start_dim), ("end_dim", end_dim)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"For 'Flatten', the '{name}' must be an int, but got {type(value).__name__}.")
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, x):
        rank = max(x.ndim, 1)
        axes = []
        for name, axis in (("start_dim", self.start_dim), ("end_dim", self.end_dim)):
            if not -rank <= axis < rank:
                raise ValueError(f"For 'Flatten', '{name}' {axis} is out of range [{-rank}, {rank}) for an input "
                                 f"of shape {x.shape}.")
            axes.append(axis % rank)
        if axes[0] > axes[1]:
            raise ValueError(f"For 'Flatten', 'start_dim' ({self.start_dim}) must not come after 'end_dim' "
                             f"({self.end_dim}) for an input of shape {x.shape}.")
        return ops.flatten(x, start_dim=axes[0], end_dim=axes[1])


class Identity(Cell):
    """Returns its input unchanged; construction arguments are accepted and ignored (as in MindSpore)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def construct(self, x):
        return x


class Dense(Cell):
    """Fully connected layer: ``activation(x @ weight.T + bias)``.

    Args:
        in_channels: input features.
        out_channels: output features.
        weight_init: initializer of the (out_channels, in_channels) weight. Default: None, MindSpore 2.x's
            HeUniform(negative_slope=sqrt(5)), i.e. U(-1/sqrt(in_channels), 1/sqrt(in_channels)).
        bias_init: initializer of the bias. Default: None, Uniform(1 / sqrt(in_channels)) (MindSpore 2.x).
        has_bias: whether to add a bias. Default: True.
        activation: None, an activation name ('relu', 'softmax'...), a Cell or a Primitive (``ops.ReLU()``).
        dtype: parameter dtype. Default: float32.
    Raises:
        TypeError: If `in_channels` or `out_channels` is not an int, `has_bias` not a bool, or `activation`
            not a str, Cell, Primitive or None.
        ValueError: non-positive channel counts, or a weight/bias Tensor of the wrong shape.
    """

    def __init__(self, in_channels: int, out_channels: int, weight_init=None, bias_init=None,
                 has_bias: bool = True, activation=None, dtype=mstype.float32):
        super().__init__()
        self.in_channels = strict_positive_int(in_channels, "in_channels", "Dense")
        self.out_channels = strict_positive_int(out_channels, "out_channels", "Dense")
        self.has_bias = check_bool(has_bias, "has_bias", "Dense")
        self.weight = Parameter(initializer(default_weight_init(weight_init), [out_channels, in_channels], dtype),
                                name="weight")
        self.bias = Parameter(initializer(default_bias_init(bias_init, self.in_channels), [out_channels], dtype),
                              name="bias") if has_bias else None
        self.activation = _activation(activation)
        self.activation_flag = self.activation is not None

    def construct(self, x):
        if x.ndim < 1 or x.shape[-1] != self.in_channels:
            raise ValueError(f"Dense: input's last dimension must be in_channels={self.in_channels}, "
                             f"got shape {x.shape}")
        lead = x.shape[:-1]
        if x.ndim != 2:
            x = ops.reshape(x, (-1, self.in_channels))
        out = ops.dense(x, self.weight, self.bias if self.has_bias else None)
        if self.activation_flag:
            out = self.activation(out)
        if len(lead) != 1:
            out = ops.reshape(out, lead + (self.out_channels,))
        return out

    def extend_repr(self) -> str:
        text = f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"
        if self.activation_flag:
            text += f", activation={self.activation}"
        return text


class Linear(Dense):
    """MindSpore 2.x's fully connected layer: ``x @ weight.T + bias``.

    Args:
        in_features (int): input features.
        out_features (int): output features.
        bias (bool): whether to add a bias. Default: True.
        weight_init: initializer of the (out_features, in_features) weight. Default: None, HeUniform(sqrt(5)).
        bias_init: initializer of the bias. Default: None, U(-1/sqrt(in_features), 1/sqrt(in_features)).
        dtype: parameter dtype. Default: None (float32).

    Raises:
        TypeError: ``in_features``/``out_features`` not ints, ``bias`` not a bool.
        ValueError: non-positive feature counts.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, weight_init=None, bias_init=None,
                 dtype=None):
        from ...common.initializer import HeUniform, Uniform

        fan_in = strict_positive_int(in_features, "in_features", "Linear")
        weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
        bias_init = Uniform(1 / math.sqrt(fan_in)) if bias_init is None else bias_init
        super().__init__(in_features, out_features, weight_init, bias_init, check_bool(bias, "bias", "Linear"),
                         dtype=mstype.float32 if dtype is None else dtype)
        self.in_features, self.out_features = self.in_channels, self.out_channels


def _activation(activation):
    from ...ops.primitives import Primitive
    if activation is None or isinstance(activation, (Cell, Primitive)):
        return activation
    if isinstance(activation, str):
        from .activation import get_activation
        return get_activation(activation)
    raise TypeError(f"For 'Dense', the 'activation' must be str or Cell or Primitive, but got "
                    f"{type(activation).__name__}.")
