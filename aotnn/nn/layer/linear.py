"""DenseBnAct: a Dense layer followed by an optional BatchNorm1d and an optional activation."""
from __future__ import annotations

__all__ = ['DenseBnAct']

from ...ops.primitives import Primitive
from ..cell import Cell
from ._checks import check_bool
from .activation import LeakyReLU, get_activation
from .basic import Dense
from .normalization import BatchNorm1d


class DenseBnAct(Cell):
    r"""A combination of Dense, BatchNorm1d and an activation layer.

    Sub-cells are ``dense``, ``batchnorm`` (when ``has_bn``) and ``activation``, so the parameters are named
    ``dense.weight``, ``dense.bias``, ``batchnorm.gamma``... as in MindSpore.

    Args:
        in_channels (int): the number of channels in the input space.
        out_channels (int): the number of channels in the output space.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): the Dense weight's initializer.
            Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): the Dense bias's initializer. Default: 'zeros'.
        has_bias (bool): whether Dense has a bias. Default: True.
        has_bn (bool): whether to add a BatchNorm1d. Default: False.
        momentum (float): the batch norm's moving-average momentum, in [0, 1]. Default: 0.9.
        eps (float): the batch norm's epsilon. Default: 1e-5.
        activation (Union[str, Cell, Primitive]): the activation ('relu', 'softmax', 'leakyrelu'...). Default: None.
        alpha (float): the slope of 'leakyrelu' for x < 0. Default: 0.2.
        after_fake (bool): whether a fake-quantization op follows (quantization-aware training flag; kept only).
            Default: True.

    Inputs:
        - **x** (Tensor) - (N, in_channels).

    Outputs:
        Tensor of shape (N, out_channels).

    Raises:
        TypeError: If `in_channels` or `out_channels` is not an int.
        TypeError: If `has_bias`, `has_bn` or `after_fake` is not a bool.
        TypeError: If `activation` is not a str, Cell, Primitive or None.
        ValueError: If `momentum` is not in range [0, 1.0] (with `has_bn`).
    """

    def __init__(self, in_channels, out_channels, weight_init='normal', bias_init='zeros', has_bias=True,
                 has_bn=False, momentum=0.9, eps=1e-5, activation=None, alpha=0.2, after_fake=True):
        super().__init__()
        self.dense = Dense(in_channels, out_channels, weight_init, bias_init, has_bias)
        self.has_bn = check_bool(has_bn, "has_bn", "DenseBnAct")
        self.has_act = activation is not None
        self.after_fake = check_bool(after_fake, "after_fake", "DenseBnAct")
        if has_bn:
            self.batchnorm = BatchNorm1d(out_channels, eps, momentum)
        if isinstance(activation, str) and activation.lower() == "leakyrelu":
            self.activation = LeakyReLU(alpha)
        else:
            self.activation = get_activation(activation, "DenseBnAct") if isinstance(activation, str) else activation
            if activation is not None and not isinstance(self.activation, (Cell, Primitive)):
                raise TypeError(f"For 'DenseBnAct', the 'activation' must be str or Cell or Primitive, "
                                f"but got {type(activation).__name__}.")

    def construct(self, x):
        x = self.dense(x)
        if self.has_bn:
            x = self.batchnorm(x)
        if self.has_act:
            x = self.activation(x)
        return x
