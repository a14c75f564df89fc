"""EfficientNet-B0 (torchvision's layout): MBConv blocks with SiLU and squeeze-and-excitation."""
from __future__ import annotations

import math

from torch import nn


def conv_bn_silu(cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.SiLU(inplace=True))


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.act, self.gate = nn.SiLU(), nn.Sigmoid()

    def forward(self, x):
        scale = self.gate(self.fc2(self.act(self.fc1(nn.functional.adaptive_avg_pool2d(x, 1)))))
        return x * scale


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [conv_bn_silu(cin, hidden, 1)] if expand != 1 else []
        layers += [conv_bn_silu(hidden, hidden, kernel, stride, groups=hidden),
                   SqueezeExcitation(hidden, max(1, cin // 4)),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    """Args: width: channel multiplier; depth: repeat multiplier; num_classes: classifier outputs."""

    SETTINGS = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
                (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]

    def __init__(self, width: float = 1.0, depth: float = 1.0, num_classes: int = 1000):
        super().__init__()
        scale = lambda c: max(8, int(c * width + 4) // 8 * 8)  # noqa: E731
        layers = [conv_bn_silu(3, scale(32), 3, 2)]
        for expand, kernel, stride, cin, cout, repeats in self.SETTINGS:
            for i in range(int(math.ceil(repeats * depth))):
                layers.append(MBConv(scale(cin) if i == 0 else scale(cout), scale(cout), kernel,
                                     stride if i == 0 else 1, expand))
        last = scale(1280)
        layers.append(conv_bn_silu(scale(320), last, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        return self.classifier(nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1))
