"""Calibration observers of post-training quantization: they watch a tensor's values over calibration
batches and answer the range ``(low, high)`` its quantization grid should cover."""
from __future__ import annotations

import numpy as np

__all__ = ["MinMaxObserver", "PercentileObserver", "MSEObserver", "create_observer"]


class MinMaxObserver:
    """The smallest and largest value seen, over all calibration batches.

    Args:
        per_channel (bool): one range per index of ``channel_axis``. Default: False.
        channel_axis (int): the channel axis when ``per_channel``. Default: 0.

    Examples:
        >>> observer = MinMaxObserver()
        >>> observer.update(np.array([-1.0, 3.0]))
        >>> observer.range()
        (array([-1.]), array([3.]))
    """

    def __init__(self, per_channel: bool = False, channel_axis: int = 0):
        self.per_channel, self.channel_axis = bool(per_channel), int(channel_axis)
        self.low: np.ndarray | None = None
        self.high: np.ndarray | None = None

    def _rows(self, values: np.ndarray) -> np.ndarray:
        """``values`` as (channels, -1), in their own type (one row when per tensor)."""
        values = np.asarray(values)
        if not self.per_channel:
            return values.reshape(1, -1)
        return np.moveaxis(values, self.channel_axis, 0).reshape(values.shape[self.channel_axis], -1)

    def update(self, values: np.ndarray) -> None:
        """Take one calibration batch's values into account.

        Raises:
            ValueError: ``values`` is empty, holds NaN or infinity, or changes its channel count.
        """
        rows = self._rows(values)
        if rows.size == 0:
            raise ValueError(f"values: expected a non-empty array, got shape {np.shape(values)}")
        # NaN propagates to min and max, and an infinity is one of them: checking them checks every value
        low, high = rows.min(axis=1).astype(np.float64), rows.max(axis=1).astype(np.float64)
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
            raise ValueError("values: expected finite calibration values, got NaN or infinity")
        if self.low is not None and self.low.shape != low.shape:
            raise ValueError(f"values: expected {self.low.shape[0]} channels as before, got {low.shape[0]}")
        self.low = low if self.low is None else np.minimum(self.low, low)
        self.high = high if self.high is None else np.maximum(self.high, high)

    def range(self) -> tuple[np.ndarray, np.ndarray]:
        """(low, high), one value per channel (one in all when per tensor).

        Raises:
            RuntimeError: no batch was observed.
        """
        if self.low is None:
            raise RuntimeError(f"{type(self).__name__}: no calibration batch was observed")
        return self.low.copy(), self.high.copy()


class PercentileObserver(MinMaxObserver):
    """The ``100 - percentile`` and ``percentile`` percentiles of the values seen (numpy's linear
    interpolation), which ignores the rare outliers that would stretch a min/max grid.

    Each batch keeps at most ``max_samples_per_batch`` of its values (evenly strided over the
    flattened batch) per channel; the percentiles are taken over everything kept, so below that
    size they are exactly numpy's over all calibration values.

    Args:
        percentile (float): in (50, 100]. Default: 99.99.
        per_channel (bool): one range per index of ``channel_axis``. Default: False.
        channel_axis (int): the channel axis when ``per_channel``. Default: 0.
        max_samples_per_batch (int): values kept per batch and channel. Default: 1 << 15.

    Raises:
        ValueError: ``percentile`` outside (50, 100] or ``max_samples_per_batch`` below 1.
    """

    def __init__(self, percentile: float = 99.99, per_channel: bool = False, channel_axis: int = 0,
                 max_samples_per_batch: int = 1 << 15):
        super().__init__(per_channel, channel_axis)
        if isinstance(percentile, bool) or not isinstance(percentile, (int, float)) or not 50 < percentile <= 100:
            raise ValueError(f"percentile: expected a number in (50, 100], got {percentile!r}")
        if isinstance(max_samples_per_batch, bool) or not isinstance(max_samples_per_batch, int) \
                or max_samples_per_batch < 1:
            raise ValueError(f"max_samples_per_batch: expected a positive int, got {max_samples_per_batch!r}")
        self.percentile = float(percentile)
        self.max_samples_per_batch = max_samples_per_batch
        self.samples: list[np.ndarray] = []

    def update(self, values: np.ndarray) -> None:
        super().update(values)
        rows = self._rows(values)
        stride = -(-rows.shape[1] // self.max_samples_per_batch)
        self.samples.append(rows[:, ::stride].astype(np.float32))  # calibration values are float32

    def range(self) -> tuple[np.ndarray, np.ndarray]:
        super().range()
        values = np.concatenate(self.samples, axis=1).astype(np.float64)
        low = np.percentile(values, 100.0 - self.percentile, axis=1)
        high = np.percentile(values, self.percentile, axis=1)
        return low, high


class MSEObserver(PercentileObserver):
    """The clipped range whose 8-bit asymmetric grid has the least mean squared quantization error on
    the values seen (kept as :class:`PercentileObserver` keeps them).

    The candidates are ``[a * low, a * high]`` for ``a`` in ``steps`` even fractions of 1 (``low`` and
    ``high`` the min and max seen, widened to hold 0); each value is rounded onto the candidate's grid of
    ``2 ** num_bits - 1`` steps with clipping, and the candidate of least squared error wins (the
    widest one on ties).

    Args:
        per_channel (bool): one range per index of ``channel_axis``. Default: False.
        channel_axis (int): the channel axis when ``per_channel``. Default: 0.
        num_bits (int): bits of the grid, 2 to 16. Default: 8.
        steps (int): candidate fractions, at least 1. Default: 100.
        max_samples_per_batch (int): values kept per batch and channel. Default: 1 << 15.

    Raises:
        ValueError: ``num_bits`` outside [2, 16], ``steps`` below 1 or ``max_samples_per_batch`` below 1.

    Examples:
        >>> observer = MSEObserver()
        >>> values = np.random.default_rng(0).standard_normal(100000)
        >>> observer.update(values)
        >>> observer.range()[1] < values.max()  # the rare tail values are clipped
        array([ True])
    """

    def __init__(self, per_channel: bool = False, channel_axis: int = 0, num_bits: int = 8, steps: int = 100,
                 max_samples_per_batch: int = 1 << 15):
        super().__init__(100.0, per_channel, channel_axis, max_samples_per_batch)
        for name, value, least, most in (("num_bits", num_bits, 2, 16), ("steps", steps, 1, 1 << 20)):
            if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
                raise ValueError(f"{name}: expected an int in [{least}, {most}], got {value!r}")
        self.levels, self.steps = (1 << num_bits) - 1, steps

    def range(self) -> tuple[np.ndarray, np.ndarray]:
        MinMaxObserver.range(self)
        values = np.concatenate(self.samples, axis=1).astype(np.float64)
        low, high = np.minimum(self.low, 0.0), np.maximum(self.high, 0.0)
        best = np.full(values.shape[0], np.inf)
        best_low, best_high = low.copy(), high.copy()
        for fraction in np.linspace(1.0, 1.0 / self.steps, self.steps):  # widest first: ties keep the wider
            lo, hi = fraction * low, fraction * high
            scale = np.where(hi - lo > 0, (hi - lo) / self.levels, 1.0)[:, None]
            zero_point = np.round(-lo[:, None] / scale)
            q = np.clip(np.round(values / scale) + zero_point, 0, self.levels)
            error = np.mean(((q - zero_point) * scale - values) ** 2, axis=1)
            better = error < best
            best = np.where(better, error, best)
            best_low, best_high = np.where(better, lo, best_low), np.where(better, hi, best_high)
        return best_low, best_high


def create_observer(kind: str, percentile: float = 99.99, per_channel: bool = False,
                    channel_axis: int = 0) -> MinMaxObserver:
    """A new observer: ``kind`` 'minmax', 'percentile' or 'mse'.

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "minmax":
        return MinMaxObserver(per_channel, channel_axis)
    if kind == "percentile":
        return PercentileObserver(percentile, per_channel, channel_axis)
    if kind == "mse":
        return MSEObserver(per_channel, channel_axis)
    raise ValueError(f"observer: expected 'minmax', 'percentile' or 'mse', got {kind!r}")
