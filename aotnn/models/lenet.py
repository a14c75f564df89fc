"""LeNet-5 as in MindSpore's model zoo (``conv1``, ``conv2``, ``fc1``-``fc3``)."""
from __future__ import annotations

from .. import nn


class LeNet5(nn.Cell):
    """LeNet-5 for 32x32 images.

    Args:
        num_class: number of classes. Default: 10.
        num_channel: input channels. Default: 1.
        include_top: whether to include the fully connected layers. Default: True.
    """

    def __init__(self, num_class: int = 10, num_channel: int = 1, include_top: bool = True):
        super().__init__()
        self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
        self.relu = nn.ReLU()
        self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
        self.include_top = include_top
        if include_top:
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120)
            self.fc2 = nn.Dense(120, 84)
            self.fc3 = nn.Dense(84, num_class)

    def construct(self, x):
        x = self.max_pool2d(self.relu(self.conv1(x)))
        x = self.max_pool2d(self.relu(self.conv2(x)))
        if not self.include_top:
            return x
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def lenet5(num_class: int = 10, num_channel: int = 1) -> LeNet5:
    """A LeNet5 (factory for the CLI's ``aotnn.models:lenet5``)."""
    return LeNet5(num_class, num_channel)
