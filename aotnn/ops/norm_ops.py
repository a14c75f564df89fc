"""MindSpore's functional normalisations (``ops.layer_norm``, ``ops.group_norm``).

``batch_norm`` (the layers' entry point) lives in ``functional.py``.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..common.tensor import Tensor
from ._dispatch import apply
from .functional import ones, zeros

__all__ = ['layer_norm', 'group_norm']


def _check_float(x, op: str, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_float:
        raise TypeError(f"{op}: {name} must have a float dtype, got {x.dtype}")


def _affine(weight, bias, shape: tuple[int, ...], op: str) -> tuple[Tensor, Tensor]:
    weight = ones(shape) if weight is None else weight
    bias = zeros(shape) if bias is None else bias
    for name, value in (("weight", weight), ("bias", bias)):
        _check_float(value, op, name)
        if tuple(value.shape) != tuple(shape):
            raise ValueError(f"{op}: {name} must have shape {tuple(shape)}, got {tuple(value.shape)}")
    return weight, bias


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):  # noqa: A002
    """Layer normalisation over the trailing ``len(normalized_shape)`` axes.

    Args:
        input (Tensor): float input whose trailing axes equal ``normalized_shape``.
        normalized_shape (Union[int, tuple[int], list[int]]): the normalised trailing shape.
        weight, bias (Tensor): of shape ``normalized_shape``; None means ones / zeros.
        eps (float): added to the variance. Default: 1e-5.

    Raises:
        TypeError: ``input`` is not a float Tensor; ``normalized_shape`` is not an int, tuple or list.
        ValueError: the trailing axes of ``input`` differ from ``normalized_shape``.
    """
    _check_float(input, "layer_norm", "input")
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, Sequence):
        raise TypeError(f"layer_norm: normalized_shape must be an int, tuple or list, "
                        f"got {type(normalized_shape).__name__}")
    shape = tuple(int(s) for s in normalized_shape)
    if not shape or tuple(input.shape[-len(shape):]) != shape:
        raise ValueError(f"layer_norm: input's trailing axes must equal normalized_shape={shape}, "
                         f"got input shape {input.shape}")
    weight, bias = _affine(weight, bias, shape, "layer_norm")
    begin = input.ndim - len(shape)
    return apply("layer_norm", input, weight, bias, begin, begin, float(eps))[0]


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):  # noqa: A002
    """Group normalisation of an (N, C, ...) input: ``num_groups`` groups of channels.

    Raises:
        TypeError: ``input`` is not a float Tensor or ``num_groups`` is not an int.
        ValueError: C is not divisible by ``num_groups``, or weight/bias are not of shape (C,).
    """
    _check_float(input, "group_norm", "input")
    if isinstance(num_groups, bool) or not isinstance(num_groups, int):
        raise TypeError(f"group_norm: num_groups must be an int, got {type(num_groups).__name__}")
    if input.ndim < 2 or num_groups < 1 or input.shape[1] % num_groups:
        raise ValueError(f"group_norm: expected an (N, C, ...) input with C divisible by num_groups={num_groups}, "
                         f"got shape {input.shape}")
    weight, bias = _affine(weight, bias, (input.shape[1],), "group_norm")
    return apply("group_norm", input, weight, bias, num_groups, float(eps))


def instance_norm_stats(x, gamma, beta, eps: float = 1e-5):
    """Instance normalisation of an (N, C, ...) input with per-channel ``gamma``/``beta``.

    Returns:
        ``(y, mean, unbiased_variance)``, the statistics (shape (C,)) averaged over the samples,
        for layers that keep moving statistics.
    """
    _check_float(x, "instance_norm", "x")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: x must be (N, C, ...) with spatial axes, got shape {x.shape}")
    return apply("instance_norm", x, gamma, beta, float(eps))
