"""Pooling of int8/uint8 tensors against numpy: averages from exact sums rounded half to even, maxima."""
import numpy as np
import pytest

from aotnn import Tensor, nn

RNG = np.random.default_rng(28)


def _windows(x, kernel, stride, pads, fill):
    """(N, C, OH, OW, kh*kw) windows of NCHW ``x`` padded with ``fill`` (NaN marks padding)."""
    (top, bottom), (left, right) = pads
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    n, c, h, w = padded.shape
    oh, ow = (h - kernel) // stride + 1, (w - kernel) // stride + 1
    out = np.empty((n, c, oh, ow, kernel * kernel))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = padded[:, :, i * stride:i * stride + kernel, j * stride:j * stride + kernel].reshape(
                n, c, -1)
    return out


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("data_format", ["NCHW", "NHWC"])
def test_avg_pool_of_8_bit_values_rounds_exact_average_half_to_even(dtype, data_format):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max + 1, (2, 16, 6, 6)).astype(dtype)
    x[0, 0] = info.max  # sums far past 8 bits
    x[0, 1] = info.min
    x[0, 2, :2, :2] = np.array([[0, 1], [0, 1]], dtype)  # 2 / 4 = 0.5 -> 0 (half to even)
    x[0, 2, :2, 2:4] = np.array([[1, 2], [1, 2]], dtype)  # 6 / 4 = 1.5 -> 2
    cell = nn.AvgPool2d(2, 2, data_format=data_format)
    feed = x if data_format == "NCHW" else x.transpose(0, 2, 3, 1)
    got = cell(Tensor(np.ascontiguousarray(feed))).asnumpy()
    got = got if data_format == "NCHW" else got.transpose(0, 3, 1, 2)
    expected = np.rint(_windows(x, 2, 2, ((0, 0), (0, 0)), 0).mean(axis=-1)).astype(dtype)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, expected)
    assert got[0, 2, 0, 0] == 0 and got[0, 2, 0, 1] == 2


def test_avg_pool_same_padding_leaves_padding_out_of_the_count():
    x = RNG.integers(0, 256, (1, 4, 5, 5)).astype(np.uint8)
    got = nn.AvgPool2d(3, 2, pad_mode="same")(Tensor(x)).asnumpy()
    windows = _windows(x, 3, 2, ((1, 1), (1, 1)), np.nan)
    expected = np.rint(np.nanmean(windows, axis=-1)).astype(np.uint8)
    np.testing.assert_array_equal(got, expected)


def test_max_pool_of_int8_nhwc():
    x = RNG.integers(-128, 128, (1, 7, 7, 32)).astype(np.int8)
    got = nn.MaxPool2d(3, 2, pad_mode="same", data_format="NHWC")(Tensor(x)).asnumpy()
    windows = _windows(x.transpose(0, 3, 1, 2), 3, 2, ((1, 1), (1, 1)), -np.inf)
    np.testing.assert_array_equal(got.transpose(0, 3, 1, 2), windows.max(axis=-1).astype(np.int8))


def test_global_avg_pool_rule_of_uint8():
    """The global_avg_pool2d lowering rule (ONNX export's GlobalAveragePool) on uint8, ties included."""
    from aotnn.ops._dispatch import apply

    x = RNG.integers(200, 256, (2, 3, 4, 4)).astype(np.uint8)
    x[0, 0] = 0
    x[0, 0, 0, :2] = 1  # 2 / 16 -> 0.125 -> 0
    x[0, 1] = np.repeat([[8], [9]], 8).reshape(4, 4)  # 136 / 16 = 8.5 -> 8 (half to even)
    got = apply("global_avg_pool2d", Tensor(x), True).asnumpy()
    expected = np.rint(x.astype(np.float64).mean(axis=(2, 3), keepdims=True)).astype(np.uint8)
    assert got[0, 1, 0, 0] == 8
    np.testing.assert_array_equal(got, expected)
