"""DS-CNN, the keyword spotter of MLPerf Tiny (depthwise-separable CNN on MFCC features)."""
from __future__ import annotations

from .. import nn


def _conv_bn_relu(in_channels: int, out_channels: int, kernel, stride=1, group: int = 1) -> nn.SequentialCell:
    return nn.SequentialCell([nn.Conv2d(in_channels, out_channels, kernel, stride=stride, pad_mode="same",
                                        group=group, has_bias=True),
                              nn.BatchNorm2d(out_channels), nn.ReLU()])


class DSCNN(nn.Cell):
    """DS-CNN (small) as in MLPerf Tiny's keyword-spotting benchmark (Zhang et al., "Hello Edge").

    Input: MFCC features, ``(N, 1, 49, 10)`` (49 frames of 10 coefficients). A 10x4 convolution
    with stride 2 to 64 channels, then ``num_blocks`` depthwise-separable blocks (3x3 depthwise,
    1x1 pointwise; each followed by BatchNorm and ReLU), average pooling over the whole 25x5 map
    and a Dense layer. Returns logits (the benchmark's softmax is left to the caller); dropout,
    a training-only layer, is left out.

    Args:
        num_classes: outputs (12 for Speech Commands: 10 words, silence, unknown). Default: 12.
        channels: channels of every layer. Default: 64.
        num_blocks: depthwise-separable blocks. Default: 4.
    """

    def __init__(self, num_classes: int = 12, channels: int = 64, num_blocks: int = 4):
        super().__init__()
        self.stem = _conv_bn_relu(1, channels, (10, 4), stride=2)
        blocks = []
        for _ in range(num_blocks):
            blocks += [_conv_bn_relu(channels, channels, 3, group=channels), _conv_bn_relu(channels, channels, 1)]
        self.blocks = nn.SequentialCell(blocks)
        self.pool = nn.AvgPool2d(kernel_size=(25, 5))
        self.flatten = nn.Flatten()
        self.dense = nn.Dense(channels, num_classes)

    def construct(self, x):
        x = self.blocks(self.stem(x))
        return self.dense(self.flatten(self.pool(x)))


def ds_cnn(num_classes: int = 12) -> DSCNN:
    """A DS-CNN keyword spotter for ``(1, 1, 49, 10)`` MFCC inputs (factory for ``aotnn.models:ds_cnn``)."""
    return DSCNN(num_classes)
