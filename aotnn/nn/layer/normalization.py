"""Normalisation layers: BatchNorm1d/2d/3d, SyncBatchNorm, GlobalBatchNorm, LayerNorm, GroupNorm,
InstanceNorm2d."""
from __future__ import annotations

import numbers
from typing import Any

from ... import ops
from ...common import dtype as mstype
from ...common.initializer import Initializer, initializer
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops.functional import _latest_value
from ...ops.norm_ops import instance_norm_stats
from ..cell import Cell

__all__ = ['BatchNorm1d', 'BatchNorm2d', 'BatchNorm3d', 'SyncBatchNorm', 'GlobalBatchNorm', 'LayerNorm',
           'GroupNorm', 'InstanceNorm2d']


def _int_at_least(value: Any, name: str, cls: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{cls}: {name} must be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{cls}: {name} must be at least {low}, got {value}")
    return value


def _number(value: Any, name: str, cls: str, floats_only: bool = False) -> float:
    allowed = (float,) if floats_only else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed):
        raise TypeError(f"{cls}: {name} must be a float, got {type(value).__name__}")
    return float(value)


def _bool(value: Any, name: str, cls: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{cls}: {name} must be a bool, got {type(value).__name__}")
    return value


def _momentum(value: Any, cls: str) -> float:
    value = _number(value, "momentum", cls)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{cls}: momentum must be in [0, 1], got {value}")
    return value


def _init_arg(value: Any, name: str, cls: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, (Tensor, numbers.Number, str, Initializer)):
        raise TypeError(f"{cls}: {name} must be a Tensor, number, str or Initializer, got {type(value).__name__}")
    return value


class _BatchNorm(Cell):
    """Shared body of the batch normalisations: moving statistics, checks and the compiled update.

    ``moving = momentum * moving + (1 - momentum) * batch`` whenever batch statistics are used (in
    training, or always with ``use_batch_statistics=True``), the variance being the batch's
    unbiased one; the output is normalised with the biased variance.
    """

    _ranks: tuple[int, ...] = (4,)
    _formats: tuple[str, ...] = ("NCHW", "NHWC")

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, data_format: str = "NCHW", dtype=mstype.float32):
        super().__init__()
        cls = type(self).__name__
        self.num_features = _int_at_least(num_features, "num_features", cls)
        self.eps = _number(eps, "eps", cls)
        self.momentum = _momentum(momentum, cls)
        self.affine = _bool(affine, "affine", cls)
        if data_format not in self._formats:
            raise ValueError(f"{cls}: data_format must be one of {self._formats}, got {data_format!r}")
        self.format = self.data_format = data_format
        if use_batch_statistics is not None and not isinstance(use_batch_statistics, bool):
            raise ValueError(f"{cls}: use_batch_statistics must be a bool or None, got {use_batch_statistics!r}")
        self.use_batch_statistics = use_batch_statistics
        shape = [num_features]
        self.moving_mean = Parameter(initializer(_init_arg(moving_mean_init, "moving_mean_init", cls), shape, dtype),
                                     name="mean", requires_grad=False)
        self.moving_variance = Parameter(initializer(_init_arg(moving_var_init, "moving_var_init", cls), shape, dtype),
                                         name="variance", requires_grad=False)
        self.gamma = Parameter(initializer(_init_arg(gamma_init, "gamma_init", cls), shape, dtype), name="gamma",
                               requires_grad=affine)
        self.beta = Parameter(initializer(_init_arg(beta_init, "beta_init", cls), shape, dtype), name="beta",
                              requires_grad=affine)

    def _channel_axis(self, x) -> int:
        return x.ndim - 1 if self.data_format.endswith("C") else 1

    def construct(self, x):
        cls = type(self).__name__
        if x.ndim not in self._ranks:
            ranks = " or ".join(str(r) for r in self._ranks)
            raise ValueError(f"{cls}: x must have {ranks} dimensions, got shape {x.shape}")
        axis = self._channel_axis(x)
        if x.shape[axis] != self.num_features:
            raise ValueError(f"{cls}: x must have num_features={self.num_features} channels on axis {axis}, "
                             f"got shape {x.shape}")
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if not use_batch:
            return ops.batch_norm(x, self.gamma, self.beta, self.moving_mean, self.moving_variance, self.eps,
                                  False, axis)
        y, mean, variance = ops.batch_norm(x, self.gamma, self.beta, self.moving_mean, self.moving_variance,
                                           self.eps, True, axis)
        # a BatchNorm called twice in one step updates its statistics twice, as in MindSpore
        moving_mean, moving_variance = _latest_value(self.moving_mean), _latest_value(self.moving_variance)
        ops.assign(self.moving_mean, moving_mean * self.momentum + mean * (1.0 - self.momentum))
        ops.assign(self.moving_variance, moving_variance * self.momentum + variance * (1.0 - self.momentum))
        return y

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of an (N, C) or (N, C, L) input, per channel C.

    ``y = (x - E[x]) / sqrt(Var[x] + eps) * gamma + beta``. Inference (the default until
    ``set_train()``) uses the moving statistics; training uses the batch's and updates the moving
    ones: ``moving = momentum * moving + (1 - momentum) * batch`` (unbiased batch variance).

    Args:
        num_features (int): C.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float): weight of the old moving statistics, in [0, 1]. Default: 0.9.
        affine (bool): whether gamma and beta are trainable. Default: True.
        gamma_init, beta_init, moving_mean_init, moving_var_init (Union[Tensor, str, Initializer,
            numbers.Number]): initializers. Default: 'ones', 'zeros', 'zeros', 'ones'.
        use_batch_statistics (bool): True: always batch statistics (and update the moving ones);
            False: always the moving ones; None: follow the training flag. Default: None.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Inputs:
        - **x** (Tensor) - (N, C) or (N, C, L).

    Outputs:
        Tensor of x's shape and dtype.

    Raises:
        TypeError: ``num_features`` is not an int, or ``eps`` is not a number.
        ValueError: ``num_features`` < 1, ``momentum`` outside [0, 1], ``use_batch_statistics`` not a
            bool or None; an input of the wrong rank or channel count.
    """

    _ranks = (2, 3)
    _formats = ("NCHW",)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, "NCHW", dtype)

    def _channel_axis(self, x) -> int:
        return 1


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of an (N, C, H, W) input (or (N, H, W, C) with ``data_format='NHWC'``), per channel.

    Same arguments and behaviour as :class:`BatchNorm1d`, plus:

    Args:
        data_format (str): 'NCHW' or 'NHWC'. Default: 'NCHW'.

    Raises:
        ValueError: ``data_format`` is neither 'NCHW' nor 'NHWC'; see :class:`BatchNorm1d` for the rest.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, data_format: str = "NCHW", dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, data_format, dtype)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation synchronised across devices; on one device (the only setting aotnn
    compiles for) it is exactly :class:`BatchNorm2d` on (N, C, H, W) or :class:`BatchNorm1d` on (N, C).

    Args:
        num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
            moving_var_init, use_batch_statistics: as :class:`BatchNorm1d`.
        process_groups (list[list[int]]): device groups to synchronise within; accepted and
            checked, no effect on a single device. Default: None (all devices).

    Raises:
        TypeError: ``process_groups`` is not a list of lists of ints; see :class:`BatchNorm1d`.
        ValueError: a rank id in ``process_groups`` is negative or repeated.
    """

    _ranks = (2, 4)
    _formats = ("NCHW",)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, process_groups: list | None = None,
                 dtype=mstype.float32):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, "NCHW", dtype)
        if process_groups is not None:
            if not isinstance(process_groups, list) or not all(isinstance(g, list) for g in process_groups):
                raise TypeError(f"SyncBatchNorm: process_groups must be a list of lists, got {process_groups!r}")
            seen: set[int] = set()
            for rank_id in (r for group in process_groups for r in group):
                if isinstance(rank_id, bool) or not isinstance(rank_id, int):
                    raise TypeError(f"SyncBatchNorm: rank ids in process_groups must be ints, got {rank_id!r}")
                if rank_id < 0 or rank_id in seen:
                    raise ValueError(f"SyncBatchNorm: rank ids in process_groups must be distinct and >= 0, "
                                     f"got {process_groups}")
                seen.add(rank_id)
        self.process_groups = process_groups


class GlobalBatchNorm(_BatchNorm):
    """Deprecated MindSpore name for batch normalisation across groups of devices (use
    :class:`SyncBatchNorm`); on one device it is :class:`BatchNorm2d` on (N, C, H, W) or
    :class:`BatchNorm1d` on (N, C).

    Args:
        num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
            moving_var_init, use_batch_statistics: as :class:`BatchNorm1d`.
        device_num_each_group (int): devices per group, at least 2. Default: 2.

    Raises:
        TypeError: ``device_num_each_group`` is not an int; see :class:`BatchNorm1d`.
        ValueError: ``device_num_each_group`` is less than 2.
    """

    _ranks = (2, 4)
    _formats = ("NCHW",)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, device_num_each_group: int = 2):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                         moving_var_init, use_batch_statistics, "NCHW")
        self.group_device_num = _int_at_least(device_num_each_group, "device_num_each_group", "GlobalBatchNorm", 2)


class BatchNorm3d(Cell):
    """Batch normalisation of an (N, C, D, H, W) input, per channel: :class:`BatchNorm2d` applied to
    the input viewed as (N, C, D*H, W). Its parameters live in the child ``bn2d`` (``bn2d.gamma``...).

    Args:
        num_features ... use_batch_statistics: as :class:`BatchNorm2d`.
        data_format (str): only 'NCDHW'. Default: 'NCDHW'.

    Raises:
        ValueError: ``data_format`` is not 'NCDHW', or the input is not 5-D; see :class:`BatchNorm1d`.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics: bool | None = None, data_format: str = "NCDHW", dtype=mstype.float32):
        super().__init__()
        if data_format != "NCDHW":
            raise ValueError(f"BatchNorm3d: data_format must be 'NCDHW', got {data_format!r}")
        self.format = data_format
        self.bn2d = BatchNorm2d(num_features, eps, momentum, affine, gamma_init, beta_init, moving_mean_init,
                                moving_var_init, use_batch_statistics, "NCHW", dtype)

    def construct(self, x):
        if x.ndim != 5:
            raise ValueError(f"BatchNorm3d: x must have 5 dimensions, got shape {x.shape}")
        n, c, d, h, w = x.shape
        y = self.bn2d(ops.reshape(x, (n, c, d * h, w)))
        return ops.reshape(y, (n, c, d, h, w))


class LayerNorm(Cell):
    """Layer normalisation over axes ``begin_norm_axis`` onwards, the same in training and inference.

    ``y = (x - E[x]) / sqrt(Var[x] + epsilon) * gamma + beta``, the statistics taken over
    ``x.shape[begin_norm_axis:]`` per leading index, ``gamma``/``beta`` of shape
    ``x.shape[begin_params_axis:]``.

    Args:
        normalized_shape (Union[tuple[int], list[int]]): shape of gamma and beta.
        begin_norm_axis (int): first normalised axis. Default: -1.
        begin_params_axis (int): first axis gamma/beta cover. Default: -1.
        gamma_init, beta_init (Union[Tensor, str, Initializer, numbers.Number]): Default: 'ones', 'zeros'.
        epsilon (float): added to the variance. Default: 1e-7.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Inputs:
        - **x** (Tensor) - ``x.shape[begin_params_axis:]`` equals ``normalized_shape``.

    Outputs:
        Tensor of x's shape and dtype.

    Raises:
        TypeError: ``normalized_shape`` is not a tuple or list; ``begin_norm_axis`` or
            ``begin_params_axis`` is not an int; ``epsilon`` is not a float.
        ValueError: an axis outside [-rank, rank) or an input whose shape does not match.
    """

    def __init__(self, normalized_shape, begin_norm_axis: int = -1, begin_params_axis: int = -1,
                 gamma_init="ones", beta_init="zeros", epsilon: float = 1e-7, dtype=mstype.float32):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)):
            raise TypeError(f"LayerNorm: normalized_shape must be a tuple or list of ints, "
                            f"got {type(normalized_shape).__name__}")
        for name, value in (("begin_norm_axis", begin_norm_axis), ("begin_params_axis", begin_params_axis)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"LayerNorm: {name} must be an int, got {type(value).__name__}")
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.begin_norm_axis, self.begin_params_axis = begin_norm_axis, begin_params_axis
        self.epsilon = _number(epsilon, "epsilon", "LayerNorm", floats_only=True)
        shape = list(self.normalized_shape)
        self.gamma = Parameter(initializer(_init_arg(gamma_init, "gamma_init", "LayerNorm"), shape, dtype),
                               name="gamma")
        self.beta = Parameter(initializer(_init_arg(beta_init, "beta_init", "LayerNorm"), shape, dtype), name="beta")
        self.layer_norm = ops.LayerNorm(begin_norm_axis, begin_params_axis, self.epsilon)

    def construct(self, x):
        return self.layer_norm(x, self.gamma, self.beta)[0]

    def extend_repr(self) -> str:
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis={self.begin_norm_axis}, "
                f"begin_params_axis={self.begin_params_axis}, gamma={self.gamma}, beta={self.beta}")


class GroupNorm(Cell):
    """Group normalisation of an (N, C, H, W) input: the C channels split into ``num_groups`` groups,
    each normalised over its channels and positions, then scaled and shifted per channel.

    Args:
        num_groups (int): groups along the channel axis.
        num_channels (int): C, divisible by ``num_groups``.
        eps (float): added to the variance. Default: 1e-5.
        affine (bool): whether gamma and beta are trainable. Default: True.
        gamma_init, beta_init (Union[Tensor, str, Initializer, numbers.Number]): Default: 'ones', 'zeros'.
        dtype (mindspore.dtype): parameter dtype. Default: float32.

    Raises:
        TypeError: ``num_groups`` or ``num_channels`` not an int, ``eps`` not a float, ``affine``
            not a bool; a non-float input.
        ValueError: ``num_groups`` or ``num_channels`` < 1, ``num_channels`` not divisible by
            ``num_groups``; an input that is not 4-D or has a different channel count.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", dtype=mstype.float32):
        super().__init__()
        self.num_groups = _int_at_least(num_groups, "num_groups", "GroupNorm")
        self.num_channels = _int_at_least(num_channels, "num_channels", "GroupNorm")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels must be divisible by num_groups={num_groups}, "
                             f"got {num_channels}")
        self.eps = _number(eps, "eps", "GroupNorm", floats_only=True)
        self.affine = _bool(affine, "affine", "GroupNorm")
        self.gamma = Parameter(initializer(_init_arg(gamma_init, "gamma_init", "GroupNorm"), [num_channels], dtype),
                               name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(_init_arg(beta_init, "beta_init", "GroupNorm"), [num_channels], dtype),
                              name="beta", requires_grad=affine)

    def construct(self, x):
        if x.ndim != 4 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm: x must be 4-D with num_channels={self.num_channels} channels, "
                             f"got shape {x.shape}")
        if not x.dtype.is_float:
            raise TypeError(f"GroupNorm: x must be float16 or float32, got {x.dtype}")
        return ops.group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return f"num_groups={self.num_groups}, num_channels={self.num_channels}"


class InstanceNorm2d(Cell):
    """Instance normalisation of an (N, C, H, W) input: each sample's channel normalised over H, W
    (biased variance) in training and inference alike, then scaled and shifted per channel.

    In training the moving statistics (kept for checkpoints; never used for the output) follow
    ``moving = (1 - momentum) * moving + momentum * batch``, ``batch`` being the per-channel
    statistics averaged over the samples (unbiased variance).

    Args:
        num_features (int): C.
        eps (float): added to the variance. Default: 1e-5.
        momentum (float): weight of the new statistics, in [0, 1]. Default: 0.1.
        affine (bool): whether gamma and beta are trainable. Default: True.
        gamma_init, beta_init (Union[Tensor, str, Initializer, numbers.Number]): Default: 'ones', 'zeros'.

    Raises:
        TypeError: ``num_features`` not an int, ``eps`` or ``momentum`` not a float, ``affine`` not a
            bool, an initializer of another type or a non-float32 Tensor initializer.
        ValueError: ``num_features`` < 1, ``momentum`` outside [0, 1]; an input that is not 4-D or
            has a different channel count.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = True,
                 gamma_init="ones", beta_init="zeros"):
        super().__init__()
        self.num_features = _int_at_least(num_features, "num_features", "InstanceNorm2d")
        self.eps = _number(eps, "eps", "InstanceNorm2d", floats_only=True)
        _number(momentum, "momentum", "InstanceNorm2d", floats_only=True)
        self.momentum = _momentum(momentum, "InstanceNorm2d")
        self.affine = _bool(affine, "affine", "InstanceNorm2d")
        for name, value in (("gamma_init", gamma_init), ("beta_init", beta_init)):
            _init_arg(value, name, "InstanceNorm2d")
            if isinstance(value, Tensor) and value.dtype != mstype.float32:
                raise TypeError(f"InstanceNorm2d: {name} must be float32, got {value.dtype}")
        shape = [num_features]
        self.moving_mean = Parameter(initializer("zeros", shape), name="mean", requires_grad=False)
        self.moving_variance = Parameter(initializer("ones", shape), name="variance", requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, shape), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, shape), name="beta", requires_grad=affine)

    def construct(self, x):
        if x.ndim != 4 or x.shape[1] != self.num_features:
            raise ValueError(f"InstanceNorm2d: x must be 4-D with num_features={self.num_features} channels, "
                             f"got shape {x.shape}")
        y, mean, variance = instance_norm_stats(x, self.gamma, self.beta, self.eps)
        if self.training:
            m = self.momentum
            ops.assign(self.moving_mean, self.moving_mean * (1.0 - m) + mean * m)
            ops.assign(self.moving_variance, self.moving_variance * (1.0 - m) + variance * m)
        return y

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")
