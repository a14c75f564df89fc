"""Tensor methods MindSpore 2.x model code calls (cumsum, split, chunk, tile, swapaxes, masked_fill), against
numpy; mindcv's EdgeNeXt / XCiT call ``mask.cumsum(1, dtype=float32)``."""
import numpy as np

import aotnn as ms
from aotnn import Tensor

RNG = np.random.default_rng(23)


def test_cumsum_method():
    mask = RNG.integers(0, 2, (2, 3, 4)).astype(bool)
    got = Tensor(mask).cumsum(1, dtype=ms.float32)
    assert got.dtype == ms.float32
    np.testing.assert_array_equal(got.asnumpy(), np.cumsum(mask, 1, dtype=np.float32))
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(Tensor(x).cumsum().asnumpy(), np.cumsum(x), rtol=1e-6)


def test_shape_methods():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    parts = Tensor(x).split(2, axis=1)
    assert [p.shape for p in parts] == [(4, 2)] * 3
    assert [p.shape for p in Tensor(x).chunk(3, 0)] == [(2, 6), (2, 6)]
    np.testing.assert_array_equal(Tensor(x).tile((2, 1)).asnumpy(), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(Tensor(x).swapaxes(0, 1).asnumpy(), x.T)
    mask = x > 0
    np.testing.assert_array_equal(Tensor(x).masked_fill(Tensor(mask), 0.0).asnumpy(), np.where(mask, 0, x))
