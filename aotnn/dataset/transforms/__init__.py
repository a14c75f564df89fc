"""``mindspore.dataset.transforms``: Compose, TypeCast, OneHot and Duplicate in numpy; other names are stubs
that raise NotImplementedError."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._stub import unimplemented


class Compose:
    """Apply ``transforms`` one after the other.

    Raises:
        TypeError: an entry is not callable.
    """

    def __init__(self, transforms: list):
        for t in transforms:
            if not callable(t):
                raise TypeError(f"Compose: transforms must be callable, got {type(t).__name__}")
        self.transforms = list(transforms)

    def __call__(self, *values: Any):
        for t in self.transforms:
            result = t(*values)
            values = result if isinstance(result, tuple) else (result,)
        return values[0] if len(values) == 1 else values


class TypeCast:
    """Cast to ``data_type`` (a mindspore dtype or numpy dtype)."""

    def __init__(self, data_type: Any):
        from ...common import dtype as mstype
        self.dtype = mstype.to_numpy(data_type) if not isinstance(data_type, (type, np.dtype, str)) \
            else np.dtype(data_type)

    def __call__(self, value):
        return np.asarray(value).astype(self.dtype)


class OneHot:
    """Integer labels -> one-hot rows of ``num_classes`` (``smoothing_rate`` spread over the others).

    Raises:
        ValueError: ``num_classes`` < 1 or a label outside [0, num_classes).
    """

    def __init__(self, num_classes: int, smoothing_rate: float = 0.0):
        if not isinstance(num_classes, int) or num_classes < 1:
            raise ValueError(f"OneHot: num_classes must be an int >= 1, got {num_classes!r}")
        self.num_classes, self.smoothing_rate = num_classes, float(smoothing_rate)

    def __call__(self, label):
        label = np.asarray(label)
        if label.size and (label.min() < 0 or label.max() >= self.num_classes):
            raise ValueError(f"OneHot: labels must be in [0, {self.num_classes}), got {label.min()}..{label.max()}")
        hot = np.eye(self.num_classes, dtype=label.dtype if label.dtype.kind == "f" else np.int32)[label]
        if self.smoothing_rate:
            hot = hot.astype(np.float32) * (1 - self.smoothing_rate) + self.smoothing_rate / self.num_classes
        return hot


class Duplicate:
    """One column in, the same value twice out."""

    def __call__(self, value):
        return value, np.array(value, copy=True)


for _name in ("Concatenate", "Fill", "Mask", "PadEnd", "RandomApply", "RandomChoice", "RandomOrder", "Slice",
              "Unique", "Plugin"):
    globals()[_name] = unimplemented(_name, "mindspore.dataset.transforms")
del _name


__all__ = [_n for _n in dir() if not _n.startswith("_") and _n[0].isupper()]
