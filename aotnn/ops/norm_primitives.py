"""MindSpore's normalisation primitives: ``ops.LayerNorm`` and ``ops.BatchNorm``."""
from __future__ import annotations

from ..common.parameter import Parameter
from . import functional as F
from ._dispatch import apply
from .primitives import Primitive

__all__ = ['LayerNorm', 'BatchNorm']


class LayerNorm(Primitive):
    """``ops.LayerNorm(begin_norm_axis=1, begin_params_axis=1, epsilon=1e-7)(x, gamma, beta)``.

    Returns:
        ``(y, mean, variance)``: the statistics keep the normalised axes as 1s; the variance is biased.
    """

    def __init__(self, begin_norm_axis: int = 1, begin_params_axis: int = 1, epsilon: float = 1e-7):
        super().__init__()
        for name, value in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"LayerNorm: {name} must be an int, got {type(value).__name__}")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
            raise TypeError(f"LayerNorm: epsilon must be a float, got {type(epsilon).__name__}")
        self.begin_norm_axis, self.begin_params_axis, self.epsilon = begin_norm_axis, begin_params_axis, float(epsilon)

    def __call__(self, x, gamma, beta):
        rank = x.ndim
        for name, value in (("begin_norm_axis", self.begin_norm_axis), ("begin_params_axis", self.begin_params_axis)):
            if not -rank <= value < rank:
                raise ValueError(f"LayerNorm: {name} must be in [{-rank}, {rank}), got {value}")
        expected = tuple(x.shape[self.begin_params_axis % rank:])
        for name, value in (("gamma", gamma), ("beta", beta)):
            if tuple(value.shape) != expected:
                raise ValueError(f"LayerNorm: {name} must have shape {expected} (x.shape[begin_params_axis:]), "
                                 f"got {tuple(value.shape)}")
        return apply("layer_norm", x, gamma, beta, self.begin_norm_axis, self.begin_params_axis, self.epsilon)


class BatchNorm(Primitive):
    """``ops.BatchNorm(is_training=False, epsilon=1e-5, momentum=0.1, data_format='NCHW')(x, scale, bias, mean,
    variance)``.

    In training it normalises with the batch's statistics and, when ``mean``/``variance`` are
    Parameters, updates them to ``(1 - momentum) * old + momentum * batch`` (unbiased variance).

    Returns:
        ``(y, batch_mean, batch_variance, reserve_space_1, reserve_space_2)``; in inference the
        statistics returned are the given ``mean``/``variance``.
    """

    def __init__(self, is_training: bool = False, epsilon: float = 1e-5, momentum: float = 0.1,
                 data_format: str = "NCHW"):
        super().__init__()
        if not isinstance(is_training, bool):
            raise TypeError(f"BatchNorm: is_training must be a bool, got {type(is_training).__name__}")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm: momentum must be in [0, 1], got {momentum}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"BatchNorm: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self.is_training, self.epsilon, self.momentum = is_training, float(epsilon), float(momentum)
        self.data_format = data_format

    def __call__(self, x, scale, bias, mean, variance):
        axis = x.ndim - 1 if self.data_format == "NHWC" else 1
        if not self.is_training:
            y = F.batch_norm(x, scale, bias, mean, variance, self.epsilon, False, axis)
            return y, mean, variance, mean, variance
        y, batch_mean, batch_var = F.batch_norm(x, scale, bias, mean, variance, self.epsilon, True, axis)
        for moving, batch in ((mean, batch_mean), (variance, batch_var)):
            if isinstance(moving, Parameter):
                F.assign(moving, moving * (1.0 - self.momentum) + batch * self.momentum)
        return y, batch_mean, batch_var, batch_mean, batch_var
