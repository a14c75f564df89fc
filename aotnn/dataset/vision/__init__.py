"""``mindspore.dataset.vision``: the enums, and HWC2CHW, Normalize and Rescale in numpy; the image
decoding and augmentation transforms are stubs that raise NotImplementedError (aotnn has no image codec)."""
from __future__ import annotations

from enum import Enum

import numpy as np

from .._stub import unimplemented


class Inter(str, Enum):
    """Interpolation modes (MindSpore's ``vision.Inter``)."""
    NEAREST = "nearest"
    ANTIALIAS = "antialias"
    LINEAR = "linear"
    BILINEAR = "bilinear"
    PILCUBIC = "pilcubic"
    CUBIC = "cubic"
    BICUBIC = "bicubic"
    AREA = "area"


class Border(str, Enum):
    """Padding modes (MindSpore's ``vision.Border``)."""
    CONSTANT = "constant"
    EDGE = "edge"
    REFLECT = "reflect"
    SYMMETRIC = "symmetric"


class ImageBatchFormat(Enum):
    NHWC = 0
    NCHW = 1


class HWC2CHW:
    """(H, W, C) -> (C, H, W).

    Raises:
        ValueError: the image is not 3-D (or 2-D, taken as one channel).
    """

    def __call__(self, image):
        image = np.asarray(image)
        if image.ndim == 2:
            return image[None]
        if image.ndim != 3:
            raise ValueError(f"HWC2CHW: expected an (H, W, C) image, got shape {image.shape}")
        return np.ascontiguousarray(image.transpose(2, 0, 1))


class Normalize:
    """``(image - mean) / std`` per channel, as float32.

    Args:
        mean, std (sequence[float]): one value per channel.
        is_hwc (bool): channels last (True) or first. Default: True.
    Raises:
        ValueError: ``mean``/``std`` of different lengths, or a zero std.
    """

    def __init__(self, mean, std, is_hwc: bool = True):
        self.mean, self.std = np.asarray(mean, np.float32), np.asarray(std, np.float32)
        if self.mean.shape != self.std.shape or self.mean.ndim != 1:
            raise ValueError(f"Normalize: mean and std must be lists of the same length, got {mean} and {std}")
        if np.any(self.std == 0):
            raise ValueError(f"Normalize: std must not contain 0, got {std}")
        self.is_hwc = bool(is_hwc)

    def __call__(self, image):
        image = np.asarray(image, np.float32)
        shape = (-1,) if self.is_hwc else (-1, 1, 1)
        return (image - self.mean.reshape(shape)) / self.std.reshape(shape)


class Rescale:
    """``image * rescale + shift`` as float32."""

    def __init__(self, rescale: float, shift: float):
        self.rescale, self.shift = float(rescale), float(shift)

    def __call__(self, image):
        return np.asarray(image, np.float32) * np.float32(self.rescale) + np.float32(self.shift)


_NO_CODEC = "aotnn's dataset package has no image codec or augmentation; prepare images in numpy"
for _name in ("Decode", "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "RandomCropDecodeResize",
              "RandomHorizontalFlip", "RandomVerticalFlip", "RandomColorAdjust", "RandomRotation", "RandomAffine",
              "RandomColor", "RandomSharpness", "RandomPosterize", "RandomSolarize", "RandomErasing", "AutoContrast",
              "Equalize", "Invert", "GaussianBlur", "ToTensor", "ToPIL", "Pad", "RandomResize", "CutMixBatch",
              "MixUpBatch", "ToType", "Grayscale", "RandAugment", "AutoAugment", "TrivialAugmentWide"):
    globals()[_name] = unimplemented(_name, "mindspore.dataset.vision", _NO_CODEC)
del _name


__all__ = [_n for _n in dir() if not _n.startswith("_") and _n[0].isupper()]
