"""Image layers against PyTorch (convolution, pooling, interpolation) and numpy written from the formulas."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(7)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.asnumpy().astype(np.float64), expected, rtol=rtol, atol=atol)


# -- ImageGradients -----------------------------------------------------------------------------------
def test_image_gradients_documented_example_and_float():
    dy, dx = nn.ImageGradients()(Tensor(np.array([[[[1, 2], [3, 4]]]]), ms.int32))
    assert dy.dtype == ms.int32
    assert dy.asnumpy().tolist() == [[[[2, 2], [0, 0]]]] and dx.asnumpy().tolist() == [[[[1, 0], [1, 0]]]]
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    dy, dx = nn.ImageGradients()(Tensor(x))
    close(dy, np.concatenate([np.diff(x, axis=2), np.zeros((2, 3, 1, 4))], axis=2))
    close(dx, np.concatenate([np.diff(x, axis=3), np.zeros((2, 3, 5, 1))], axis=3))


def test_image_gradients_single_row_and_rank_error():
    dy, dx = nn.ImageGradients()(Tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)))
    assert dy.asnumpy().tolist() == [[[[0, 0, 0, 0]]]] and dx.asnumpy().tolist() == [[[[1, 1, 1, 0]]]]
    with pytest.raises(ValueError, match="4-D"):
        nn.ImageGradients()(Tensor(np.ones((2, 2, 2), np.float32)))


# -- SSIM / MS-SSIM (reference: the documented formula with PyTorch's convolution) ------------------
def gaussian(size, sigma):
    coords = torch.arange(size, dtype=torch.float64) - (size - 1) // 2
    g = torch.exp(-(coords[:, None] ** 2 + coords[None, :] ** 2) / (2 * sigma ** 2))
    return (g / g.sum()).reshape(1, 1, size, size)


def ssim_terms(x, y, size, sigma, c1, c2):
    c = x.shape[1]
    w = gaussian(size, sigma).repeat(c, 1, 1, 1)
    blur = lambda img: F.conv2d(img, w, groups=c)  # noqa: E731
    mx, my = blur(x), blur(y)
    vxx, vyy, vxy = blur(x * x) - mx * mx, blur(y * y) - my * my, blur(x * y) - mx * my
    cs = (2 * vxy + c2) / (vxx + vyy + c2)
    ssim = (2 * mx * my + c1) / (mx * mx + my * my + c1) * cs
    return ssim.mean((2, 3)), cs.mean((2, 3))


def ssim_ref(x, y, max_val=1.0, size=11, sigma=1.5, k1=0.01, k2=0.03):
    x, y = torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
    return ssim_terms(x, y, size, sigma, (k1 * max_val) ** 2, (k2 * max_val) ** 2)[0].mean(1)


def test_ssim_against_formula():
    x = RNG.random((2, 3, 16, 16)).astype(np.float32)
    y = np.clip(x + 0.1 * RNG.standard_normal(x.shape), 0, 1).astype(np.float32)
    out = nn.SSIM()(Tensor(x), Tensor(y))
    assert out.shape == (2,) and out.dtype == ms.float32
    close(out, ssim_ref(x, y), rtol=1e-4, atol=1e-5)
    close(nn.SSIM()(Tensor(x), Tensor(x)), np.ones(2), atol=1e-5)
    out = nn.SSIM(max_val=255, filter_size=4, filter_sigma=0.8, k1=0.02, k2=0.05)(Tensor(x * 255), Tensor(y * 255))
    close(out, ssim_ref(x * 255, y * 255, 255, 4, 0.8, 0.02, 0.05), rtol=1e-4, atol=1e-5)


def test_ssim_float16_and_errors():
    x = RNG.random((1, 1, 12, 12)).astype(np.float16)
    y = (x * 0.5).astype(np.float16)
    close(nn.SSIM()(Tensor(x), Tensor(y)), ssim_ref(x.astype(np.float32), y.astype(np.float32)), rtol=1e-3, atol=1e-3)
    with pytest.raises(TypeError, match="max_val"):
        nn.SSIM(max_val="1")
    with pytest.raises(ValueError, match="max_val"):
        nn.SSIM(max_val=0)
    with pytest.raises(TypeError, match="k1"):
        nn.SSIM(k1=1)
    with pytest.raises(ValueError, match="filter_size"):
        nn.SSIM(filter_size=0)
    with pytest.raises(ValueError, match="filter_sigma"):
        nn.SSIM(filter_sigma=-1.0)
    with pytest.raises(ValueError, match="filter_size"):
        nn.SSIM()(Tensor(np.ones((1, 1, 8, 8), np.float32)), Tensor(np.ones((1, 1, 8, 8), np.float32)))
    with pytest.raises(TypeError):
        nn.SSIM()(Tensor(np.ones((1, 1, 12, 12), np.int32)), Tensor(np.ones((1, 1, 12, 12), np.int32)))


def msssim_ref(x, y, weights, max_val=1.0, size=11, sigma=1.5, k1=0.01, k2=0.03):
    x, y = torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    terms = []
    for level in range(len(weights)):
        ssim, cs = ssim_terms(x, y, size, sigma, c1, c2)
        terms.append(torch.relu(cs))
        x, y = F.avg_pool2d(x, 2), F.avg_pool2d(y, 2)
    terms[-1] = torch.relu(ssim)
    return (torch.stack(terms, -1) ** torch.tensor(weights, dtype=torch.float64)).prod(-1).mean(-1)


def test_msssim_against_formula():
    x = RNG.random((2, 2, 48, 40)).astype(np.float32)
    y = np.clip(x + 0.2 * RNG.standard_normal(x.shape), 0, 1).astype(np.float32)
    weights = (0.2, 0.3, 0.5)
    out = nn.MSSSIM(power_factors=weights, filter_size=7)(Tensor(x), Tensor(y))
    assert out.shape == (2,) and out.dtype == ms.float32
    close(out, msssim_ref(x, y, weights, size=7), rtol=1e-4, atol=1e-5)
    u8x, u8y = (x * 255).astype(np.uint8), (y * 255).astype(np.uint8)  # scaled to [0, 1], max_val too
    out = nn.MSSSIM(255, power_factors=[0.5, 0.5], filter_size=5, filter_sigma=1.0)(Tensor(u8x), Tensor(u8y))
    close(out, msssim_ref(u8x / 255.0, u8y / 255.0, (0.5, 0.5), size=5, sigma=1.0), rtol=1e-4, atol=1e-5)


def test_msssim_errors():
    with pytest.raises(TypeError, match="power_factors"):
        nn.MSSSIM(power_factors=0.5)
    with pytest.raises(ValueError, match="filter_size"):
        nn.MSSSIM()(Tensor(np.ones((1, 1, 48, 48), np.float32)), Tensor(np.ones((1, 1, 48, 48), np.float32)))
    with pytest.raises(TypeError):
        nn.MSSSIM(power_factors=(1.0,))(Tensor(np.ones((1, 1, 16, 16), np.int32)),
                                       Tensor(np.ones((1, 1, 16, 16), np.int32)))


# -- PSNR -------------------------------------------------------------------------------------------------
def test_psnr_against_formula():
    x = RNG.random((3, 2, 5, 6)).astype(np.float32)
    y = RNG.random((3, 2, 5, 6)).astype(np.float32)
    mse = ((x.astype(np.float64) - y) ** 2).mean((1, 2, 3))
    close(nn.PSNR()(Tensor(x), Tensor(y)), 10 * np.log10(1.0 / mse), rtol=1e-5)
    close(nn.PSNR(max_val=255)(Tensor(x * 255), Tensor(y * 255)), 10 * np.log10(255.0 ** 2 / (mse * 255 ** 2)),
          rtol=1e-5)
    documented = nn.PSNR()(Tensor([[[[1, 2, 3, 4], [1, 2, 3, 4]]]]), Tensor([[[[3, 4, 5, 6], [3, 4, 5, 6]]]]))
    assert documented.dtype == ms.float32
    close(documented, [-6.0206], atol=1e-4)
    half = nn.PSNR()(Tensor(x.astype(np.float16)), Tensor(y.astype(np.float16)))
    close(half, 10 * np.log10(1.0 / ((x.astype(np.float16).astype(np.float64) - y.astype(np.float16)) ** 2)
                              .mean((1, 2, 3))), rtol=1e-3)


def test_psnr_errors():
    with pytest.raises(TypeError, match="max_val"):
        nn.PSNR(max_val=True)
    with pytest.raises(ValueError, match="max_val"):
        nn.PSNR(max_val=-1.0)
    with pytest.raises(ValueError, match="4-D"):
        nn.PSNR()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((2, 3), np.float32)))


# -- CentralCrop ----------------------------------------------------------------------------------------
def crop_ref(x, fraction):
    h, w = x.shape[-2:]
    top = int((h - np.float32(h * fraction)) / 2)
    left = int((w - np.float32(w * fraction)) / 2)
    return x[..., top:h - top, left:w - left]


def test_central_crop():
    x = RNG.standard_normal((4, 3, 10, 7)).astype(np.float32)
    close(nn.CentralCrop(0.5)(Tensor(x)), crop_ref(x, 0.5))
    close(nn.CentralCrop(0.33)(Tensor(x[0])), crop_ref(x[0], 0.33))
    close(nn.CentralCrop(1.0)(Tensor(x)), x)
    assert nn.CentralCrop(0.5)(Tensor(np.ones((4, 3, 4, 4), np.float32))).shape == (4, 3, 2, 2)


def test_central_crop_errors():
    with pytest.raises(TypeError, match="central_fraction"):
        nn.CentralCrop(1)
    with pytest.raises(ValueError, match="central_fraction"):
        nn.CentralCrop(0.0)
    with pytest.raises(ValueError, match="central_fraction"):
        nn.CentralCrop(1.5)
    with pytest.raises(ValueError, match="3-D or 4-D"):
        nn.CentralCrop(0.5)(Tensor(np.ones((4, 4), np.float32)))


# -- ResizeBilinear -------------------------------------------------------------------------------------
def resize_asymmetric_ref(x, out_h, out_w):
    """TF's legacy mapping src = dst * in / out, neighbours clamped at the border."""
    def axis_weights(n_in, n_out):
        src = np.arange(n_out) * (n_in / n_out)
        low = np.floor(src).astype(int)
        high = np.minimum(low + 1, n_in - 1)
        return low, high, src - low
    (y0, y1, wy), (x0, x1, wx) = axis_weights(x.shape[2], out_h), axis_weights(x.shape[3], out_w)
    top = x[:, :, y0][..., x0] * (1 - wx) + x[:, :, y0][..., x1] * wx
    bottom = x[:, :, y1][..., x0] * (1 - wx) + x[:, :, y1][..., x1] * wx
    return top * (1 - wy[:, None]) + bottom * wy[:, None]


def test_resize_bilinear_documented_example():
    x = Tensor([[[[1, 2, 3, 4], [5, 6, 7, 8]]]], ms.float32)
    result = nn.ResizeBilinear()(x, size=(5, 5))
    close(result, [[[[1., 1.8, 2.6, 3.4, 4.], [2.6, 3.4, 4.2, 5., 5.6], [4.2, 5., 5.8, 6.6, 7.2],
                     [5., 5.8, 6.6, 7.4, 8.], [5., 5.8, 6.6, 7.4, 8.]]]], atol=1e-6)


def test_resize_bilinear_modes_against_torch_and_formula():
    x = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)
    xt = torch.tensor(x)
    net = nn.ResizeBilinear()
    close(net(Tensor(x), size=(8, 3)), resize_asymmetric_ref(x.astype(np.float64), 8, 3))
    close(net(Tensor(x), scale_factor=2), resize_asymmetric_ref(x.astype(np.float64), 10, 14))
    close(net(Tensor(x), size=(8, 3), align_corners=True),
          F.interpolate(xt, size=(8, 3), mode="bilinear", align_corners=True))
    close(net(Tensor(x), size=[1, 9], align_corners=True),
          F.interpolate(xt, size=(1, 9), mode="bilinear", align_corners=True))
    close(ms.ops.ResizeBilinear((8, 3), align_corners=True)(Tensor(x)),
          F.interpolate(xt, size=(8, 3), mode="bilinear", align_corners=True))
    half = nn.ResizeBilinear(half_pixel_centers=True)
    close(half(Tensor(x), size=(8, 3)), F.interpolate(xt, size=(8, 3), mode="bilinear", align_corners=False))
    close(half(Tensor(x), scale_factor=2), F.interpolate(xt, scale_factor=2, mode="bilinear", align_corners=False))
    out16 = half(Tensor(x.astype(np.float16)), size=(8, 3))
    assert out16.dtype == ms.float16
    close(out16, F.interpolate(torch.tensor(x.astype(np.float16).astype(np.float32)), size=(8, 3), mode="bilinear",
                               align_corners=False), rtol=2e-3, atol=2e-3)


def test_resize_bilinear_errors():
    x = Tensor(np.ones((1, 1, 4, 4), np.float32))
    net = nn.ResizeBilinear()
    with pytest.raises(ValueError, match="size and scale_factor"):
        net(x)
    with pytest.raises(ValueError, match="size and scale_factor"):
        net(x, size=(2, 2), scale_factor=2)
    with pytest.raises(TypeError, match="size"):
        net(x, size=2)
    with pytest.raises(TypeError, match="scale_factor"):
        net(x, scale_factor=1.5)
    with pytest.raises(ValueError, match="scale_factor"):
        net(x, scale_factor=0)
    with pytest.raises(ValueError, match="size"):
        net(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match="4-D"):
        net(Tensor(np.ones((4, 4), np.float32)), size=(2, 2))
    with pytest.raises(TypeError, match="float16 or float32"):
        net(Tensor(np.ones((1, 1, 4, 4), np.int32)), size=(2, 2))
    with pytest.raises(ValueError, match="half_pixel_centers"):
        nn.ResizeBilinear(half_pixel_centers=True)(x, size=(2, 2), align_corners=True)
    with pytest.raises(TypeError, match="half_pixel_centers"):
        nn.ResizeBilinear(half_pixel_centers=1)


def test_resize_bilinear_gradient_against_torch():
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    w = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
    net = nn.ResizeBilinear()
    grad = ms.ops.grad(lambda v: ms.ops.reduce_sum(net(v, size=(5, 7), align_corners=True) * Tensor(w)))(Tensor(x))
    xt = torch.tensor(x, requires_grad=True)
    (F.interpolate(xt, size=(5, 7), mode="bilinear", align_corners=True) * torch.tensor(w)).sum().backward()
    close(grad, xt.grad, rtol=1e-5, atol=1e-5)
