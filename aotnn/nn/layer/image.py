"""Image layers: gradients, quality indices (SSIM, MS-SSIM, PSNR), central crop and bilinear resize."""
from __future__ import annotations

__all__ = ['ImageGradients', 'SSIM', 'MSSSIM', 'PSNR', 'CentralCrop', 'ResizeBilinear', 'Upsample']

import math
import numbers

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.tensor import Tensor
from ..cell import Cell
from ..container import CellList
from .conv import Conv2d


def _check_4d(x, name: str, cls: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{cls}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"{cls}: {name} must be 4-D (N, C, H, W), got shape {x.shape}")


def _check_pair(img1, img2, cls: str) -> None:
    _check_4d(img1, "img1", cls)
    _check_4d(img2, "img2", cls)
    if img1.shape != img2.shape or img1.dtype != img2.dtype:
        raise ValueError(f"{cls}: img1 and img2 must have one shape and dtype, got {img1.shape} {img1.dtype} "
                         f"and {img2.shape} {img2.dtype}")


def _check_max_val(max_val, cls: str) -> float:
    if isinstance(max_val, bool) or not isinstance(max_val, (int, float)):
        raise TypeError(f"{cls}: max_val must be an int or a float, got {type(max_val).__name__}")
    if max_val <= 0:
        raise ValueError(f"{cls}: max_val must be > 0, got {max_val}")
    return max_val


def _check_float(value, name: str, cls: str, positive: bool = False) -> float:
    if not isinstance(value, float):
        raise TypeError(f"{cls}: {name} must be a float, got {type(value).__name__}")
    if positive and value <= 0:
        raise ValueError(f"{cls}: {name} must be > 0, got {value}")
    return value


def _check_filter_size(value, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{cls}: filter_size must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{cls}: filter_size must be >= 1, got {value}")
    return value


def _dtype_max(dtype) -> float:
    """The range of a pixel type: its largest value for integers, 1 for floats."""
    np_dtype = mstype.to_numpy(dtype)
    return float(np.iinfo(np_dtype).max) if np.issubdtype(np_dtype, np.integer) else 1.0


def _to_float32(img, dtype_max: float):
    """Pixels as float32 in [0, 1] (integers are divided by their type's maximum)."""
    img = ops.cast(img, mstype.float32)
    return img * (1.0 / dtype_max) if dtype_max > 1.0 else img


def _gaussian_window(size: int, sigma: float) -> np.ndarray:
    """The normalised (1, 1, size, size) Gaussian window of SSIM."""
    offsets = np.arange(size, dtype=np.float32) - (size - 1) // 2  # even sizes: one more tap after 0
    grid = offsets[:, None] ** 2 + offsets[None, :] ** 2
    window = np.exp(-grid / (2 * sigma ** 2))
    return (window / window.sum()).astype(np.float32).reshape(1, 1, size, size)


def _window_conv(size: int, sigma: float) -> Conv2d:
    conv = Conv2d(1, 1, size, pad_mode="valid", weight_init=Tensor(_gaussian_window(size, sigma)))
    conv.weight.requires_grad = False
    return conv


def _ssim_and_cs(img1, img2, conv: Conv2d, c1: float, c2: float):
    """Per-image, per-channel SSIM and contrast-structure terms, each (N, C)."""
    n, c, h, w = img1.shape

    def blur(x):
        out = conv(ops.reshape(x, (n * c, 1, h, w)))
        return ops.reshape(out, (n, c) + out.shape[2:])

    mu1, mu2 = blur(img1), blur(img2)
    mu1_sq, mu2_sq, mu1_mu2 = mu1 * mu1, mu2 * mu2, mu1 * mu2
    sigma1_sq = blur(img1 * img1) - mu1_sq
    sigma2_sq = blur(img2 * img2) - mu2_sq
    sigma12 = blur(img1 * img2) - mu1_mu2
    v1 = 2.0 * sigma12 + c2
    v2 = sigma1_sq + sigma2_sq + c2
    ssim = ((2.0 * mu1_mu2 + c1) * v1) / ((mu1_sq + mu2_sq + c1) * v2)
    return ops.mean(ssim, (2, 3)), ops.mean(v1 / v2, (2, 3))


class ImageGradients(Cell):
    """Forward differences of NCHW images along height (dy) and width (dx); the last row/column is 0.

    Inputs:
        - **images** (Tensor) - (N, C, H, W).
    Outputs:
        (dy, dx), each of the input's shape and dtype.
    Raises:
        ValueError: images not 4-D.
    """

    def construct(self, images):
        _check_4d(images, "images", "ImageGradients")
        n, c, h, w = images.shape
        zeros_row = ops.zeros((n, c, 1, w), images.dtype)
        zeros_col = ops.zeros((n, c, h, 1), images.dtype)
        dy = zeros_row if h == 1 else ops.concat((images[:, :, 1:, :] - images[:, :, :h - 1, :], zeros_row), 2)
        dx = zeros_col if w == 1 else ops.concat((images[:, :, :, 1:] - images[:, :, :, :w - 1], zeros_col), 3)
        return dy, dx


class SSIM(Cell):
    r"""Structural similarity index between two image batches (Wang et al., 2004).

    .. math::
        SSIM(x,y) = \frac{(2\mu_x\mu_y+C_1)(2\sigma_{xy}+C_2)}{(\mu_x^2+\mu_y^2+C_1)(\sigma_x^2+\sigma_y^2+C_2)},
        C_1 = (k_1 L)^2, C_2 = (k_2 L)^2

    with means and (co)variances taken under a Gaussian window (valid positions only), averaged over
    positions and channels.

    Args:
        max_val (Union[int, float]): the dynamic range L of the pixels. Default: 1.0.
        filter_size (int): Gaussian window size, >= 1. Default: 11.
        filter_sigma (float): Gaussian standard deviation, > 0. Default: 1.5.
        k1 (float): luminance constant. Default: 0.01.
        k2 (float): contrast constant. Default: 0.03.

    Inputs:
        - **img1** (Tensor) - (N, C, H, W) float16/float32, H and W >= filter_size.
        - **img2** (Tensor) - same shape and dtype as img1.
    Outputs:
        Tensor (N,), float32.
    Raises:
        TypeError: max_val not an int/float; k1, k2 or filter_sigma not a float; filter_size not an int;
            images not float16/float32.
        ValueError: max_val or filter_sigma <= 0; filter_size < 1; images not 4-D, of different
            shapes, or smaller than the window.
    """

    def __init__(self, max_val=1.0, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self.max_val = _check_max_val(max_val, "SSIM")
        self.filter_size = _check_filter_size(filter_size, "SSIM")
        self.filter_sigma = _check_float(filter_sigma, "filter_sigma", "SSIM", positive=True)
        self.k1 = _check_float(k1, "k1", "SSIM")
        self.k2 = _check_float(k2, "k2", "SSIM")
        self.conv = _window_conv(filter_size, filter_sigma)

    def construct(self, img1, img2):
        _check_pair(img1, img2, "SSIM")
        if img1.dtype not in (mstype.float16, mstype.float32):
            raise TypeError(f"SSIM: img1 must be float16 or float32, got {img1.dtype}")
        if min(img1.shape[2:]) < self.filter_size:
            raise ValueError(f"SSIM: image height and width must be >= filter_size={self.filter_size}, "
                             f"got {img1.shape}")
        max_val = self.max_val
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        ssim, _ = _ssim_and_cs(_to_float32(img1, 1.0), _to_float32(img2, 1.0), self.conv, c1, c2)
        return ops.mean(ssim, -1)


class MSSSIM(Cell):
    r"""Multi-scale SSIM (Wang, Simoncelli and Bovik, 2003).

    At each of ``len(power_factors)`` scales the contrast-structure term is computed, then both images
    are halved by 2x2 average pooling; the luminance-including SSIM of the last scale closes the product

    .. math::
        MSSSIM(x,y) = SSIM_M^{\beta_M} \prod_{j<M} cs_j^{\beta_j}

    (negative terms are clipped to 0), averaged over channels.

    Args:
        max_val (Union[int, float]): the dynamic range of the pixels. Default: 1.0.
        power_factors (Union[tuple, list]): one weight per scale.
            Default: (0.0448, 0.2856, 0.3001, 0.2363, 0.1333).
        filter_size (int): Gaussian window size. Default: 11.
        filter_sigma (float): Gaussian standard deviation. Default: 1.5.
        k1 (float): luminance constant. Default: 0.01.
        k2 (float): contrast constant. Default: 0.03.

    Inputs:
        - **img1** (Tensor) - (N, C, H, W): float16, float32, float64 or uint8 (uint8 is scaled to [0, 1]).
        - **img2** (Tensor) - same shape and dtype as img1.
    Outputs:
        Tensor (N,), float32, in [0, 1].
    Raises:
        TypeError: wrong argument types (as SSIM), power_factors not a tuple/list, unsupported image dtype.
        ValueError: as SSIM; images too small for the window at the coarsest scale.
    """

    def __init__(self, max_val=1.0, power_factors=(0.0448, 0.2856, 0.3001, 0.2363, 0.1333), filter_size=11,
                 filter_sigma=1.5, k1=0.01, k2=0.03):
        super().__init__()
        self.max_val = _check_max_val(max_val, "MSSSIM")
        if not isinstance(power_factors, (tuple, list)):
            raise TypeError(f"MSSSIM: power_factors must be a tuple or a list, got {type(power_factors).__name__}")
        if not power_factors:
            raise ValueError("MSSSIM: power_factors must not be empty")
        self.power_factors = tuple(float(p) for p in power_factors)
        self.filter_size = _check_filter_size(filter_size, "MSSSIM")
        self.filter_sigma = _check_float(filter_sigma, "filter_sigma", "MSSSIM", positive=True)
        self.k1 = _check_float(k1, "k1", "MSSSIM")
        self.k2 = _check_float(k2, "k2", "MSSSIM")
        self.level = len(power_factors)
        self.multi_convs_list = CellList([_window_conv(filter_size, filter_sigma) for _ in range(self.level)])
        self.weight_tensor = Tensor(np.array(self.power_factors, np.float32))

    def construct(self, img1, img2):
        _check_pair(img1, img2, "MSSSIM")
        if img1.dtype not in (mstype.float64, mstype.float32, mstype.float16, mstype.uint8):
            raise TypeError(f"MSSSIM: img1 must be float64, float32, float16 or uint8, got {img1.dtype}")
        coarsest = min(img1.shape[2:]) // 2 ** (self.level - 1)
        if coarsest < self.filter_size:
            raise ValueError(f"MSSSIM: images of {img1.shape} shrink to {coarsest} pixels at scale {self.level}, "
                             f"below filter_size={self.filter_size}")
        dtype_max = _dtype_max(img1.dtype)
        max_val = self.max_val / dtype_max if dtype_max > 1.0 else self.max_val
        c1, c2 = (self.k1 * max_val) ** 2, (self.k2 * max_val) ** 2
        img1, img2 = _to_float32(img1, dtype_max), _to_float32(img2, dtype_max)
        terms = []
        for i in range(self.level):
            ssim, cs = _ssim_and_cs(img1, img2, self.multi_convs_list[i], c1, c2)
            terms.append(ops.relu(cs))
            if i + 1 < self.level:
                img1 = ops.avg_pool2d(img1, 2, 2, "valid")
                img2 = ops.avg_pool2d(img2, 2, 2, "valid")
        terms[-1] = ops.relu(ssim)
        weighted = ops.pow(ops.stack(terms, -1), self.weight_tensor)
        return ops.mean(ops.prod(weighted, -1), -1)


class PSNR(Cell):
    r"""Peak signal-to-noise ratio of each image pair: :math:`10 \log_{10}(MAX^2 / MSE)`.

    Integer images are compared on [0, 1] after division by their type's maximum, with max_val scaled
    alike, which leaves the ratio unchanged.

    Args:
        max_val (Union[int, float]): the dynamic range of the pixels. Default: 1.0.

    Inputs:
        - **img1** (Tensor) - (N, C, H, W).
        - **img2** (Tensor) - same shape and dtype as img1.
    Outputs:
        Tensor (N,), float32.
    Raises:
        TypeError: max_val not an int/float.
        ValueError: max_val <= 0; images not 4-D or of different shapes.
    """

    def __init__(self, max_val=1.0):
        super().__init__()
        self.max_val = _check_max_val(max_val, "PSNR")

    def construct(self, img1, img2):
        _check_pair(img1, img2, "PSNR")
        # Dividing pixels and max_val by the type's maximum cancels in the ratio: compare raw values.
        diff = ops.cast(img1, mstype.float32) - ops.cast(img2, mstype.float32)
        mse = ops.mean(diff * diff, (-3, -2, -1))
        return ops.log(float(self.max_val) ** 2 / mse) * (10.0 / math.log(10.0))


class CentralCrop(Cell):
    """Crops the central ``central_fraction`` of each image's height and width.

    Args:
        central_fraction (float): in (0.0, 1.0].

    Inputs:
        - **image** (Tensor) - (C, H, W) or (N, C, H, W).
    Outputs:
        Tensor of the input's rank and dtype.
    Raises:
        TypeError: central_fraction not a float.
        ValueError: central_fraction out of (0.0, 1.0]; image not 3-D or 4-D.
    """

    def __init__(self, central_fraction):
        super().__init__()
        if not isinstance(central_fraction, float):
            raise TypeError(f"CentralCrop: central_fraction must be a float, got {type(central_fraction).__name__}")
        if not 0.0 < central_fraction <= 1.0:
            raise ValueError(f"CentralCrop: central_fraction must be in (0.0, 1.0], got {central_fraction}")
        self.central_fraction = central_fraction

    def construct(self, image):
        if not isinstance(image, Tensor) or image.ndim not in (3, 4):
            raise ValueError(f"CentralCrop: image must be a 3-D or 4-D Tensor, got "
                             f"{getattr(image, 'shape', type(image).__name__)}")
        if self.central_fraction == 1.0:
            return image
        h, w = image.shape[-2:]
        # float32 product, as MindSpore computes the box
        top = int((float(h) - np.float32(h * self.central_fraction)) / 2)
        left = int((float(w) - np.float32(w * self.central_fraction)) / 2)
        return image[..., top:h - top, left:w - left]

    def extend_repr(self) -> str:
        return f"central_fraction={self.central_fraction}"


class ResizeBilinear(Cell):
    """Bilinear resize of NCHW images to a size or by an integer scale factor.

    Args:
        half_pixel_centers (bool): sample at pixel centres, src = (dst + 0.5) * in / out - 0.5.
            Cannot be combined with align_corners. Default: False.

    Inputs:
        - **x** (Tensor) - (N, C, H, W), float16 or float32.
        - **size** (Union[tuple[int], list[int], None]) - (new_height, new_width). Default: None.
        - **scale_factor** (Union[int, None]) - positive: output (H * scale, W * scale). Default: None.
          Exactly one of size and scale_factor must be given.
        - **align_corners** (bool) - src = dst * (in - 1) / (out - 1) instead of dst * in / out. Default: False.
    Outputs:
        Tensor (N, C, new_height, new_width) of x's dtype.
    Raises:
        TypeError: size not a tuple/list/None; scale_factor not an int/None; align_corners or
            half_pixel_centers not a bool; x not float16/float32.
        ValueError: both or neither of size and scale_factor; x not 4-D; scale_factor < 1;
            size not of length 2; align_corners and half_pixel_centers both True.
    """

    def __init__(self, half_pixel_centers: bool = False):
        super().__init__()
        if not isinstance(half_pixel_centers, bool):
            raise TypeError(f"ResizeBilinear: half_pixel_centers must be a bool, got "
                            f"{type(half_pixel_centers).__name__}")
        self.half_pixel_centers = half_pixel_centers

    def construct(self, x, size=None, scale_factor=None, align_corners=False):
        if size is not None and not isinstance(size, (tuple, list)):
            raise TypeError(f"ResizeBilinear: size must be a tuple, a list or None, got {type(size).__name__}")
        if scale_factor is not None and (isinstance(scale_factor, bool) or not isinstance(scale_factor, numbers.Integral)):
            raise TypeError(f"ResizeBilinear: scale_factor must be an int or None, got {type(scale_factor).__name__}")
        if (size is None) == (scale_factor is None):
            raise ValueError("ResizeBilinear: exactly one of size and scale_factor must be set")
        if not isinstance(x, Tensor):
            raise TypeError(f"ResizeBilinear: x must be a Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"ResizeBilinear: x must be 4-D (N, C, H, W), got shape {x.shape}")
        if scale_factor is not None:
            if scale_factor < 1:
                raise ValueError(f"ResizeBilinear: scale_factor must be a positive int, got {scale_factor}")
            size = (x.shape[2] * int(scale_factor), x.shape[3] * int(scale_factor))
        if len(size) != 2:
            raise ValueError(f"ResizeBilinear: size must have 2 elements, got {size!r}")
        return ops.resize_bilinear(x, tuple(size), align_corners, self.half_pixel_centers)

    def extend_repr(self) -> str:
        return f"half_pixel_centers={self.half_pixel_centers}"


class Upsample(Cell):
    """Resizes the spatial axes: ``ops.interpolate(x, size, scale_factor, mode, align_corners)``.

    Args:
        size (Union[int, tuple[int]]): the output spatial size. Default: None.
        scale_factor (Union[float, tuple[float]]): output size = floor(input size * scale_factor). Default: None.
        mode (str): 'nearest' or 'bilinear'. Default: 'nearest'.
        align_corners (bool): for 'bilinear', align corner pixels instead of pixel centres. Default: None.
        recompute_scale_factor (bool): accepted; sizes are always computed from ``scale_factor``. Default: None.

    Raises:
        ValueError: at call time, both or neither of size / scale_factor, or an unsupported mode or rank.
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, x):
        return ops.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                               self.recompute_scale_factor)
