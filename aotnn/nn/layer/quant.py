"""Quantization-aware training layers: the layers that fake-quantize their
weights (Conv2dQuant, DenseQuant, the BatchNorm-folding convolutions) or outputs (ActQuant, TensorAddQuant,
MulQuant).

Attribute names follow MindSpore (``fake_quant_weight``, ``fake_quant_act``, ``minq``, ``maxq``, ``gamma``,
``beta``, ``moving_mean``, ``moving_variance``, ``weight``, ``bias``): exporters and checkpoints rely on them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...compression.common import QuantDtype
from ...ops.primitives import Primitive
from ..cell import Cell
from ._checks import check_bool, strict_positive_int
from .activation import get_activation
from .conv import _int_tuple, _pad_mode, _padding
from .normalization import BatchNorm2d
from .quant_observer import QuantConfig, quant_config_default

__all__ = ['Conv2dBnFoldQuantOneConv', 'Conv2dBnFoldQuant', 'Conv2dBnWithoutFoldQuant', 'Conv2dQuant', 'DenseQuant',
           'ActQuant', 'TensorAddQuant', 'MulQuant']


def _check_config(quant_config: Any, quant_dtype: Any, cls: str) -> None:
    if not isinstance(quant_config, QuantConfig):
        raise TypeError(f"For '{cls}', the 'quant_config' must be a QuantConfig, "
                        f"but got {type(quant_config).__name__}.")
    if not isinstance(quant_dtype, QuantDtype):
        raise TypeError(f"For '{cls}', the 'quant_dtype' must be a QuantDtype, but got {type(quant_dtype).__name__}.")


def _weight_observer(quant_config: QuantConfig, out_channels: int, quant_dtype: QuantDtype) -> Cell:
    return quant_config.weight(min_init=-6, max_init=6, ema=False, channel_axis=0, num_channels=out_channels,
                               quant_dtype=quant_dtype)


def _act_observer(quant_config: QuantConfig, ema: bool, ema_decay: float, quant_dtype: QuantDtype) -> Cell:
    return quant_config.activation(min_init=-6, max_init=6, ema=ema, ema_decay=ema_decay, quant_dtype=quant_dtype)


def _per_channel(t, shape: tuple[int, ...]):
    return ops.reshape(t, shape)


# -- convolutions ------------------------------------------------------------------------------------
class _QuantConv(Cell):
    """Checks the convolution arguments shared by the quantization-aware convolutions; creates ``weight``."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                 has_bias, weight_init, bias_init, quant_config, quant_dtype):
        super().__init__()
        cls = type(self).__name__
        self.in_channels = strict_positive_int(in_channels, "in_channels", cls)
        self.out_channels = strict_positive_int(out_channels, "out_channels", cls)
        self.group = strict_positive_int(group, "group", cls)
        self.kernel_size = _int_tuple(kernel_size, 2, "kernel_size", cls)
        self.stride = _int_tuple(stride, 2, "stride", cls)
        self.dilation = _int_tuple(dilation, 2, "dilation", cls)
        self.pad_mode = _pad_mode(pad_mode, cls)
        self.padding = _padding(padding, (2, 4), self.pad_mode, cls)
        self.has_bias = check_bool(has_bias, "has_bias", cls)
        if in_channels % group or out_channels % group:
            raise ValueError(f"For '{cls}', the 'in_channels' ({in_channels}) and 'out_channels' ({out_channels}) "
                             f"must be divisible by 'group' ({group}).")
        _check_config(quant_config, quant_dtype, cls)
        self.quant_config, self.quant_dtype = quant_config, quant_dtype
        shape = [out_channels, in_channels // group, *self.kernel_size]
        self.weight = Parameter(initializer(weight_init, shape, mstype.float32), name="weight")
        self.bias = (Parameter(initializer(bias_init, [out_channels], mstype.float32), name="bias")
                     if self.has_bias else None)
        self.fake_quant_weight = _weight_observer(quant_config, out_channels, quant_dtype)

    def _conv(self, x, weight, bias=None):
        if x.ndim != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f"For '{type(self).__name__}', the input must be 4-D with {self.in_channels} channels "
                             f"(NCHW), but got shape {x.shape}.")
        return ops.conv2d(x, weight, bias, self.stride, self.pad_mode, self.padding, self.dilation, self.group)

    def extend_repr(self) -> str:
        return (f"in_channels={self.in_channels}, out_channels={self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}, quant_delay={self.fake_quant_weight.quant_delay}")


_CONV_ARGS_DOC = """
        in_channels (int): input channels C_in.
        out_channels (int): output channels C_out.
        kernel_size (Union[int, tuple[int]]): int or (height, width).
        stride (Union[int, tuple[int]]): int or pair. Default: 1.
        pad_mode (str): 'same', 'valid' or 'pad'. Default: 'same'.
        padding (Union[int, tuple[int]]): with 'pad': an int, (h, w) or (top, bottom, left, right). Default: 0.
        dilation (Union[int, tuple[int]]): int or pair. Default: 1.
        group (int): groups; channels must divide by it. Default: 1."""


class Conv2dQuant(_QuantConv):
    r"""2-D convolution whose weight is fake-quantized (per output channel with a per-channel config).

    .. math::
        y = conv(x, quant(W)) + b
    """ + _CONV_ARGS_DOC + """
        has_bias (bool): add a bias. Default: False.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): weight initializer. Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): bias initializer. Default: 'zeros'.
        quant_config (QuantConfig): observer factories, from ``compression.quant.create_quant_config``.
            Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError: ``in_channels``, ``out_channels`` or ``group`` not an int; ``kernel_size``, ``stride``,
            ``padding`` or ``dilation`` neither an int nor a tuple; ``has_bias`` not a bool; ``quant_config``
            not a QuantConfig.
        ValueError: a size below 1; negative padding; an unknown ``pad_mode``; channels not divisible by ``group``.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
                 group=1, has_bias=False, weight_init='normal', bias_init='zeros', quant_config=quant_config_default,
                 quant_dtype=QuantDtype.INT8):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, quant_config, quant_dtype)

    def construct(self, x):
        return self._conv(x, self.fake_quant_weight(self.weight), self.bias)


def _batch_stats(y):
    """Per-channel mean, biased and unbiased variance of an (N, C, H, W) tensor."""
    count = y.shape[0] * y.shape[2] * y.shape[3]
    mean = ops.mean(y, (0, 2, 3))
    centered = y - ops.reshape(mean, (1, -1, 1, 1))
    biased = ops.mean(centered * centered, (0, 2, 3))
    return mean, biased, biased * (count / max(count - 1, 1))


class _QuantConvBn(_QuantConv):
    """The BatchNorm parameters of the folding convolutions."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, eps,
                 momentum, has_bias, weight_init, bias_init, beta_init, gamma_init, mean_init, var_init, fake,
                 quant_config, quant_dtype):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, quant_config, quant_dtype)
        cls = type(self).__name__
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or eps <= 0:
            raise ValueError(f"For '{cls}', the 'eps' must be a positive float, but got {eps!r}.")
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"For '{cls}', the 'momentum' must be a float in [0, 1], but got {momentum!r}.")
        self.eps, self.momentum = float(eps), float(momentum)
        self.fake = check_bool(fake, "fake", cls)
        channels = [out_channels]
        self.gamma = Parameter(initializer(gamma_init, channels, mstype.float32), name="gamma")
        self.beta = Parameter(initializer(beta_init, channels, mstype.float32), name="beta")
        self.moving_mean = Parameter(initializer(mean_init, channels, mstype.float32), name="moving_mean",
                                     requires_grad=False)
        self.moving_variance = Parameter(initializer(var_init, channels, mstype.float32), name="moving_variance",
                                         requires_grad=False)

    def _update_moving(self, batch_mean, batch_var, keep=None):
        """moving = momentum * moving + (1 - momentum) * batch (unbiased variance); ``keep`` (bool (1,)) freezes."""
        new_mean = self.moving_mean * self.momentum + batch_mean * (1.0 - self.momentum)
        new_var = self.moving_variance * self.momentum + batch_var * (1.0 - self.momentum)
        if keep is not None:
            new_mean = ops.select(keep, self.moving_mean, new_mean)
            new_var = ops.select(keep, self.moving_variance, new_var)
        ops.assign(self.moving_mean, new_mean)
        ops.assign(self.moving_variance, new_var)

    def extend_repr(self) -> str:
        return (f"in_channels={self.in_channels}, out_channels={self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, fake={self.fake}, momentum={self.momentum}, "
                f"quant_delay={self.fake_quant_weight.quant_delay}")


class Conv2dBnFoldQuantOneConv(_QuantConvBn):
    r"""2-D convolution with BatchNorm folded into its fake-quantized weight, using one convolution.

    .. math::
        w_q = quant(\frac{w}{\sqrt{var_G + \epsilon}} \gamma), \quad
        b = \beta - \frac{\mu_G}{\sqrt{var_G + \epsilon}} \gamma, \quad y = w_q * x + b

    with the moving statistics ``moving_mean``/``moving_variance`` as :math:`\mu_G, var_G`. In training the
    convolution output is unscaled (divided by :math:`\gamma / \sqrt{var_G + \epsilon}`) and batch-normalised
    with the batch statistics, which also update the moving ones:
    ``moving = momentum * moving + (1 - momentum) * batch`` (unbiased variance).
    """ + _CONV_ARGS_DOC + """
        eps (float): BatchNorm epsilon. Default: 1e-5.
        momentum (float): BatchNorm momentum (decay of the moving statistics). Default: 0.997.
        has_bias (bool): accepted; the bias is not used (as in MindSpore). Default: False.
        weight_init, bias_init, beta_init, gamma_init, mean_init, var_init: initializers of
            ``weight``, ``bias``, ``beta``, ``gamma``, ``moving_mean``, ``moving_variance``.
            Defaults: 'normal', 'zeros', 'zeros', 'ones', 'zeros', 'ones'.
        fake (bool): fake-quantize the folded weight. Default: True.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError: as :class:`Conv2dQuant`; ``fake`` not a bool.
        ValueError: as :class:`Conv2dQuant`; ``eps`` not positive; ``momentum`` outside [0, 1].
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
                 group=1, eps=1e-5, momentum=0.997, has_bias=False, weight_init='normal', bias_init='zeros',
                 beta_init='zeros', gamma_init='ones', mean_init='zeros', var_init='ones', fake=True,
                 quant_config=quant_config_default, quant_dtype=QuantDtype.INT8):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, eps,
                         momentum, has_bias, weight_init, bias_init, beta_init, gamma_init, mean_init, var_init,
                         fake, quant_config, quant_dtype)
        self.channel_axis = 0

    def construct(self, x):
        running_std = ops.sqrt(self.moving_variance + self.eps)
        scale_factor = self.gamma / running_std
        weight = self.weight * _per_channel(scale_factor, (-1, 1, 1, 1))
        if self.fake:
            weight = self.fake_quant_weight(weight)
        conv = self._conv(x, weight)
        conv_orig = conv / _per_channel(scale_factor, (1, -1, 1, 1))
        if self.training:
            mean, var, unbiased = _batch_stats(conv_orig)
            self._update_moving(mean, unbiased)
        else:
            mean, var = self.moving_mean, self.moving_variance
        scale = self.gamma / ops.sqrt(var + self.eps)
        shift = self.beta - mean * scale
        return conv_orig * _per_channel(scale, (1, -1, 1, 1)) + _per_channel(shift, (1, -1, 1, 1))


class Conv2dBnFoldQuant(_QuantConvBn):
    r"""2-D convolution with BatchNorm folded into its fake-quantized weight (two convolutions).

    .. math::
        w_q = quant(\frac{w}{\sqrt{Var[y] + \epsilon}} \gamma), \quad
        b = \beta - \frac{E[y]}{\sqrt{Var[y] + \epsilon}} \gamma, \quad y = w_q * x + b

    In training, a first convolution with the raw weight gives the batch statistics; the weight is folded
    with the moving (running) std and the output corrected to the batch ones (MindSpore's BatchNormFold,
    CorrectionMul, BatchNormFold2): ``out = conv(x, quant(w * gamma / running_std)) * running_std / batch_std
    + beta - gamma * batch_mean / batch_std``, and the moving statistics decay with ``momentum`` toward the
    batch's (unbiased variance). After ``freeze_bn`` training steps (and in inference) the moving statistics
    are used: ``out = conv(x, quant(w * gamma / running_std)) + beta - gamma * running_mean / running_std``.
    """ + _CONV_ARGS_DOC + """
        eps (float): BatchNorm epsilon. Default: 1e-5.
        momentum (float): decay of the moving statistics. Default: 0.997.
        has_bias (bool): add a bias. Default: False.
        weight_init, bias_init, beta_init, gamma_init, mean_init, var_init: initializers of
            ``weight``, ``bias``, ``beta``, ``gamma``, ``moving_mean``, ``moving_variance``.
            Defaults: 'normal', 'zeros', 'zeros', 'ones', 'zeros', 'ones'.
        fake (bool): fake-quantize the folded weight. Default: True.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.
        freeze_bn (int): training steps after which the moving statistics are frozen. Default: 100000.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError: as :class:`Conv2dQuant`; ``fake`` not a bool; ``freeze_bn`` not an int.
        ValueError: as :class:`Conv2dQuant`; ``eps`` not positive; ``momentum`` outside [0, 1];
            ``freeze_bn`` negative.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
                 group=1, eps=1e-5, momentum=0.997, has_bias=False, weight_init='normal', bias_init='zeros',
                 beta_init='zeros', gamma_init='ones', mean_init='zeros', var_init='ones', fake=True,
                 quant_config=quant_config_default, quant_dtype=QuantDtype.INT8, freeze_bn=100000):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group, eps,
                         momentum, has_bias, weight_init, bias_init, beta_init, gamma_init, mean_init, var_init,
                         fake, quant_config, quant_dtype)
        if isinstance(freeze_bn, bool) or not isinstance(freeze_bn, int):
            raise TypeError(f"For 'Conv2dBnFoldQuant', the 'freeze_bn' must be int, "
                            f"but got {type(freeze_bn).__name__}.")
        if freeze_bn < 0:
            raise ValueError(f"For 'Conv2dBnFoldQuant', the 'freeze_bn' must be non-negative, but got {freeze_bn}.")
        self.freeze_bn = freeze_bn
        self.step = Parameter(Tensor(np.zeros((1,), np.int32)), name="step", requires_grad=False)

    def extend_repr(self) -> str:
        return super().extend_repr().replace(", momentum=", f", freeze_bn={self.freeze_bn}, momentum=")

    def construct(self, x):
        running_mean = self.moving_mean
        running_std = ops.sqrt(self.moving_variance + self.eps)
        weight = self.weight * _per_channel(self.gamma / running_std, (-1, 1, 1, 1))
        if self.fake:
            weight = self.fake_quant_weight(weight)
        out = self._conv(x, weight, self.bias)
        frozen_shift = self.beta - self.gamma * running_mean / running_std
        if not self.training:
            return out + _per_channel(frozen_shift, (1, -1, 1, 1))
        batch_mean, batch_var, unbiased = _batch_stats(self._conv(x, self.weight, self.bias))
        batch_std = ops.sqrt(batch_var + self.eps)
        frozen = self.step >= self.freeze_bn
        self._update_moving(batch_mean, unbiased, keep=frozen)
        ops.assign(self.step, self.step + 1)
        live = (out * _per_channel(running_std / batch_std, (1, -1, 1, 1))
                + _per_channel(self.beta - self.gamma * batch_mean / batch_std, (1, -1, 1, 1)))
        return ops.select(ops.reshape(frozen, (1, 1, 1, 1)), out + _per_channel(frozen_shift, (1, -1, 1, 1)), live)


class Conv2dBnWithoutFoldQuant(_QuantConv):
    r"""2-D convolution with a fake-quantized weight followed by a (not folded) BatchNorm2d.

    .. math::
        y = BatchNorm(conv(x, quant(W)) + b)
    """ + _CONV_ARGS_DOC + """
        has_bias (bool): add a bias. Default: False.
        eps (float): BatchNorm epsilon. Default: 1e-5.
        momentum (float): BatchNorm momentum (decay of the moving statistics). Default: 0.997.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): weight initializer. Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): bias initializer. Default: 'zeros'.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x** (Tensor) - (N, C_in, H, W).

    Outputs:
        Tensor (N, C_out, H_out, W_out).

    Raises:
        TypeError: as :class:`Conv2dQuant`.
        ValueError: as :class:`Conv2dQuant`; ``eps`` or ``momentum`` invalid for BatchNorm2d.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, pad_mode='same', padding=0, dilation=1,
                 group=1, has_bias=False, eps=1e-5, momentum=0.997, weight_init='normal', bias_init='zeros',
                 quant_config=quant_config_default, quant_dtype=QuantDtype.INT8):
        super().__init__(in_channels, out_channels, kernel_size, stride, pad_mode, padding, dilation, group,
                         has_bias, weight_init, bias_init, quant_config, quant_dtype)
        self.batchnorm = BatchNorm2d(out_channels, eps=eps, momentum=momentum)

    def construct(self, x):
        return self.batchnorm(self._conv(x, self.fake_quant_weight(self.weight), self.bias))


# -- dense, activations, element-wise ----------------------------------------------------------------
class DenseQuant(Cell):
    r"""Fully connected layer whose weight is fake-quantized: ``y = activation(x quant(W)^T + b)``.

    Args:
        in_channels (int): input features.
        out_channels (int): output features.
        weight_init (Union[Tensor, str, Initializer, numbers.Number]): (out, in) weight initializer.
            Default: 'normal'.
        bias_init (Union[Tensor, str, Initializer, numbers.Number]): bias initializer. Default: 'zeros'.
        has_bias (bool): add a bias. Default: True.
        activation (Union[str, Cell, Primitive]): applied to the output, e.g. 'relu'. Default: None.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x** (Tensor) - (N, in_channels).

    Outputs:
        Tensor (N, out_channels).

    Raises:
        TypeError: ``in_channels`` or ``out_channels`` not an int; ``has_bias`` not a bool; ``activation``
            not a str, Cell or Primitive; ``quant_config`` not a QuantConfig.
        ValueError: ``in_channels`` or ``out_channels`` below 1; a weight/bias Tensor of the wrong shape.
    """

    def __init__(self, in_channels, out_channels, weight_init='normal', bias_init='zeros', has_bias=True,
                 activation=None, quant_config=quant_config_default, quant_dtype=QuantDtype.INT8):
        super().__init__()
        cls = "DenseQuant"
        self.in_channels = strict_positive_int(in_channels, "in_channels", cls)
        self.out_channels = strict_positive_int(out_channels, "out_channels", cls)
        self.has_bias = check_bool(has_bias, "has_bias", cls)
        _check_config(quant_config, quant_dtype, cls)
        if isinstance(weight_init, Tensor) and tuple(weight_init.shape) != (out_channels, in_channels):
            raise ValueError(f"For '{cls}', the 'weight_init' shape must be {(out_channels, in_channels)}, "
                             f"but got {tuple(weight_init.shape)}.")
        if has_bias and isinstance(bias_init, Tensor) and tuple(bias_init.shape) != (out_channels,):
            raise ValueError(f"For '{cls}', the 'bias_init' shape must be {(out_channels,)}, "
                             f"but got {tuple(bias_init.shape)}.")
        self.weight = Parameter(initializer(weight_init, [out_channels, in_channels], mstype.float32), name="weight")
        self.bias = (Parameter(initializer(bias_init, [out_channels], mstype.float32), name="bias")
                     if self.has_bias else None)
        self.activation = get_activation(activation, cls) if isinstance(activation, str) else activation
        if activation is not None and not isinstance(self.activation, (Cell, Primitive)):
            raise TypeError(f"For '{cls}', the 'activation' must be str, Cell or Primitive, "
                            f"but got {type(activation).__name__}.")
        self.activation_flag = self.activation is not None
        self.fake_quant_weight = _weight_observer(quant_config, out_channels, quant_dtype)

    def construct(self, x):
        out = ops.dense(x, self.fake_quant_weight(self.weight), self.bias)
        return self.activation(out) if self.activation_flag else out

    def extend_repr(self) -> str:
        s = f"in_channels={self.in_channels}, out_channels={self.out_channels}, has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={self.activation}"
        return s


class ActQuant(Cell):
    r"""An activation followed by fake quantization of its output (and, with ``fake_before``, of its input).

    Args:
        activation (Cell): the activation.
        ema (bool): observe the range with an exponential moving average. Default: False.
        ema_decay (float): the moving average's decay. Default: 0.999.
        fake_before (bool): also fake-quantize the input (``fake_quant_act_before``). Default: False.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x** (Tensor) - the activation's input.

    Outputs:
        Tensor of the shape and dtype of ``x``.

    Raises:
        TypeError: ``activation`` is not a Cell; ``fake_before`` or ``ema`` not a bool; ``quant_config``
            not a QuantConfig.
    """

    def __init__(self, activation, ema=False, ema_decay=0.999, fake_before=False, quant_config=quant_config_default,
                 quant_dtype=QuantDtype.INT8):
        super().__init__()
        if not isinstance(activation, Cell):
            raise TypeError(f"For 'ActQuant', the 'activation' must be a Cell, but got {type(activation).__name__}.")
        _check_config(quant_config, quant_dtype, "ActQuant")
        self.act = activation
        self.fake_before = check_bool(fake_before, "fake_before", "ActQuant")
        if self.fake_before:
            self.fake_quant_act_before = _act_observer(quant_config, ema, ema_decay, quant_dtype)
        self.fake_quant_act = _act_observer(quant_config, ema, ema_decay, quant_dtype)

    def construct(self, x):
        if self.fake_before:
            x = self.fake_quant_act_before(x)
        return self.fake_quant_act(self.act(x))

    def get_origin(self) -> Cell:
        """The wrapped activation cell."""
        return self.act


class _QuantBinary(Cell):
    """An element-wise binary op followed by fake quantization with an EMA observer (``fake_quant_act``)."""

    def __init__(self, ema_decay, quant_config, quant_dtype):
        super().__init__()
        _check_config(quant_config, quant_dtype, type(self).__name__)
        self.fake_quant_act = _act_observer(quant_config, True, ema_decay, quant_dtype)


class TensorAddQuant(_QuantBinary):
    r"""``x1 + x2`` followed by fake quantization (an EMA observer, ``fake_quant_act``).

    Args:
        ema_decay (float): decay of the observer's moving average. Default: 0.999.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x1** (Tensor) - first operand.
        - **x2** (Tensor) - second operand, broadcastable to ``x1``.

    Outputs:
        Tensor, the fake-quantized sum.

    Raises:
        TypeError: ``quant_config`` is not a QuantConfig or ``quant_dtype`` not a QuantDtype.
    """

    def __init__(self, ema_decay=0.999, quant_config=quant_config_default, quant_dtype=QuantDtype.INT8):
        super().__init__(ema_decay, quant_config, quant_dtype)

    def construct(self, x1, x2):
        return self.fake_quant_act(x1 + x2)


class MulQuant(_QuantBinary):
    r"""``x1 * x2`` followed by fake quantization (an EMA observer, ``fake_quant_act``).

    Args:
        ema_decay (float): decay of the observer's moving average. Default: 0.999.
        quant_config (QuantConfig): observer factories. Default: both FakeQuantWithMinMaxObserver.
        quant_dtype (QuantDtype): the integer type. Default: QuantDtype.INT8.

    Inputs:
        - **x1** (Tensor) - first operand.
        - **x2** (Tensor) - second operand, broadcastable to ``x1``.

    Outputs:
        Tensor, the fake-quantized product.

    Raises:
        TypeError: ``quant_config`` is not a QuantConfig or ``quant_dtype`` not a QuantDtype.
    """

    def __init__(self, ema_decay=0.999, quant_config=quant_config_default, quant_dtype=QuantDtype.INT8):
        super().__init__(ema_decay, quant_config, quant_dtype)

    def construct(self, x1, x2):
        return self.fake_quant_act(x1 * x2)
