"""Layers against PyTorch's CPU functional ops (same weights) and numpy formulas."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(3)
RTOL, ATOL = 1e-5, 1e-5


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def randomise(cell):
    for param in cell.get_parameters():
        param.set_data(rand(*param.shape, scale=0.5))
    return cell


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array))


def close(actual, expected, rtol=RTOL, atol=ATOL):
    actual = actual.asnumpy()
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


def same_pads(size, kernel, stride, dilation=1):
    """TF-style 'same': output ceil(size / stride), the odd pixel padded at the end."""
    out = math.ceil(size / stride)
    needed = max(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - size)
    return needed // 2, needed - needed // 2


def pad_same(x, kernel, stride, dilation=(1, 1), value=0.0):
    top, bottom = same_pads(x.shape[2], kernel[0], stride[0], dilation[0])
    left, right = same_pads(x.shape[3], kernel[1], stride[1], dilation[1])
    return F.pad(x, (left, right, top, bottom), value=value)


# -- Dense ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("in_ch, out_ch, has_bias, activation, shape", [
    (8, 5, True, None, (4, 8)),
    (8, 5, False, None, (3, 8)),
    (6, 7, True, "relu", (5, 6)),
    (4, 3, True, None, (2, 3, 4)),
    (4, 3, True, "relu", (2, 2, 5, 4)),
])
def test_dense(in_ch, out_ch, has_bias, activation, shape):
    dense = randomise(nn.Dense(in_ch, out_ch, has_bias=has_bias, activation=activation))
    assert dense.weight.shape == (out_ch, in_ch)
    assert (dense.bias is not None) == has_bias
    x = rand(*shape)
    ref = F.linear(t(x), t(dense.weight.asnumpy()), t(dense.bias.asnumpy()) if has_bias else None)
    if activation == "relu":
        ref = F.relu(ref)
    close(dense(Tensor(x)), ref)


def test_dense_activation_cell_and_repr():
    dense = randomise(nn.Dense(3, 2, activation=nn.Softmax()))
    x = rand(4, 3)
    close(dense(Tensor(x)), torch.softmax(F.linear(t(x), t(dense.weight.asnumpy()), t(dense.bias.asnumpy())), -1))
    assert repr(nn.Dense(3, 2, has_bias=False)) == "Dense(input_channels=3, output_channels=2, has_bias=False)"
    with pytest.raises(KeyError):
        nn.Dense(3, 2, activation="nope")


def test_dense_rejects_bad_input():
    dense = nn.Dense(4, 2)
    with pytest.raises(ValueError):
        dense(Tensor(rand(3, 5)))
    with pytest.raises(ValueError):
        nn.Dense(0, 2)


# -- Conv2d ---------------------------------------------------------------------------------------
CONV_CASES = [
    # in, out, kernel, stride, pad_mode, padding, dilation, group, has_bias, input shape
    (3, 4, 3, 1, "same", 0, 1, 1, False, (2, 3, 9, 9)),
    (3, 5, (3, 2), 2, "same", 0, 1, 1, True, (2, 3, 10, 9)),     # odd padding goes at the end
    (3, 4, 4, 2, "same", 0, 1, 1, False, (1, 3, 8, 7)),
    (3, 6, 3, 1, "valid", 0, 1, 1, True, (2, 3, 8, 8)),
    (4, 4, 3, (2, 1), "valid", 0, 1, 1, False, (1, 4, 9, 8)),
    (3, 4, 3, 1, "pad", (1, 2, 0, 3), 1, 1, True, (2, 3, 7, 6)),
    (3, 4, 5, 2, "pad", 2, 1, 1, False, (1, 3, 11, 11)),
    (3, 4, 3, 1, "same", 0, 2, 1, False, (1, 3, 9, 10)),          # dilation 2
    (2, 4, 3, 1, "pad", 1, 2, 1, True, (1, 2, 8, 8)),
    (4, 6, 3, 1, "same", 0, 1, 2, True, (2, 4, 6, 6)),            # group 2
    (4, 8, 3, 2, "valid", 0, 1, 2, False, (1, 4, 9, 9)),
    (6, 6, 3, 1, "same", 0, 1, 6, False, (2, 6, 7, 7)),           # depthwise
    (3, 6, 3, 2, "pad", 1, 1, 3, True, (1, 3, 8, 8)),             # depthwise, multiplier 2
]


@pytest.mark.parametrize("in_ch, out_ch, kernel, stride, pad_mode, padding, dilation, group, has_bias, shape",
                         CONV_CASES)
def test_conv2d(in_ch, out_ch, kernel, stride, pad_mode, padding, dilation, group, has_bias, shape):
    conv = randomise(nn.Conv2d(in_ch, out_ch, kernel, stride=stride, pad_mode=pad_mode, padding=padding,
                               dilation=dilation, group=group, has_bias=has_bias))
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    assert conv.weight.shape == (out_ch, in_ch // group, kh, kw)
    x = rand(*shape)
    tx = t(x)
    if pad_mode == "same":
        tx = pad_same(tx, (kh, kw), (sh, sw), (dilation, dilation))
    elif pad_mode == "pad":
        top, bottom, left, right = (padding,) * 4 if isinstance(padding, int) else padding
        tx = F.pad(tx, (left, right, top, bottom))
    ref = F.conv2d(tx, t(conv.weight.asnumpy()), t(conv.bias.asnumpy()) if has_bias else None,
                   stride=(sh, sw), dilation=dilation, groups=group)
    if pad_mode == "same":
        assert ref.shape[2:] == (math.ceil(shape[2] / sh), math.ceil(shape[3] / sw))
    close(conv(Tensor(x)), ref, rtol=1e-5, atol=1e-4)


def test_conv2d_defaults():
    conv = nn.Conv2d(2, 3, 3)
    assert conv.pad_mode == "same" and conv.has_bias is False and conv.bias is None
    assert conv.stride == (1, 1) and conv.dilation == (1, 1) and conv.group == 1


def test_conv2d_rejects_bad_input_and_arguments():
    conv = nn.Conv2d(3, 4, 3)
    with pytest.raises(ValueError):
        conv(Tensor(rand(3, 8, 8)))            # rank 3
    with pytest.raises(ValueError):
        conv(Tensor(rand(1, 2, 8, 8)))         # 2 channels, expects 3
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, pad_mode="same", padding=1)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, group=2)
    with pytest.raises(ValueError):
        nn.Conv2d(3, 4, 3, pad_mode="full")


# -- pooling ----------------------------------------------------------------------------------------
POOL_CASES = [
    # kernel, stride, pad_mode, input shape
    (2, 2, "valid", (2, 3, 8, 8)),
    (3, 2, "valid", (1, 2, 9, 7)),
    ((2, 3), (1, 2), "valid", (1, 2, 6, 9)),
    (3, 2, "same", (2, 3, 8, 8)),       # needs 1 pixel: at the end
    (3, 2, "same", (1, 2, 7, 9)),
    (2, 2, "same", (1, 2, 7, 5)),       # odd sizes: one extra row/column at the end
    (3, 1, "same", (1, 2, 5, 6)),
    ((3, 2), (2, 3), "same", (1, 2, 8, 10)),
]


@pytest.mark.parametrize("kernel, stride, pad_mode, shape", POOL_CASES)
def test_max_pool2d(kernel, stride, pad_mode, shape):
    pool = nn.MaxPool2d(kernel_size=kernel, stride=stride, pad_mode=pad_mode)
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    s = (stride, stride) if isinstance(stride, int) else stride
    x = rand(*shape)
    tx = t(x)
    if pad_mode == "same":
        tx = pad_same(tx, k, s, value=-math.inf)
    close(pool(Tensor(x)), F.max_pool2d(tx, k, s))


@pytest.mark.parametrize("kernel, stride, pad_mode, shape", POOL_CASES)
def test_avg_pool2d(kernel, stride, pad_mode, shape):
    pool = nn.AvgPool2d(kernel_size=kernel, stride=stride, pad_mode=pad_mode)
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    s = (stride, stride) if isinstance(stride, int) else stride
    x = rand(*shape)
    if pad_mode == "valid":
        ref = F.avg_pool2d(t(x), k, s)
    else:  # 'same' leaves the padding out of each average: window sum / number of real elements
        total = F.avg_pool2d(pad_same(t(x), k, s), k, s) * (k[0] * k[1])
        count = F.avg_pool2d(pad_same(torch.ones_like(t(x)), k, s), k, s) * (k[0] * k[1])
        ref = total / count
    close(pool(Tensor(x)), ref, rtol=1e-5, atol=1e-6)


def test_pool_defaults_and_errors():
    pool = nn.MaxPool2d()
    assert pool.kernel_size == (1, 1) and pool.stride == (1, 1) and pool.pad_mode == "valid"
    x = rand(1, 2, 3, 3)
    close(pool(Tensor(x)), x)
    close(nn.AvgPool2d()(Tensor(x)), x)
    # (C, H, W) input pools like (1, C, H, W), as in MindSpore 2.x
    x3 = rand(2, 8, 8)
    close(nn.MaxPool2d(2, 2)(Tensor(x3)), F.max_pool2d(t(x3)[None], 2, 2)[0])
    with pytest.raises(ValueError):
        nn.MaxPool2d(2)(Tensor(rand(8, 8)))
    with pytest.raises(ValueError):
        nn.AvgPool2d(2)(Tensor(rand(1, 1, 2, 8, 8)))
    with pytest.raises(ValueError):
        nn.MaxPool2d(2, pad_mode="full")
    assert repr(nn.MaxPool2d(2, 2)) == "MaxPool2d(kernel_size=(2, 2), stride=(2, 2), pad_mode=VALID)"


# -- activations and reshaping --------------------------------------------------------------------
def test_relu():
    x = rand(2, 3, 4, 5)
    close(nn.ReLU()(Tensor(x)), F.relu(t(x)))
    x2 = rand(7)
    close(nn.ReLU()(Tensor(x2)), F.relu(t(x2)))


def test_flatten():
    x = rand(2, 3, 4, 5)
    close(nn.Flatten()(Tensor(x)), x.reshape(2, 60))
    x3 = rand(4, 6, 2)
    close(nn.Flatten()(Tensor(x3)), x3.reshape(4, 12))


@pytest.mark.parametrize("axis, shape", [(-1, (3, 7)), (1, (2, 4, 3)), (0, (5, 2)), ((-1,), (2, 3, 4))])
def test_softmax(axis, shape):
    x = rand(*shape, scale=3.0)
    ax = axis[0] if isinstance(axis, tuple) else axis
    close(nn.Softmax(axis)(Tensor(x)), torch.softmax(t(x), ax), rtol=1e-5, atol=1e-6)


# -- BatchNorm2d ---------------------------------------------------------------------------------------
def make_bn(channels, eps=1e-5, momentum=0.9):
    bn = nn.BatchNorm2d(channels, eps=eps, momentum=momentum)
    bn.gamma.set_data(rand(channels) + 1.0)
    bn.beta.set_data(rand(channels))
    bn.moving_mean.set_data(rand(channels))
    bn.moving_variance.set_data(np.abs(rand(channels)) + 0.5)
    return bn


@pytest.mark.parametrize("channels, eps, shape", [(3, 1e-5, (2, 3, 5, 5)), (8, 1e-3, (4, 8, 3, 2))])
def test_batchnorm2d_inference(channels, eps, shape):
    bn = make_bn(channels, eps)
    x = rand(*shape, scale=2.0) + 0.5
    g, b = bn.gamma.asnumpy(), bn.beta.asnumpy()
    m, v = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    view = (1, -1, 1, 1)
    ref = (x - m.reshape(view)) / np.sqrt(v.reshape(view) + eps) * g.reshape(view) + b.reshape(view)
    out = bn(Tensor(x))
    close(out, ref.astype(np.float32), rtol=1e-5, atol=1e-5)
    close(out, F.batch_norm(t(x), t(m), t(v), t(g), t(b), training=False, eps=eps), rtol=1e-5, atol=1e-5)
    # inference leaves the moving statistics alone
    np.testing.assert_array_equal(bn.moving_mean.asnumpy(), m)
    np.testing.assert_array_equal(bn.moving_variance.asnumpy(), v)


@pytest.mark.parametrize("channels, momentum, shape", [(3, 0.9, (4, 3, 5, 5)), (6, 0.7, (2, 6, 3, 4))])
def test_batchnorm2d_training(channels, momentum, shape):
    bn = make_bn(channels, 1e-5, momentum)
    bn.set_train()
    g, b = bn.gamma.asnumpy(), bn.beta.asnumpy()
    m0, v0 = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    x = rand(*shape, scale=2.0) + 1.0
    out = bn(Tensor(x))
    # PyTorch's running stats use the same rule with momentum' = 1 - momentum
    rm, rv = t(m0.copy()), t(v0.copy())
    ref = F.batch_norm(t(x), rm, rv, t(g), t(b), training=True, momentum=1 - momentum, eps=1e-5)
    close(out, ref, rtol=1e-4, atol=1e-5)
    # numpy: moving = momentum * moving + (1 - momentum) * batch, unbiased batch variance
    n = x.size // channels
    mean = x.mean(axis=(0, 2, 3))
    var_unbiased = x.var(axis=(0, 2, 3)) * n / (n - 1)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), momentum * m0 + (1 - momentum) * mean, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), momentum * v0 + (1 - momentum) * var_unbiased,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), rm.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.asnumpy(), rv.numpy(), rtol=1e-5, atol=1e-6)
    # a second step updates again from the new values
    m1, v1 = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    x2 = rand(*shape)
    bn(Tensor(x2))
    np.testing.assert_allclose(bn.moving_mean.asnumpy(), momentum * m1 + (1 - momentum) * x2.mean(axis=(0, 2, 3)),
                               rtol=1e-5, atol=1e-6)
    # back in inference mode the updated moving statistics are used
    bn.set_train(False)
    m2, v2 = bn.moving_mean.asnumpy(), bn.moving_variance.asnumpy()
    close(bn(Tensor(x)), F.batch_norm(t(x), t(m2), t(v2), t(g), t(b), training=False, eps=1e-5))


def test_batchnorm2d_rejects_bad_input():
    bn = nn.BatchNorm2d(3)
    with pytest.raises(ValueError):
        bn(Tensor(rand(2, 4, 3, 3)))
    with pytest.raises(ValueError):
        bn(Tensor(rand(2, 3, 3)))
    with pytest.raises(ValueError):
        nn.BatchNorm2d(3, momentum=1.5)
