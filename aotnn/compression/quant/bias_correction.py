"""Bias correction of post-training quantization (Nagel et al. 2019, "Data-Free Quantization", section
4.2, with the input statistics measured on the calibration set instead of predicted from BatchNorm).

Rounding a layer's weights to int8 changes its output by ``(W_q - W) x``, whose mean over the inputs,
``(W_q - W) E[x]``, is a per-output-channel shift that the following layers see as a bias error on
every input (rounding errors of single values average out; this one does not). Subtracting it from the
layer's bias removes it. ``E[x]`` is the mean of the layer's input per channel over the calibration
batches (and, for a convolution, over the positions: the border positions, which also see the zero
padding, are treated as the inner ones).
"""
from __future__ import annotations

import numpy as np

__all__ = ["ChannelMeans", "weight_rounding_shift"]


class ChannelMeans:
    """Running per-channel means (axis 1) of named tensors over calibration batches.

    Examples:
        >>> means = ChannelMeans()
        >>> means.update("conv", np.ones((2, 3, 4, 4)))
        >>> means["conv"]
        array([1., 1., 1.])
    """

    def __init__(self):
        self._sums: dict[str, np.ndarray] = {}
        self._counts: dict[str, int] = {}

    def update(self, name: str, values: np.ndarray | None) -> None:
        """Take one batch of ``name``'s values, shape (N, C, ...), into account (None is skipped).

        Raises:
            ValueError: ``values`` has fewer than 2 dimensions or changes its channel count.
        """
        if values is None:
            return
        values = np.asarray(values)
        if values.ndim < 2:
            raise ValueError(f"values: expected (N, C, ...) for {name!r}, got shape {values.shape}")
        axes = (0,) + tuple(range(2, values.ndim))
        total = values.astype(np.float64).sum(axis=axes)
        if name in self._sums and self._sums[name].shape != total.shape:
            raise ValueError(f"values: expected {self._sums[name].shape[0]} channels for {name!r} as before, "
                             f"got {total.shape[0]}")
        self._sums[name] = self._sums.get(name, 0.0) + total
        self._counts[name] = self._counts.get(name, 0) + values.size // values.shape[1]

    def __contains__(self, name: str) -> bool:
        return name in self._sums

    def __getitem__(self, name: str) -> np.ndarray:
        return self._sums[name] / self._counts[name]


def weight_rounding_shift(weight: np.ndarray, quantized: np.ndarray, input_mean: np.ndarray,
                          group: int = 1) -> np.ndarray:
    """``(W_q - W) E[x]`` per output channel: the mean output shift that rounding the weights causes.

    Args:
        weight (numpy.ndarray): the float weight, (out, in / group, ...) (a convolution's) or (out, in).
        quantized (numpy.ndarray): the same weight after quantization (dequantized back to real values).
        input_mean (numpy.ndarray): the mean of the layer's input per input channel, (in,).
        group (int): the convolution's groups. Default: 1.

    Returns:
        numpy.ndarray: the shift, (out,); subtract it from the bias.

    Raises:
        ValueError: shapes that do not fit together.
    """
    weight, quantized = np.asarray(weight, np.float64), np.asarray(quantized, np.float64)
    input_mean = np.asarray(input_mean, np.float64).reshape(-1)
    if weight.shape != quantized.shape or weight.ndim < 2:
        raise ValueError(f"quantized: expected the weight's shape {weight.shape} (at least 2-D), got {quantized.shape}")
    out_channels, group_in = weight.shape[0], weight.shape[1]
    if group < 1 or out_channels % group or input_mean.shape[0] != group_in * group:
        raise ValueError(f"input_mean: expected {group_in * group} channels (weight {weight.shape}, group {group}), "
                         f"got {input_mean.shape[0]}")
    error = (quantized - weight).reshape(out_channels, group_in, -1).sum(axis=2)  # (out, in / group)
    means = input_mean.reshape(group, group_in)[np.arange(out_channels) // (out_channels // group)]
    return np.sum(error * means, axis=1)
