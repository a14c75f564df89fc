"""ResNet-18 written the way many MindSpore scripts write it, for tools/bench_models.py.

The zoo's ResNet-18 (``aotnn.models.resnet18``) pools with a "same" MaxPool2d and ends on a mean.
This one pads explicitly before a "valid" MaxPool2d (``nn.Pad``), ends on ``AvgPool2d(7)`` and
``Flatten``: the same function, a different graph shape for the default schedules.
"""
from __future__ import annotations

from aotnn import nn
from aotnn.models.resnet import ResNet


class ResNet18Rewritten(ResNet):
    """ResNet-18 with explicit padding, a "valid" max pool and a 7x7 average pool.

    Args:
        num_classes: classifier outputs.
    """

    def __init__(self, num_classes: int = 1000):
        super().__init__([2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2], num_classes)
        self.pad = nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1)))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        self.avgpool = nn.AvgPool2d(kernel_size=7)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.maxpool(self.pad(x))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.end_point(self.flatten(self.avgpool(x)))


def resnet18_rewritten(num_classes: int = 1000) -> ResNet18Rewritten:
    """ResNet-18 with ``nn.Pad`` + "valid" MaxPool2d and ``AvgPool2d(7)`` + ``Flatten``."""
    return ResNet18Rewritten(num_classes)
