"""Convolution layers against PyTorch's CPU functional convolutions with the same weights."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def randomise(cell, dtype=np.float32):
    for param in cell.get_parameters():
        param.set_data(rand(*param.shape, dtype=dtype) * 0.5)
    return cell


def t(array):
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def close(actual, expected, rtol=1e-5, atol=1e-4):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.asnumpy().astype(np.float32), expected, rtol=rtol, atol=atol)


def same_pads(size, kernel, stride, dilation):
    """TF-style 'same': output ceil(size / stride), the odd pixel padded at the end."""
    needed = max(0, (math.ceil(size / stride) - 1) * stride + (kernel - 1) * dilation + 1 - size)
    return needed // 2, needed - needed // 2


def torch_pads(mode, sizes, kernel, stride, dilation, padding):
    """F.pad's argument (last axis first) for MindSpore's pad modes; padding as (before, after) per axis."""
    if mode == "valid":
        pairs = [(0, 0)] * len(sizes)
    elif mode == "same":
        pairs = [same_pads(*args) for args in zip(sizes, kernel, stride, dilation)]
    else:
        pairs = padding
    return [p for pair in reversed(pairs) for p in pair]


def transpose_ref(x, w, stride, dilation, groups, mode, pads, output_padding):
    """MindSpore's transposed convolution from PyTorch's full (unpadded) one, cropped per MindSpore's sizes:
    'same' in * stride with max(0, f - stride) cropped (odd one at the end), 'valid' max(in * stride, full),
    'pad' full - before - after + output_padding; positions past the full result are zero."""
    conv = {3: F.conv_transpose1d, 4: F.conv_transpose2d, 5: F.conv_transpose3d}[x.ndim]
    full = conv(t(x), t(w), stride=stride, dilation=dilation, groups=groups)
    for axis in range(2, x.ndim):
        i = axis - 2
        size, length = x.shape[axis], full.shape[axis]
        if mode == "same":
            crop = max(0, length - size * stride[i])
            begin, out = crop // 2, size * stride[i]
        elif mode == "valid":
            begin, out = 0, max(size * stride[i], length)
        else:
            begin, out = pads[i][0], length - pads[i][0] - pads[i][1] + output_padding[i]
        extra = max(0, begin + out - length)
        widths = [0] * (2 * (x.ndim - 2))
        widths[2 * (x.ndim - 1 - axis) + 1] = extra
        full = F.pad(full, widths).narrow(axis, begin, out)
    return full


# -- Conv1d ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("in_ch, out_ch, k, stride, mode, padding, dilation, group, bias, length", [
    (4, 6, 3, 2, "same", 0, 1, 1, True, 11),
    (4, 6, 3, 1, "pad", (1, 2), 2, 2, False, 9),
    (3, 3, 2, 1, "valid", 0, 1, 3, True, 8),           # depthwise
])
def test_conv1d(in_ch, out_ch, k, stride, mode, padding, dilation, group, bias, length):
    conv = randomise(nn.Conv1d(in_ch, out_ch, k, stride, mode, padding, dilation, group, has_bias=bias))
    assert conv.weight.shape == (out_ch, in_ch // group, 1, k)
    x = rand(2, in_ch, length)
    pairs = [padding if isinstance(padding, tuple) else (padding, padding)]
    tx = F.pad(t(x), torch_pads(mode, [length], [k], [stride], [dilation], pairs))
    ref = F.conv1d(tx, t(conv.weight.asnumpy()[:, :, 0]), t(conv.bias.asnumpy()) if bias else None,
                   stride=stride, dilation=dilation, groups=group)
    close(conv(Tensor(x)), ref)


def test_conv1d_defaults_and_3d_weight_init():
    conv = nn.Conv1d(2, 3, 3)
    assert conv.pad_mode == "same" and conv.has_bias is False and conv.bias is None
    assert conv.kernel_size == (1, 3) and conv.weight.shape == (3, 2, 1, 3)
    w = rand(3, 2, 3)
    conv = nn.Conv1d(2, 3, 3, pad_mode="valid", weight_init=Tensor(w))
    x = rand(1, 2, 7)
    close(conv(Tensor(x)), F.conv1d(t(x), t(w)))


# -- Conv2d (NCHW cases live in tests/nn/test_layers.py) ---------------------------------------------
@pytest.mark.parametrize("mode, padding, stride, dilation, group", [
    ("same", 0, 2, 1, 1),
    ("pad", (1, 0, 2, 1), 1, 2, 2),
])
def test_conv2d_nhwc(mode, padding, stride, dilation, group):
    conv = randomise(nn.Conv2d(4, 6, 3, stride, mode, padding, dilation, group, has_bias=True, data_format="NHWC"))
    assert conv.weight.shape == (6, 3, 3, 4 // group)
    x = rand(2, 7, 8, 4)
    pairs = [padding[:2], padding[2:]] if mode == "pad" else None
    tx = F.pad(t(x.transpose(0, 3, 1, 2)), torch_pads(mode, [7, 8], [3, 3], [stride] * 2, [dilation] * 2, pairs))
    ref = F.conv2d(tx, t(conv.weight.asnumpy().transpose(0, 3, 1, 2)), t(conv.bias.asnumpy()), stride=stride,
                   dilation=dilation, groups=group)
    close(conv(Tensor(x)), ref.permute(0, 2, 3, 1))


def test_conv2d_float16():
    conv = randomise(nn.Conv2d(3, 4, 3, 2, has_bias=True, dtype=ms.float16), np.float16)
    x = rand(1, 3, 9, 9, dtype=np.float16)
    out = conv(Tensor(x))
    assert out.dtype == ms.float16
    ref = F.conv2d(F.pad(t(x), (1, 1, 1, 1)), t(conv.weight.asnumpy()), t(conv.bias.asnumpy()), stride=2)
    close(out, ref, rtol=1e-2, atol=2e-2)


# -- Conv3d -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel, stride, mode, padding, dilation, group", [
    ((2, 3, 3), (1, 2, 1), "same", 0, 1, 1),
    (3, 1, "pad", (1, 0, 1, 2, 0, 1), (1, 2, 1), 2),
])
def test_conv3d(kernel, stride, mode, padding, dilation, group):
    conv = randomise(nn.Conv3d(4, 6, kernel, stride, mode, padding, dilation, group, has_bias=True))
    k = kernel if isinstance(kernel, tuple) else (kernel,) * 3
    s = stride if isinstance(stride, tuple) else (stride,) * 3
    d = dilation if isinstance(dilation, tuple) else (dilation,) * 3
    assert conv.weight.shape == (6, 4 // group) + k
    x = rand(1, 4, 5, 7, 6)
    pairs = [padding[0:2], padding[2:4], padding[4:6]] if mode == "pad" else None
    tx = F.pad(t(x), torch_pads(mode, x.shape[2:], k, s, d, pairs))
    ref = F.conv3d(tx, t(conv.weight.asnumpy()), t(conv.bias.asnumpy()), stride=s, dilation=d, groups=group)
    close(conv(Tensor(x)), ref)


# -- transposed convolutions -----------------------------------------------------------------------
@pytest.mark.parametrize("k, stride, mode, padding, output_padding, dilation, group, expected_len", [
    (3, 2, "same", 0, 0, 1, 1, 14),        # crop 1 (f - stride), at the end
    (2, 3, "valid", 0, 0, 1, 2, 21),       # kernel shorter than stride: a zero tail
    (4, 2, "pad", (1, 2), 1, 2, 1, 17),    # (7 - 1) * 2 - 3 + 2 * 3 + 1 + 1
])
def test_conv1d_transpose(k, stride, mode, padding, output_padding, dilation, group, expected_len):
    conv = randomise(nn.Conv1dTranspose(4, 6, k, stride, mode, padding, dilation, group, has_bias=True,
                                        output_padding=output_padding))
    assert conv.weight.shape == (4, 6 // group, 1, k)
    x = rand(2, 4, 7)
    pads = [padding if isinstance(padding, tuple) else (padding, padding)]
    ref = transpose_ref(x, conv.weight.asnumpy()[:, :, 0], (stride,), (dilation,), group, mode, pads,
                        (output_padding,)) + t(conv.bias.asnumpy())[:, None]
    out = conv(Tensor(x))
    assert out.shape == (2, 6, expected_len)
    close(out, ref)


@pytest.mark.parametrize("k, stride, mode, padding, output_padding, dilation, group", [
    (3, 2, "same", 0, 0, 1, 1),
    ((1, 2), (2, 3), "valid", 0, 0, 1, 2),
    (3, (2, 1), "pad", (1, 0, 2, 1), (1, 0), (1, 2), 1),
    # kernel = stride: each pixel writes its own tile (a 1x1 convolution and a depth-to-space shuffle)
    (2, 2, "same", 0, 0, 1, 1),
    ((2, 3), (2, 3), "valid", 0, 0, 1, 1),
    (2, 2, "pad", (0, 0, 0, 0), 0, 1, 1),
])
def test_conv2d_transpose(k, stride, mode, padding, output_padding, dilation, group):
    conv = randomise(nn.Conv2dTranspose(4, 6, k, stride, mode, padding, dilation, group, has_bias=True,
                                        output_padding=output_padding))
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    assert conv.weight.shape == (4, 6 // group) + pair(k)
    x = rand(1, 4, 5, 6)
    pads = [padding[:2], padding[2:]] if mode == "pad" else None
    ref = transpose_ref(x, conv.weight.asnumpy(), pair(stride), pair(dilation), group, mode, pads,
                        pair(output_padding)) + t(conv.bias.asnumpy())[:, None, None]
    close(conv(Tensor(x)), ref)


def test_conv2d_transpose_pad_matches_torch_padding():
    conv = randomise(nn.Conv2dTranspose(3, 2, 3, 2, "pad", 1, has_bias=True, output_padding=1))
    x = rand(2, 3, 6, 5)
    ref = F.conv_transpose2d(t(x), t(conv.weight.asnumpy()), t(conv.bias.asnumpy()), stride=2, padding=1,
                             output_padding=1)
    close(conv(Tensor(x)), ref)


@pytest.mark.parametrize("mode, padding, output_padding", [
    ("same", 0, 0),
    ("pad", (1, 0, 0, 1, 1, 1), (0, 1, 0)),
])
def test_conv3d_transpose(mode, padding, output_padding):
    conv = randomise(nn.Conv3dTranspose(3, 4, (2, 3, 3), 2, mode, padding, output_padding=output_padding,
                                        has_bias=True))
    assert conv.weight.shape == (3, 4, 2, 3, 3)
    x = rand(1, 3, 3, 4, 5)
    pads = [padding[0:2], padding[2:4], padding[4:6]] if mode == "pad" else None
    ref = transpose_ref(x, conv.weight.asnumpy(), (2,) * 3, (1,) * 3, 1, mode, pads, _triple(output_padding))
    close(conv(Tensor(x)), ref + t(conv.bias.asnumpy())[:, None, None, None])


def _triple(value):
    return value if isinstance(value, tuple) else (value,) * 3


def test_transpose_output_sizes_from_the_docs():
    x = Tensor(np.ones([1, 3, 16, 50], np.float32))
    assert nn.Conv2dTranspose(3, 8, 4, pad_mode="pad")(x).shape == (1, 8, 19, 53)
    assert nn.Conv2dTranspose(3, 8, 4, stride=2)(x).shape == (1, 8, 32, 100)
    assert nn.Conv1dTranspose(3, 8, 4, pad_mode="pad")(Tensor(np.ones([1, 3, 50], np.float32))).shape == (1, 8, 53)


# -- Unfold -----------------------------------------------------------------------------------------
def unfold_ref(x, k, s, r, padding):
    """ExtractImagePatches written out: channel (i * kw + j) * C + c of pixel (p, q) is x[c, p*s + i*r, q*s + j*r]."""
    n, c, h, w = x.shape
    eff = [k[a] + (k[a] - 1) * (r[a] - 1) for a in range(2)]
    if padding == "same":
        out = [math.ceil(h / s[0]), math.ceil(w / s[1])]
        top, _ = same_pads(h, k[0], s[0], r[0])
        left, _ = same_pads(w, k[1], s[1], r[1])
    else:
        out = [(h - eff[0]) // s[0] + 1, (w - eff[1]) // s[1] + 1]
        top = left = 0
    padded = np.zeros((n, c, h + 2 * eff[0], w + 2 * eff[1]), x.dtype)
    padded[:, :, top:top + h, left:left + w] = x
    result = np.zeros((n, k[0] * k[1] * c, *out), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            rows = np.arange(out[0]) * s[0] + i * r[0]
            cols = np.arange(out[1]) * s[1] + j * r[1]
            result[:, (i * k[1] + j) * c:(i * k[1] + j + 1) * c] = padded[:, :, rows][:, :, :, cols]
    return result


@pytest.mark.parametrize("k, s, r, padding", [
    ((2, 2), (2, 2), (2, 2), "valid"),
    ((3, 2), (2, 1), (1, 2), "same"),
])
def test_unfold(k, s, r, padding):
    net = nn.Unfold([1, *k, 1], [1, *s, 1], [1, *r, 1], padding.upper())
    x = rand(2, 3, 7, 6)
    close(net(Tensor(x)), unfold_ref(x, k, s, r, padding), atol=1e-6)


def test_unfold_doc_example_float16():
    net = nn.Unfold(ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 2, 2, 1])
    out = net(Tensor(np.ones([2, 3, 6, 6]), ms.float16))
    assert out.shape == (2, 12, 2, 2) and out.dtype == ms.float16


# -- Conv2dBnAct ------------------------------------------------------------------------------------
def test_conv2d_bn_act():
    net = nn.Conv2dBnAct(3, 4, 3, stride=2, has_bias=True, has_bn=True, activation="relu")
    names = [p.name for p in net.get_parameters()]
    assert names[:2] == ["conv.weight", "conv.bias"] and "batchnorm.gamma" in names
    assert net.batchnorm.momentum == 0.997
    randomise(net)
    net.batchnorm.moving_variance.set_data(np.abs(rand(4)) + 0.5)
    x = rand(2, 3, 8, 8)
    bn = net.batchnorm
    ref = F.conv2d(F.pad(t(x), (0, 1, 0, 1)), t(net.conv.weight.asnumpy()), t(net.conv.bias.asnumpy()), stride=2)
    ref = F.batch_norm(ref, t(bn.moving_mean.asnumpy()), t(bn.moving_variance.asnumpy()), t(bn.gamma.asnumpy()),
                       t(bn.beta.asnumpy()), eps=1e-5)
    close(net(Tensor(x)), F.relu(ref))


def test_conv2d_bn_act_leakyrelu_and_cell_activation():
    net = randomise(nn.Conv2dBnAct(2, 3, 1, activation="leakyrelu", alpha=0.3))
    x = rand(1, 2, 4, 4)
    close(net(Tensor(x)), F.leaky_relu(F.conv2d(t(x), t(net.conv.weight.asnumpy())), 0.3))
    net = randomise(nn.Conv2dBnAct(2, 3, 1, activation=nn.Sigmoid()))
    close(net(Tensor(x)), torch.sigmoid(F.conv2d(t(x), t(net.conv.weight.asnumpy()))))


# -- argument checks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error", [
    (lambda: nn.Conv2d("3", 4, 3), TypeError),
    (lambda: nn.Conv2d(3, 4, 1.5), TypeError),
    (lambda: nn.Conv2d(3, 4, 3, has_bias=1), TypeError),
    (lambda: nn.Conv2d(3, 4, 0), ValueError),
    (lambda: nn.Conv2d(3, 4, 3, pad_mode="pad", padding=(1, 1, 1)), ValueError),
    (lambda: nn.Conv2d(3, 4, 3, pad_mode="pad", padding=-1), ValueError),
    (lambda: nn.Conv2d(3, 4, 3, data_format="NCDHW"), ValueError),
    (lambda: nn.Conv1d(3, 4, (3, 3)), ValueError),
    (lambda: nn.Conv1d(3, 4, 3, stride=1.0), TypeError),
    (lambda: nn.Conv1d(4, 4, 3, group=3), ValueError),
    (lambda: nn.Conv3d(3, 4, 3, pad_mode="pad", padding=(1, 1, 1, 1)), ValueError),
    (lambda: nn.Conv3d(3, 4, 3, data_format="NCHW"), ValueError),
    (lambda: nn.Conv3d(3, 4, 3, padding=1), ValueError),
    (lambda: nn.Conv2dTranspose(3, 4, 3, output_padding=1), ValueError),
    (lambda: nn.Conv1dTranspose(3, 4, 3, pad_mode="SAME?"), ValueError),
    (lambda: nn.Conv3dTranspose(3, 4, 3, output_padding=-1, pad_mode="pad"), ValueError),
    (lambda: nn.Conv2dBnAct(3, 4, 3, activation=3), TypeError),
    (lambda: nn.Conv2dBnAct(3, 4, 3, has_bn="yes"), TypeError),
    (lambda: nn.Unfold((1, 2, 2), [1, 1, 1, 1], [1, 1, 1, 1]), ValueError),
    (lambda: nn.Unfold(2, [1, 1, 1, 1], [1, 1, 1, 1]), TypeError),
    (lambda: nn.Unfold([1, 2, 2, 1], [1, 0, 1, 1], [1, 1, 1, 1]), ValueError),
    (lambda: nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "full"), ValueError),
])
def test_bad_arguments(make, error):
    with pytest.raises(error):
        make()


def test_bad_inputs():
    with pytest.raises(ValueError):
        nn.Conv1d(3, 4, 3)(Tensor(rand(1, 3, 4, 4)))
    with pytest.raises(ValueError):
        nn.Conv3d(3, 4, 3)(Tensor(rand(1, 2, 4, 4, 4)))
    with pytest.raises(ValueError):
        nn.Conv2dTranspose(3, 4, 3)(Tensor(rand(3, 4, 4)))
    with pytest.raises(ValueError):
        nn.Unfold([1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1])(Tensor(rand(3, 4, 4)))
