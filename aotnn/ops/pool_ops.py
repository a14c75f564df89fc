"""Functional adaptive pooling: ``ops.adaptive_avg_pool1d/2d/3d`` and ``ops.adaptive_max_pool1d/2d``.

``ops.max_pool2d`` and ``ops.avg_pool2d`` live in ``functional.py``; all name lowering rules in
``relay_frontend/ops/pool.py``.
"""
from __future__ import annotations

from ..common.tensor import Tensor
from ._dispatch import apply

__all__ = ['adaptive_avg_pool1d', 'adaptive_avg_pool2d', 'adaptive_avg_pool3d', 'adaptive_max_pool1d',
           'adaptive_max_pool2d']


def _sizes(output_size, count: int, name: str) -> tuple:
    """``output_size`` as ``count`` entries, each a positive int or None (keep the input's size)."""
    if output_size is None or isinstance(output_size, int) and not isinstance(output_size, bool):
        output_size = (output_size,) * count
    if not isinstance(output_size, (tuple, list)) or len(output_size) != count:
        raise ValueError(f"{name}: output_size must be an int, None or a tuple of {count}, got {output_size!r}")
    for size in output_size:
        if size is not None and (isinstance(size, bool) or not isinstance(size, int)):
            raise TypeError(f"{name}: output_size entries must be int or None, got {output_size!r}")
        if size is not None and size < 1:
            raise ValueError(f"{name}: output_size entries must be positive, got {output_size!r}")
    return tuple(output_size)


def _check_input(name: str, x, ranks: tuple[int, ...], dtypes: tuple[str, ...]) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(x).__name__}")
    if x.dtype.name not in dtypes:
        raise TypeError(f"{name}: input dtype must be one of {dtypes}, got {x.dtype.name}")
    if x.ndim not in ranks:
        raise ValueError(f"{name}: input must have rank {' or '.join(map(str, ranks))}, got shape {x.shape}")


def _check_divisible(name: str, x, output_size: int) -> None:
    length = x.shape[-1]
    if length < output_size or length % output_size:
        raise ValueError(f"{name}: the input length {length} must be a multiple of output_size {output_size} "
                         f"(and not smaller)")


def adaptive_avg_pool1d(input, output_size):  # noqa: A002 (MindSpore's argument name)
    """Average of (N, C, L) over ``output_size`` equal windows of L.

    Raises:
        TypeError: ``output_size`` not an int; input not float16/float32.
        ValueError: ``output_size`` < 1; input not 3-D; L not a multiple of ``output_size``.
    """
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise TypeError(f"adaptive_avg_pool1d: output_size must be an int, got {type(output_size).__name__}")
    _sizes(output_size, 1, "adaptive_avg_pool1d")
    _check_input("adaptive_avg_pool1d", input, (3,), ("float16", "float32"))
    _check_divisible("adaptive_avg_pool1d", input, output_size)
    return apply("adaptive_avg_pool", input, (output_size,))


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Adaptive average of the last two axes of (N, C, H, W) or (C, H, W): window i of an axis of size S
    pooled to O covers [floor(i * S / O), ceil((i + 1) * S / O)). None in ``output_size`` keeps that axis."""
    sizes = _sizes(output_size, 2, "adaptive_avg_pool2d")
    _check_input("adaptive_avg_pool2d", input, (3, 4), ("float16", "float32", "float64"))
    return apply("adaptive_avg_pool", input, sizes)


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """Adaptive average of the last three axes of (N, C, D, H, W) or (C, D, H, W)."""
    sizes = _sizes(output_size, 3, "adaptive_avg_pool3d")
    _check_input("adaptive_avg_pool3d", input, (4, 5), ("float16", "float32", "float64"))
    return apply("adaptive_avg_pool", input, sizes)


def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """Maximum of (N, C, L) over ``output_size`` equal windows of L (L must be a multiple of it)."""
    if isinstance(output_size, bool) or not isinstance(output_size, int):
        raise TypeError(f"adaptive_max_pool1d: output_size must be an int, got {type(output_size).__name__}")
    _sizes(output_size, 1, "adaptive_max_pool1d")
    _check_input("adaptive_max_pool1d", input, (3,), ("float16", "float32"))
    _check_divisible("adaptive_max_pool1d", input, output_size)
    return apply("adaptive_max_pool", input, (output_size,))


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Adaptive maximum of the last two axes of (N, C, H, W) or (C, H, W); with ``return_indices`` also the
    int64 position of each maximum in its H * W plane."""
    sizes = _sizes(output_size, 2, "adaptive_max_pool2d")
    if not isinstance(return_indices, bool):
        raise TypeError(f"adaptive_max_pool2d: return_indices must be a bool, got {type(return_indices).__name__}")
    _check_input("adaptive_max_pool2d", input, (3, 4), ("float16", "float32", "float64"))
    return apply("adaptive_max_pool", input, sizes, return_indices=return_indices)
