"""PixelShuffle / PixelUnshuffle / ChannelShuffle / Unflatten and channel dropout (Dropout1d/2d/3d) against
PyTorch CPU and the dropout definition."""
import numpy as np
import pytest
import torch
import torch.nn as tnn

import aotnn as ms
from aotnn import Tensor, nn

RNG = np.random.default_rng(17)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_pixel_shuffle_and_unshuffle_against_torch():
    x = rand(2, 8, 3, 4)
    np.testing.assert_array_equal(nn.PixelShuffle(2)(Tensor(x)).asnumpy(),
                                  tnn.PixelShuffle(2)(torch.from_numpy(x)).numpy())
    y = rand(1, 2, 6, 9)
    np.testing.assert_array_equal(nn.PixelUnshuffle(3)(Tensor(y)).asnumpy(),
                                  tnn.PixelUnshuffle(3)(torch.from_numpy(y)).numpy())
    with pytest.raises(ValueError, match="divisible"):
        nn.PixelShuffle(3)(Tensor(x))


def test_channel_shuffle_against_torch():
    x = rand(2, 6, 2, 3)
    np.testing.assert_array_equal(nn.ChannelShuffle(3)(Tensor(x)).asnumpy(),
                                  tnn.ChannelShuffle(3)(torch.from_numpy(x)).numpy())
    with pytest.raises(ValueError, match="groups"):
        nn.ChannelShuffle(0)


def test_unflatten_against_torch():
    x = rand(2, 12, 3)
    np.testing.assert_array_equal(nn.Unflatten(1, (3, -1))(Tensor(x)).asnumpy(),
                                  tnn.Unflatten(1, (3, 4))(torch.from_numpy(x)).numpy())
    with pytest.raises(ValueError, match="does not fit"):
        nn.Unflatten(-1, (2, 2))(Tensor(x))


@pytest.mark.parametrize("cls, shape, spatial", [(nn.Dropout1d, (4, 16, 5), 1), (nn.Dropout2d, (4, 16, 3, 3), 2),
                                                 (nn.Dropout3d, (16, 2, 2, 3), 3)])
def test_channel_dropout_zeroes_whole_channels(cls, shape, spatial):
    ms.set_seed(3)
    x = np.abs(rand(*shape)) + 0.5
    layer = cls(p=0.5)
    np.testing.assert_array_equal(layer(Tensor(x)).asnumpy(), x)  # inference: identity
    layer.set_train()
    out = layer(Tensor(x)).asnumpy()
    dropped = (out == 0).all(axis=tuple(range(out.ndim - spatial, out.ndim)))
    kept = ~dropped
    assert dropped.any() and kept.any()
    np.testing.assert_allclose(out[kept], (x * 2)[kept], rtol=1e-6)
    with pytest.raises(ValueError, match="range"):
        cls(p=1.0)
