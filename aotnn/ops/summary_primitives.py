"""Summary primitives (``ops.ScalarSummary``, ``ImageSummary``, ``TensorSummary``, ``HistogramSummary``).

MindSpore records their values to a summary file through a SummaryCollector; aotnn has no summary writer,
so they are accepted in ``construct`` and record nothing.
"""
from __future__ import annotations

from ..common.tensor import Tensor
from .primitives import Primitive

__all__ = ['ScalarSummary', 'ImageSummary', 'TensorSummary', 'HistogramSummary']


class _Summary(Primitive):
    def __call__(self, name, value):
        if not isinstance(name, str):
            raise TypeError(f"{self.name}: name must be a str, got {type(name).__name__}")
        if not isinstance(value, Tensor):
            raise TypeError(f"{self.name}: value must be a Tensor, got {type(value).__name__}")


ScalarSummary = type("ScalarSummary", (_Summary,), {"__doc__": "``ops.ScalarSummary()(name, value)``: records nothing."})
ImageSummary = type("ImageSummary", (_Summary,), {"__doc__": "``ops.ImageSummary()(name, value)``: records nothing."})
TensorSummary = type("TensorSummary", (_Summary,), {"__doc__": "``ops.TensorSummary()(name, value)``: records nothing."})
HistogramSummary = type("HistogramSummary", (_Summary,),
                        {"__doc__": "``ops.HistogramSummary()(name, value)``: records nothing."})
