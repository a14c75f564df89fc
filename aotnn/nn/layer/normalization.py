"""Normalisation layers."""
from __future__ import annotations

__all__ = ['BatchNorm2d']

from ... import ops
from ...common.initializer import initializer
from ...common.parameter import Parameter
from ..cell import Cell
from ._checks import one_of, positive_int


class BatchNorm2d(Cell):
    """Batch normalisation over (N, H, W) for each channel of an NCHW input.

    In inference (the default until ``set_train()``) it normalises with the moving statistics.
    In training it uses the batch's statistics and updates the moving ones as MindSpore does:
    ``moving = momentum * moving + (1 - momentum) * batch`` (unbiased variance).

    Args:
        num_features: channels C.
        eps: added to the variance. Default: 1e-5.
        momentum: weight of the old moving statistics. Default: 0.9.
        affine: whether gamma and beta are trainable. Default: True.
        gamma_init, beta_init, moving_mean_init, moving_var_init: initializers.
        use_batch_statistics: None (follow the training flag), True or False.
        data_format: 'NCHW' or 'NHWC'. Default: 'NCHW'.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.9, affine: bool = True,
                 gamma_init="ones", beta_init="zeros", moving_mean_init="zeros", moving_var_init="ones",
                 use_batch_statistics=None, data_format: str = "NCHW"):
        super().__init__()
        self.num_features = positive_int(num_features, "num_features", "BatchNorm2d")
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm2d: momentum must be in [0, 1], got {momentum}")
        self.eps, self.momentum = float(eps), float(momentum)
        self.data_format = one_of(data_format, ("NCHW", "NHWC"), "data_format", "BatchNorm2d")
        self.use_batch_statistics = use_batch_statistics
        self.moving_mean = Parameter(initializer(moving_mean_init, [num_features]), name="mean", requires_grad=False)
        self.moving_variance = Parameter(initializer(moving_var_init, [num_features]), name="variance",
                                         requires_grad=False)
        self.gamma = Parameter(initializer(gamma_init, [num_features]), name="gamma", requires_grad=affine)
        self.beta = Parameter(initializer(beta_init, [num_features]), name="beta", requires_grad=affine)

    def construct(self, x):
        axis = 1 if self.data_format == "NCHW" else 3
        if x.ndim != 4 or x.shape[axis] != self.num_features:
            raise ValueError(f"BatchNorm2d: expected a 4-D input with {self.num_features} channels, "
                             f"got shape {x.shape}")
        use_batch = self.training if self.use_batch_statistics is None else self.use_batch_statistics
        if not use_batch:
            return ops.batch_norm(x, self.gamma, self.beta, self.moving_mean, self.moving_variance,
                                  self.eps, False, axis)
        y, mean, variance = ops.batch_norm(x, self.gamma, self.beta, self.moving_mean, self.moving_variance,
                                           self.eps, True, axis)
        if self.training:
            ops.assign(self.moving_mean, self.moving_mean * self.momentum + mean * (1 - self.momentum))
            ops.assign(self.moving_variance, self.moving_variance * self.momentum + variance * (1 - self.momentum))
        return y

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"gamma={self.gamma}, beta={self.beta}, moving_mean={self.moving_mean}, "
                f"moving_variance={self.moving_variance}")
