"""A float32 -> uint8 quantize with a per-channel scale (an int8 network's input) against numpy's formula,
and its schedule: vectors of float32 width within the innermost axis. With vectors of the uint8 output's
width (64 lanes on AVX-512) a 224-wide row held no whole vector, the vectors spanned rows, and each lane
divided its index to find its row and channel (a gather and a scatter per vector): 13x slower."""
import re

import numpy as np
import pytest

from aotnn import Parameter, Tensor, nn, ops
from default_schedule_helpers import lowered_kernels, scalarized_loops

PER_LANE_DIVISION = re.compile(r"Ramp\([^()]*\) (//|%)")

pytestmark = pytest.mark.usefixtures("cpu_target")  # vector widths depend on the ISA: pinned, both run

SHAPE = (1, 3, 224, 224)
SCALES = np.array([0.02, 0.03, 0.05], np.float32)
ZERO_POINT = 128


class Quantize(nn.Cell):
    def __init__(self):
        super().__init__()
        self.scale = Parameter(Tensor(SCALES), name="scale")

    def construct(self, x):
        return ops.int8_quantize(x, self.scale, ZERO_POINT, 0, 255, "uint8", 1)


def test_quantize_matches_numpy():
    x = np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32) * 3
    out = Quantize()(Tensor(x)).asnumpy()
    # round half to even (np.rint), as ONNX QuantizeLinear and MindSpore's fake quant do
    want = np.clip(np.rint(x / SCALES[None, :, None, None]) + ZERO_POINT, 0, 255).astype(np.uint8)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, want)
    assert 0.5 < np.mean((want > 0) & (want < 255))  # neither clamp hides most of the values


def test_quantize_vectors_stay_within_rows():
    lowered = lowered_kernels(lambda v: Quantize()(v), [("x", SHAPE, "float32")])
    quantize = [text for name, text in lowered.items() if "round" in name and "clip" in name]
    assert len(quantize) == 1, list(lowered)
    assert "Ramp(" in quantize[0], "not vectorized"
    assert scalarized_loops(quantize[0]) == [], scalarized_loops(quantize[0])
    assert not PER_LANE_DIVISION.search(quantize[0]), PER_LANE_DIVISION.search(quantize[0]).group(0)
