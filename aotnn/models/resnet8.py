"""ResNet-8, the image classifier of MLPerf Tiny (CIFAR-10 sized inputs)."""
from __future__ import annotations

from .. import nn


def _conv(in_channels: int, out_channels: int, kernel: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_channels, out_channels, kernel, stride=stride, pad_mode="same", has_bias=True)


class ResNet8Block(nn.Cell):
    """Two 3x3 convolutions with BatchNorm; the shortcut is a strided 1x1 convolution where the
    shape changes (without BatchNorm, as in MLPerf Tiny's reference)."""

    def __init__(self, in_channels: int, out_channels: int, stride: int):
        super().__init__()
        self.conv1 = _conv(in_channels, out_channels, 3, stride)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = _conv(out_channels, out_channels, 3)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU()
        self.project = stride != 1 or in_channels != out_channels
        if self.project:
            self.shortcut = _conv(in_channels, out_channels, 1, stride)

    def construct(self, x):
        out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        identity = self.shortcut(x) if self.project else x
        return self.relu(out + identity)


class ResNet8(nn.Cell):
    """ResNet-8 as in MLPerf Tiny's image-classification benchmark.

    Input ``(N, 3, 32, 32)``: a 3x3 convolution to 16 channels (BatchNorm, ReLU), three residual
    blocks of 16, 32 and 64 channels (the last two with stride 2), average pooling over the 8x8
    map and a Dense layer. Returns logits (the benchmark's softmax is left to the caller).

    Args:
        num_classes: outputs. Default: 10.
    """

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.conv1 = _conv(3, 16, 3)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU()
        self.stack1 = ResNet8Block(16, 16, 1)
        self.stack2 = ResNet8Block(16, 32, 2)
        self.stack3 = ResNet8Block(32, 64, 2)
        self.pool = nn.AvgPool2d(kernel_size=8)
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.stack3(self.stack2(self.stack1(x)))
        return self.dense(self.flatten(self.pool(x)))


def resnet8(num_classes: int = 10) -> ResNet8:
    """A ResNet-8 for ``(1, 3, 32, 32)`` images (factory for ``aotnn.models:resnet8``)."""
    return ResNet8(num_classes)
