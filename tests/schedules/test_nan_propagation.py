"""NaN and infinities through compiled models whose kernels carry the default schedules
(convolutions with a fused ReLU epilogue, pooling), against PyTorch (CPU)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
import tvm
from tvm import tirx

import aotnn
from aotnn import Tensor, nn
from schedules.nan_propagation import _expr

NAN, INF = np.nan, np.inf


class ConvReluPool(nn.Cell):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, pad_mode="same", has_bias=True)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, 2)

    def construct(self, x):
        return self.pool(self.relu(self.conv(x)))


def _reference(net: ConvReluPool, x: np.ndarray) -> np.ndarray:
    weight, bias = (torch.tensor(p.asnumpy()) for p in net.get_parameters())
    return F.max_pool2d(F.relu(F.conv2d(torch.tensor(x), weight, bias, padding=1)), 2).numpy()


@pytest.mark.parametrize("special", [NAN, INF, -INF])
@pytest.mark.parametrize("channels", [16, 32])
def test_conv_relu_maxpool_model_keeps_nan_and_inf(special, channels):
    aotnn.set_seed(5)
    net = ConvReluPool(channels)
    x = np.random.default_rng(channels).standard_normal((2, 3, 16, 16)).astype(np.float32)
    x[0, 1, 5, 6] = special      # one corrupted pixel: its 3x3 neighbourhood, then 2x2 pools
    x[1, :, 12:14, 0:2] = special  # a corrupted patch at the border (padding beside it)
    expected = _reference(net, x)
    assert not np.isfinite(expected).all() or special == -INF  # the case tests something
    actual = net(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, equal_nan=True)


def test_c_bundle_keeps_nan_and_inf(tmp_path):
    """A bundle for the embedded C runtime is compiled with the same pass."""
    from tests.schedules.test_embedded import _run_bundle
    aotnn.set_seed(6)
    net = ConvReluPool(16)
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    x[0, 0, 4, 4], x[0, 2, 10, 3], x[0, 1, 15, 15] = NAN, INF, -INF
    expected = _reference(net, x).ravel()
    assert np.isnan(expected).any()
    path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "bundle"), file_format="BUNDLE")
    actual = _run_bundle(path, [x], [])
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, equal_nan=True)


def test_lenet_artifact_propagates_a_nan_pixel(lenet_artifact):
    """The exported LeNet (conv+ReLU+maxpool twice, dense layers) run by aotnn_runtime."""
    import aotnn_runtime
    from tests.conftest import lenet_reference
    path, params, x, _ = lenet_artifact
    y = x.copy()
    y[0, 0, 3, 4] = NAN
    y[1, 0, 20, 20] = INF
    expected = lenet_reference(params, y)
    assert np.isnan(expected[0]).all()
    actual = aotnn_runtime.load(path).run(y)[0]
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, equal_nan=True)


def _load(name: str) -> tvm.ir.Expr:
    return tirx.BufferLoad(tirx.decl_buffer((4,), "float32", name=name), [tirx.const(0, "int32")])


def test_a_constant_operand_moves_first_at_no_cost():
    """ReLU's ``max(x, 0)`` becomes ``max(0, x)`` (``0 > x ? 0 : x`` keeps x's NaN), no NaN test."""
    x = _load("x")
    relu = _expr(tirx.Max(x, tirx.const(0.0, "float32")))
    assert isinstance(relu, tirx.Max) and isinstance(relu.a, tirx.FloatImm) and relu.b.same_as(x)
    clip = _expr(tirx.Min(tirx.Max(x, tirx.const(-1.0, "float32")), tirx.const(1.0, "float32")))
    assert isinstance(clip, tirx.Min) and isinstance(clip.a, tirx.FloatImm) and isinstance(clip.b, tirx.Max)


def test_integer_max_is_left_alone():
    i = tirx.Var("i", "int32")
    index = tirx.Max(i, tirx.const(0, "int32"))
    assert _expr(index).same_as(index)
