"""MindSpore 2.x channel rearrangements: ``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``."""
from __future__ import annotations

from typing import Any

from ..common.tensor import Tensor
from . import functional as F

__all__ = ['pixel_shuffle', 'pixel_unshuffle', 'channel_shuffle']


def _factor(value: Any, op: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{op}: {name} must be a positive int, got {value!r}")
    return value


def _input(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim < 3:
        raise ValueError(f"{op}: input must have at least 3 dimensions (..., C, H, W), got shape {x.shape}")
    return x


def pixel_shuffle(input, upscale_factor):  # noqa: A002 (MindSpore's argument name)
    """(..., C r^2, H, W) -> (..., C, H r, W r): channel blocks of r^2 become r x r pixel blocks.

    Raises:
        TypeError: input not a Tensor.
        ValueError: rank below 3, a non-positive factor, or channels not divisible by r^2.
    """
    x, r = _input(input, "pixel_shuffle"), _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: channels {c} must be divisible by upscale_factor^2 = {r * r}")
    n = len(lead)
    out = F.reshape(x, tuple(lead) + (c // (r * r), r, r, h, w))
    perm = tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2)
    return F.reshape(F.transpose(out, perm), tuple(lead) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """(..., C, H r, W r) -> (..., C r^2, H, W), the inverse of ``pixel_shuffle``.

    Raises:
        TypeError: input not a Tensor.
        ValueError: rank below 3, a non-positive factor, or H / W not divisible by r.
    """
    x, r = _input(input, "pixel_unshuffle"), _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = x.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: height {h} and width {w} must be divisible by downscale_factor {r}")
    n = len(lead)
    out = F.reshape(x, tuple(lead) + (c, h // r, r, w // r, r))
    perm = tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3)
    return F.reshape(F.transpose(out, perm), tuple(lead) + (c * r * r, h // r, w // r))


def channel_shuffle(x, groups):
    """(N, C, *) with its C channels viewed as (groups, C / groups) and transposed to (C / groups, groups).

    Raises:
        TypeError: x not a Tensor.
        ValueError: rank below 3, a non-positive ``groups``, or C not divisible by ``groups``.
    """
    x, g = _input(x, "channel_shuffle"), _factor(groups, "channel_shuffle", "groups")
    n, c, *rest = x.shape
    if c % g:
        raise ValueError(f"channel_shuffle: channels {c} must be divisible by groups {g}")
    out = F.reshape(x, (n, g, c // g) + tuple(rest))
    perm = (0, 2, 1) + tuple(range(3, 3 + len(rest)))
    return F.reshape(F.transpose(out, perm), tuple(x.shape))
