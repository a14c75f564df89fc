"""MobileNetV2 as in MindSpore's model zoo (``backbone.features.*``, ``head.dense``)."""
from __future__ import annotations

from .. import nn, ops


def _make_divisible(value: float, divisor: int = 8, min_value: int | None = None) -> int:
    """``value`` rounded to a multiple of ``divisor``, never more than 10% below it."""
    min_value = min_value or divisor
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    if rounded < 0.9 * value:
        rounded += divisor
    return rounded


class ConvBNReLU(nn.Cell):
    """Convolution, batch norm and ReLU6; depthwise when ``groups`` is the input channel count."""

    def __init__(self, in_planes: int, out_planes: int, kernel_size: int = 3, stride: int = 1, groups: int = 1):
        super().__init__()
        padding = (kernel_size - 1) // 2
        conv = nn.Conv2d(in_planes, out_planes, kernel_size, stride, pad_mode="pad", padding=padding,
                         group=groups, weight_init="HeNormal")
        self.features = nn.SequentialCell([conv, nn.BatchNorm2d(out_planes), nn.ReLU6()])

    def construct(self, x):
        return self.features(x)


class InvertedResidual(nn.Cell):
    """Expand (1x1), depthwise (3x3), project (1x1); a shortcut when the shape allows one."""

    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"stride: expected 1 or 2, got {stride}")
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden_dim, kernel_size=1))
        layers += [
            ConvBNReLU(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
            nn.Conv2d(hidden_dim, oup, kernel_size=1, stride=1, has_bias=False, weight_init="HeNormal"),
            nn.BatchNorm2d(oup),
        ]
        self.conv = nn.SequentialCell(layers)

    def construct(self, x):
        out = self.conv(x)
        if self.use_res_connect:
            return ops.add(x, out)
        return out


class MobileNetV2Backbone(nn.Cell):
    """The feature extractor: a strided stem, 17 inverted residual blocks and a 1x1 expansion."""

    def __init__(self, width_mult: float = 1.0, inverted_residual_setting=None, round_nearest: int = 8,
                 input_channel: int = 32, last_channel: int = 1280):
        super().__init__()
        self.cfgs = inverted_residual_setting or [
            # expansion t, channels c, repeats n, stride s
            [1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.out_channels = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [ConvBNReLU(3, input_channel, stride=2)]
        for t, c, n, s in self.cfgs:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                input_channel = output_channel
        features.append(ConvBNReLU(input_channel, self.out_channels, kernel_size=1))
        self.features = nn.SequentialCell(features)

    def construct(self, x):
        return self.features(x)


class MobileNetV2Head(nn.Cell):
    """Global average pooling and the classifier."""

    def __init__(self, input_channel: int = 1280, num_classes: int = 1000):
        super().__init__()
        self.dense = nn.Dense(input_channel, num_classes, has_bias=True)

    def construct(self, x):
        return self.dense(ops.mean(x, (2, 3), False))


class MobileNetV2(nn.Cell):
    """MobileNetV2 (Sandler et al., 2018) for 224x224 images.

    Args:
        num_classes: classifier outputs. Default: 1000.
        width_mult: channel multiplier. Default: 1.0.
        round_nearest: channel counts are multiples of this. Default: 8.
    """

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, round_nearest: int = 8):
        super().__init__()
        self.backbone = MobileNetV2Backbone(width_mult=width_mult, round_nearest=round_nearest)
        self.head = MobileNetV2Head(self.backbone.out_channels, num_classes)

    def construct(self, x):
        return self.head(self.backbone(x))


def mobilenetv2(num_classes: int = 1000) -> MobileNetV2:
    """MobileNetV2 with width 1.0 (factory for the CLI's ``aotnn.models:mobilenetv2``)."""
    return MobileNetV2(num_classes)
