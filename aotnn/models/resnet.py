"""ResNet-18 as in MindSpore's model zoo (``conv1``, ``bn1``, ``layer1``-``layer4``, ``end_point``)."""
from __future__ import annotations

from .. import nn


def _conv(in_channel: int, out_channel: int, kernel: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(in_channel, out_channel, kernel_size=kernel, stride=stride, pad_mode="pad",
                     padding=kernel // 2, weight_init="HeNormal")


class ResidualBlockBase(nn.Cell):
    """The basic block of ResNet-18/34: two 3x3 convolutions and a shortcut."""

    expansion = 1

    def __init__(self, in_channel: int, out_channel: int, stride: int = 1):
        super().__init__()
        self.conv1 = _conv(in_channel, out_channel, 3, stride)
        self.bn1d = nn.BatchNorm2d(out_channel)
        self.conv2 = _conv(out_channel, out_channel, 3, 1)
        self.bn2d = nn.BatchNorm2d(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv(in_channel, out_channel, 1, stride),
                                                        nn.BatchNorm2d(out_channel)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1d(self.conv1(x)))
        out = self.bn2d(self.conv2(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        return self.relu(out + identity)


class ResNet(nn.Cell):
    """ResNet with basic blocks.

    Args:
        layer_nums: blocks per stage, e.g. [2, 2, 2, 2] for ResNet-18.
        in_channels: input channels per stage.
        out_channels: output channels per stage.
        strides: stride of each stage's first block.
        num_classes: classifier outputs.
    """

    def __init__(self, layer_nums, in_channels, out_channels, strides, num_classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, pad_mode="pad", padding=3, weight_init="HeNormal")
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        for index in range(4):
            blocks = [ResidualBlockBase(in_channels[index], out_channels[index], strides[index])]
            blocks += [ResidualBlockBase(out_channels[index], out_channels[index], 1)
                       for _ in range(1, layer_nums[index])]
            setattr(self, f"layer{index + 1}", nn.SequentialCell(blocks))
        self.flatten = nn.Flatten()
        self.end_point = nn.Dense(out_channels[3], num_classes)

    def construct(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = x.mean(axis=(2, 3), keep_dims=True)
        return self.end_point(self.flatten(x))


def resnet18(class_num: int = 1000) -> ResNet:
    """ResNet-18 (MindSpore model zoo layout)."""
    return ResNet([2, 2, 2, 2], [64, 64, 128, 256], [64, 128, 256, 512], [1, 2, 2, 2], class_num)
