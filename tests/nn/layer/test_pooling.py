"""Pooling layers against PyTorch's CPU pooling (and numpy where MindSpore's rules differ from PyTorch's)."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def close(actual, expected, rtol=1e-5, atol=1e-5):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.asnumpy().astype(np.float32), expected, rtol=rtol, atol=atol)


def same_pads(size, kernel, stride):
    needed = max(0, (math.ceil(size / stride) - 1) * stride + kernel - size)
    return needed // 2, needed - needed // 2


def avg_same_ref(x, k, s):
    """'same' average: window sum over the real elements / their count (the padding is left out)."""
    (top, bottom), (left, right) = same_pads(x.shape[-2], k[0], s[0]), same_pads(x.shape[-1], k[1], s[1])
    total = F.avg_pool2d(F.pad(t(x), (left, right, top, bottom)), k, s) * (k[0] * k[1])
    count = F.avg_pool2d(F.pad(torch.ones_like(t(x)), (left, right, top, bottom)), k, s) * (k[0] * k[1])
    return total / count


# -- MaxPool1d / AvgPool1d --------------------------------------------------------------------------
def test_max_pool1d_valid_and_same():
    x = rand(2, 3, 9)
    close(nn.MaxPool1d(3, 2)(Tensor(x)), F.max_pool1d(t(x), 3, 2))
    left, right = same_pads(9, 4, 2)
    close(nn.MaxPool1d(4, 2, "SAME")(Tensor(x)), F.max_pool1d(F.pad(t(x), (left, right), value=-math.inf), 4, 2))


def test_max_pool1d_pad_dilation_ceil_indices():
    x = rand(2, 3, 9)
    pool = nn.MaxPool1d(3, 2, "pad", padding=1, dilation=2, return_indices=True, ceil_mode=True)
    values, indices = pool(Tensor(x))
    ref_values, ref_indices = F.max_pool1d(t(x), 3, 2, 1, dilation=2, ceil_mode=True, return_indices=True)
    close(values, ref_values)
    assert indices.dtype == ms.int64 and (indices.asnumpy() == ref_indices.numpy()).all()
    close(nn.MaxPool1d(3, 2, "pad", 1)(Tensor(x[0])), F.max_pool1d(t(x[0]), 3, 2, 1))     # (C, L) input


def test_avg_pool1d():
    x = rand(2, 3, 10)
    close(nn.AvgPool1d(4, 3)(Tensor(x)), F.avg_pool1d(t(x), 4, 3))
    close(nn.AvgPool1d(4, 3, "same")(Tensor(x)), avg_same_ref(x[:, :, None], (1, 4), (1, 3))[:, :, 0])
    close(nn.AvgPool1d(4, 3, "pad", 2, ceil_mode=True)(Tensor(x)), F.avg_pool1d(t(x), 4, 3, 2, ceil_mode=True))
    close(nn.AvgPool1d(4, 3, "pad", 2, count_include_pad=False)(Tensor(x)),
          F.avg_pool1d(t(x), 4, 3, 2, count_include_pad=False))


def test_pool1d_doc_examples():
    x = Tensor(np.random.randint(0, 10, [1, 3, 6]), ms.float32)
    assert nn.AvgPool1d(kernel_size=6, stride=1)(x).shape == (1, 3, 1)
    assert nn.MaxPool1d(kernel_size=3, stride=1)(Tensor(np.random.randint(0, 10, [1, 2, 4]), ms.float32)).shape \
        == (1, 2, 2)
    out = nn.MaxPool1d(kernel_size=2, stride=1, pad_mode="pad", padding=1, dilation=1, return_indices=True)(
        Tensor(np.random.randint(0, 10, [5, 3, 4]), ms.float32))
    assert out[0].shape == (5, 3, 5) and out[1].shape == (5, 3, 5)


# -- MaxPool2d / AvgPool2d (valid/same NCHW cases live in tests/nn/test_layers.py) -------------------
@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", [
    (3, 2, 1, 1, True),
    ((2, 3), (2, 1), (1, 0), (2, 1), False),
])
def test_max_pool2d_pad_mode_with_indices(kernel, stride, padding, dilation, ceil_mode):
    pool = nn.MaxPool2d(kernel, stride, "pad", padding, dilation, True, ceil_mode)
    x = rand(2, 3, 9, 8)
    values, indices = pool(Tensor(x))
    ref_values, ref_indices = F.max_pool2d(t(x), kernel, stride, padding, dilation, ceil_mode=ceil_mode,
                                           return_indices=True)
    close(values, ref_values)
    assert (indices.asnumpy() == ref_indices.numpy()).all()


def test_max_pool2d_3d_input_and_nhwc():
    x = rand(3, 9, 8)
    close(nn.MaxPool2d(3, 2, "pad", 1)(Tensor(x)), F.max_pool2d(t(x)[None], 3, 2, 1)[0])
    x = rand(2, 7, 6, 3)
    (top, bottom), (left, right) = same_pads(7, 3, 2), same_pads(6, 3, 2)
    ref = F.max_pool2d(F.pad(t(x.transpose(0, 3, 1, 2)), (left, right, top, bottom), value=-math.inf), 3, 2)
    close(nn.MaxPool2d(3, 2, "same", "NHWC")(Tensor(x)), ref.permute(0, 2, 3, 1))


@pytest.mark.parametrize("kernel, stride, padding, ceil_mode, count_include_pad, divisor", [
    (3, 2, 1, True, True, None),       # ceil-mode windows count the padding but not the room past it
    (3, 2, 1, False, False, None),
    ((3, 2), (2, 3), (1, 1), True, True, 5),
])
def test_avg_pool2d_pad_mode(kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    pool = nn.AvgPool2d(kernel, stride, "pad", padding, ceil_mode, count_include_pad, divisor)
    x = rand(2, 3, 8, 9)
    ref = F.avg_pool2d(t(x), kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    close(pool(Tensor(x)), ref)


def test_avg_pool2d_valid_ceil_and_same_nhwc():
    x = rand(1, 2, 7, 8)
    close(nn.AvgPool2d(3, 2, ceil_mode=True)(Tensor(x)), F.avg_pool2d(t(x), 3, 2, ceil_mode=True))
    xh = x.transpose(0, 2, 3, 1)
    out = nn.AvgPool2d(3, 2, "same", data_format="NHWC")(Tensor(xh))
    close(out, avg_same_ref(x, (3, 3), (2, 2)).permute(0, 2, 3, 1))


def test_avg_pool2d_seed_orders_and_float16():
    x = rand(2, 3, 8, 8)
    close(nn.AvgPool2d(2, 2, "valid", "NCHW")(Tensor(x)), F.avg_pool2d(t(x), 2, 2))   # seed 000's order
    close(nn.AvgPool2d(4, 1, "pad", 2)(Tensor(x)), F.avg_pool2d(t(x), 4, 1, 2))         # MindSpore 2.x's order
    x16 = x.astype(np.float16)
    out = nn.AvgPool2d(3, 2, "same")(Tensor(x16))
    assert out.dtype == ms.float16
    close(out, avg_same_ref(x16.astype(np.float32), (3, 3), (2, 2)), rtol=1e-2, atol=1e-2)
    out = nn.MaxPool2d(2, 2)(Tensor(x16))
    assert out.dtype == ms.float16
    close(out, F.max_pool2d(t(x16), 2, 2), rtol=1e-3, atol=1e-3)


def test_pool_defaults_and_repr():
    pool = nn.AvgPool2d()
    assert pool.kernel_size == (1, 1) and pool.stride == (1, 1) and pool.pad_mode == "valid"
    assert pool.count_include_pad is True and pool.data_format == "NCHW"
    assert repr(nn.MaxPool1d(3, 2)) == "MaxPool1d(kernel_size=(1, 3), stride=(1, 2), pad_mode=VALID)"


# -- adaptive pooling --------------------------------------------------------------------------------
def test_adaptive_pool1d():
    x = rand(2, 3, 12)
    close(nn.AdaptiveAvgPool1d(4)(Tensor(x)), F.adaptive_avg_pool1d(t(x), 4))
    close(nn.AdaptiveMaxPool1d(3)(Tensor(x)), F.adaptive_max_pool1d(t(x), 3))
    with pytest.raises(ValueError):
        nn.AdaptiveAvgPool1d(5)(Tensor(x))              # 12 is not a multiple of 5
    with pytest.raises(ValueError):
        nn.AdaptiveMaxPool1d(24)(Tensor(x))
    with pytest.raises(TypeError):
        nn.AdaptiveAvgPool1d(4)(Tensor(x.astype(np.int32)))


@pytest.mark.parametrize("shape, output_size, expected", [
    ((2, 3, 8, 6), (4, 3), (4, 3)),        # equal windows
    ((2, 3, 7, 10), (3, 4), (3, 4)),       # overlapping windows
    ((3, 7, 5), (None, 2), (7, 2)),        # (C, H, W) input, None keeps H
])
def test_adaptive_avg_pool2d(shape, output_size, expected):
    x = rand(*shape)
    out = nn.AdaptiveAvgPool2d(output_size)(Tensor(x))
    ref = F.adaptive_avg_pool2d(t(x), expected)
    close(out, ref)


def test_adaptive_avg_pool2d_float16():
    x = rand(1, 2, 7, 9, dtype=np.float16)
    out = nn.AdaptiveAvgPool2d(4)(Tensor(x))
    assert out.dtype == ms.float16
    close(out, F.adaptive_avg_pool2d(t(x), 4), rtol=1e-2, atol=1e-2)


def test_adaptive_avg_pool3d():
    x = rand(2, 3, 5, 6, 7)
    close(nn.AdaptiveAvgPool3d((3, 3, 4))(Tensor(x)), F.adaptive_avg_pool3d(t(x), (3, 3, 4)))
    close(nn.AdaptiveAvgPool3d((None, 2, 7))(Tensor(x[0])), F.adaptive_avg_pool3d(t(x[0]), (5, 2, 7)))


@pytest.mark.parametrize("shape, output_size, expected", [
    ((2, 3, 7, 10), (3, 4), (3, 4)),
    ((2, 3, 8, 6), 2, (2, 2)),
])
def test_adaptive_max_pool2d_with_indices(shape, output_size, expected):
    x = rand(*shape)
    values, indices = nn.AdaptiveMaxPool2d(output_size, return_indices=True)(Tensor(x))
    ref_values, ref_indices = F.adaptive_max_pool2d(t(x), expected, return_indices=True)
    close(values, ref_values)
    assert indices.dtype == ms.int64 and (indices.asnumpy() == ref_indices.numpy()).all()
    close(nn.AdaptiveMaxPool2d(output_size)(Tensor(x)), ref_values)


def test_adaptive_max_pool2d_doc_example():
    x = Tensor(np.tile(np.arange(1, 10, dtype=np.float32).reshape(3, 3), (1, 3, 1, 1)))
    out = nn.AdaptiveMaxPool2d((None, 2))(x)
    np.testing.assert_array_equal(out.asnumpy(), np.tile([[2, 3], [5, 6], [8, 9]], (1, 3, 1, 1)))
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2d(2)(x).asnumpy(), np.tile([[5, 6], [8, 9]], (1, 3, 1, 1)))
    np.testing.assert_array_equal(nn.AdaptiveMaxPool2d((1, 2))(x).asnumpy(), np.tile([[8, 9]], (1, 3, 1, 1)))


# -- argument checks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error", [
    (lambda: nn.MaxPool2d(1.5), TypeError),
    (lambda: nn.MaxPool2d(0), ValueError),
    (lambda: nn.MaxPool2d(2, pad_mode="full"), ValueError),
    (lambda: nn.MaxPool2d(2, data_format="NCDHW"), ValueError),
    (lambda: nn.MaxPool2d(2, padding=1), ValueError),                    # padding needs 'pad'
    (lambda: nn.MaxPool2d(2, ceil_mode=True), ValueError),
    (lambda: nn.MaxPool2d(2, pad_mode="pad", padding=(1, 1, 1)), ValueError),
    (lambda: nn.MaxPool2d(2, pad_mode="pad", data_format="NHWC"), ValueError),
    (lambda: nn.MaxPool1d((2, 2)), TypeError),
    (lambda: nn.AvgPool1d(2, 1.0), TypeError),
    (lambda: nn.AvgPool2d(2, divisor_override=0), ValueError),
    (lambda: nn.AvgPool2d(2, pad_mode="pad", data_format="NHWC"), ValueError),
    (lambda: nn.AvgPool2d(2, count_include_pad=1), TypeError),
    (lambda: nn.AdaptiveAvgPool1d(0), ValueError),
    (lambda: nn.AdaptiveAvgPool1d(2.0), TypeError),
    (lambda: nn.AdaptiveAvgPool2d((2, 2, 2)), ValueError),
    (lambda: nn.AdaptiveAvgPool3d((2, "a", 2)), TypeError),
    (lambda: nn.AdaptiveMaxPool2d(2, return_indices=1), TypeError),
])
def test_bad_arguments(make, error):
    with pytest.raises(error):
        make()


def test_bad_inputs():
    with pytest.raises(ValueError):
        nn.MaxPool2d(2)(Tensor(rand(8, 8)))
    with pytest.raises(ValueError):
        nn.AvgPool1d(2)(Tensor(rand(1, 2, 3, 8)))
    with pytest.raises(ValueError):
        nn.AdaptiveAvgPool2d(2)(Tensor(rand(8, 8)))
    with pytest.raises(TypeError):
        nn.AdaptiveMaxPool2d(2)(Tensor(rand(1, 8, 8).astype(np.int32)))
