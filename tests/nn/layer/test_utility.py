"""Utility layers and TimeDistributed against PyTorch and numpy written from the documented formulas."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(3)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.asnumpy().astype(np.float64), expected, rtol=rtol, atol=atol)


# -- ClipByNorm -------------------------------------------------------------------------------------------
def clip_ref(x, clip, axis):
    norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=axis, keepdims=True))
    return x * clip / np.maximum(norm, clip)


def test_clip_by_norm():
    x = (RNG.standard_normal((4, 16)) * 10).astype(np.float32)
    out = nn.ClipByNorm()(Tensor(x), Tensor(np.array([20.0], np.float32)))
    assert out.dtype == ms.float32
    close(out, clip_ref(x, 20.0, None))
    close(nn.ClipByNorm()(Tensor(x), Tensor(np.array(1e4, np.float32))), x)       # under the limit: unchanged
    close(nn.ClipByNorm(axis=1)(Tensor(x), Tensor(np.array([25.0], np.float32))), clip_ref(x, 25.0, 1))
    half = nn.ClipByNorm(axis=(0,))(Tensor(x.astype(np.float16)), Tensor(np.array([5.0], np.float32)))
    assert half.dtype == ms.float32
    close(half, clip_ref(x.astype(np.float16).astype(np.float64), 5.0, 0), rtol=1e-3, atol=1e-3)


def test_clip_by_norm_errors():
    with pytest.raises(TypeError, match="axis"):
        nn.ClipByNorm(axis=1.0)
    with pytest.raises(TypeError, match="float16 or float32"):
        nn.ClipByNorm()(Tensor(np.ones((2, 2), np.int32)), Tensor(np.array([1.0], np.float32)))


# -- Norm ------------------------------------------------------------------------------------------------
def test_norm():
    x = np.array([[4, 4, 9, 1], [2, 1, 3, 6]], np.float32)
    close(nn.Norm(axis=0)(Tensor(x)), [4.472136, 4.1231055, 9.486833, 6.0827627])
    close(nn.Norm(axis=0, keep_dims=True)(Tensor(x)), torch.linalg.vector_norm(torch.tensor(x), dim=0, keepdim=True))
    y = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    close(nn.Norm(axis=(0, 2))(Tensor(y)), torch.linalg.vector_norm(torch.tensor(y), dim=(0, 2)))
    close(nn.Norm()(Tensor(y)), torch.linalg.vector_norm(torch.tensor(y)))
    close(nn.Norm(axis=1)(Tensor(y.astype(np.float16))), np.linalg.norm(y.astype(np.float16).astype(np.float64), axis=1),
          rtol=2e-3, atol=2e-3)
    with pytest.raises(TypeError, match="axis"):
        nn.Norm(axis=[0])
    with pytest.raises(TypeError, match="keep_dims"):
        nn.Norm(keep_dims=None)


# -- OneHot -------------------------------------------------------------------------------------------------
def test_one_hot_axes_values_and_dtype():
    indices = np.array([[1, 3], [0, 2]], np.int32)
    ref = F.one_hot(torch.tensor(indices, dtype=torch.int64), 4).numpy()        # (2, 2, 4), axis -1
    close(nn.OneHot(depth=4)(Tensor(indices)), ref)
    close(nn.OneHot(depth=4, axis=1)(Tensor(indices)), np.moveaxis(ref, -1, 1))
    close(nn.OneHot(depth=4, axis=0)(Tensor(indices)), np.moveaxis(ref, -1, 0))
    out = nn.OneHot(depth=3, on_value=5, off_value=-1, dtype=ms.int32)(Tensor(np.array([0, 2, 7, -1], np.int64)))
    assert out.dtype == ms.int32
    assert out.asnumpy().tolist() == [[5, -1, -1], [-1, -1, 5], [-1, -1, -1], [-1, -1, -1]]
    out16 = nn.OneHot(depth=2, dtype=ms.float16)(Tensor(np.array([1, 0], np.int32)))
    assert out16.dtype == ms.float16 and out16.asnumpy().tolist() == [[0, 1], [1, 0]]


def test_one_hot_errors():
    with pytest.raises(TypeError, match="depth"):
        nn.OneHot(depth=2.0)
    with pytest.raises(ValueError, match="depth"):
        nn.OneHot(depth=-1)
    with pytest.raises(TypeError, match="indices"):
        nn.OneHot(depth=2)(Tensor(np.array([0.0, 1.0], np.float32)))


# -- Roll / Tril / Triu -----------------------------------------------------------------------------------
def test_roll():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    close(nn.Roll(shift=[1, -2], axis=[0, 1])(Tensor(x)), torch.roll(torch.tensor(x), (1, -2), (0, 1)))
    v = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    close(nn.Roll(shift=7, axis=-1)(Tensor(v)), torch.roll(torch.tensor(v), 7, -1))
    ints = np.arange(6, dtype=np.int32)
    assert nn.Roll(2, 0)(Tensor(ints)).asnumpy().tolist() == np.roll(ints, 2).tolist()
    with pytest.raises(TypeError, match="shift"):
        nn.Roll(shift=1.5, axis=0)
    with pytest.raises(ValueError, match="length"):
        nn.Roll(shift=[1, 2], axis=0)
    with pytest.raises(ValueError, match="axis"):
        nn.Roll(shift=1, axis=2)(Tensor(x))


def test_tril_triu():
    x = np.arange(1, 17).reshape(4, 4)
    for k in (0, 1, 2, -1):
        assert nn.Tril()(Tensor(x), k).asnumpy().tolist() == np.tril(x, k).tolist()
        assert nn.Triu()(Tensor(x), k).asnumpy().tolist() == np.triu(x, k).tolist()
    batch = RNG.standard_normal((2, 3, 5)).astype(np.float32)
    close(nn.Tril()(Tensor(batch), -1), torch.tril(torch.tensor(batch), -1))
    close(nn.Triu()(Tensor(batch.astype(np.float16)), 2), torch.triu(torch.tensor(batch.astype(np.float16)), 2))
    with pytest.raises(TypeError, match="k"):
        nn.Tril()(Tensor(x), 1.0)
    with pytest.raises(ValueError, match="2-D"):
        nn.Triu()(Tensor(np.ones(3, np.float32)))


# -- L1Regularizer / Flatten -------------------------------------------------------------------------------
def test_l1_regularizer():
    w = np.array([[1.0, -2.0], [-3.0, 4.0]], np.float32)
    out = nn.L1Regularizer(0.5)(Tensor(w))
    assert out.shape == () and out.dtype == ms.float32 and float(out.asnumpy()) == 5.0
    big = RNG.standard_normal((3, 4, 5)).astype(np.float16)
    out = nn.L1Regularizer(2)(Tensor(big))
    assert out.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy(), 2 * np.abs(big.astype(np.float64)).sum(), rtol=1e-5)
    with pytest.raises(TypeError, match="scale"):
        nn.L1Regularizer("0.5")
    with pytest.raises(ValueError, match="scale"):
        nn.L1Regularizer(0)
    with pytest.raises(ValueError, match="scale"):
        nn.L1Regularizer(float("inf"))


def test_flatten():
    x = RNG.standard_normal((2, 2, 3)).astype(np.float32)
    close(nn.Flatten()(Tensor(x)), torch.flatten(torch.tensor(x), 1))


# -- TimeDistributed -------------------------------------------------------------------------------------
def dense_ref(dense, x):
    return F.linear(torch.tensor(x), torch.tensor(dense.weight.asnumpy()), torch.tensor(dense.bias.asnumpy()))


def test_time_distributed_reshape_mode():
    x = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    dense = nn.Dense(3, 6)
    out = nn.TimeDistributed(dense, time_axis=1, reshape_with_axis=0)(Tensor(x))
    assert out.shape == (4, 5, 6)
    close(out, dense_ref(dense, x))
    # time axis 2 merged with axis 0: the result has time next to batch, (N, T, C, out)
    y = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    dense = nn.Dense(5, 6)
    out = nn.TimeDistributed(dense, time_axis=2, reshape_with_axis=0)(Tensor(y))
    close(out, dense_ref(dense, y.transpose(0, 2, 1, 3)))


def test_time_distributed_split_mode():
    x = RNG.standard_normal((5, 4, 3)).astype(np.float32)
    dense = nn.Dense(3, 2)
    close(nn.TimeDistributed(dense, time_axis=0)(Tensor(x)), dense_ref(dense, x))
    # a primitive whose result depends on the batch: softmax over the batch axis of every time slice
    y = RNG.standard_normal((3, 6, 2)).astype(np.float32)
    out = nn.TimeDistributed(ops.Softmax(axis=0), time_axis=-2)(Tensor(y))
    close(out, torch.softmax(torch.tensor(y), dim=0))


def test_time_distributed_errors():
    with pytest.raises(TypeError, match="layer"):
        nn.TimeDistributed(lambda x: x, time_axis=1)
    with pytest.raises(TypeError, match="time_axis"):
        nn.TimeDistributed(nn.Dense(3, 2), time_axis=1.0)
    with pytest.raises(TypeError, match="reshape_with_axis"):
        nn.TimeDistributed(nn.Dense(3, 2), time_axis=1, reshape_with_axis="0")
    with pytest.raises(ValueError, match="3-D"):
        nn.TimeDistributed(nn.Dense(3, 2), time_axis=1)(Tensor(np.ones((2, 3), np.float32)))


# -- the functional ops and primitives behind these layers ---------------------------------------------
def test_functional_ops_and_primitives():
    idx = Tensor(np.array([2, 0], np.int32))
    out = ops.one_hot(idx, 3, Tensor(2.0, ms.float16), Tensor(0.0, ms.float16))
    assert out.dtype == ms.float16 and out.asnumpy().tolist() == [[0, 0, 2], [2, 0, 0]]
    assert ops.OneHot(axis=0)(idx, 3, 1, 0).asnumpy().tolist() == [[0, 1], [0, 0], [1, 0]]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert ops.roll(Tensor(x), 2).asnumpy().tolist() == np.roll(x, 2).tolist()          # flattened
    assert ops.Roll(-1, 1)(Tensor(x)).asnumpy().tolist() == np.roll(x, -1, 1).tolist()
    assert ops.Triu(1)(Tensor(x)).asnumpy().tolist() == np.triu(x, 1).tolist()
    assert ops.range(0, 1, 0.25).asnumpy().tolist() == [0, 0.25, 0.5, 0.75]
    assert ops.range(5, 0, -2).dtype == ms.int64
    with pytest.raises(ValueError, match="dims"):
        ops.roll(Tensor(x), 1, 2)
    with pytest.raises(TypeError, match="indices"):
        ops.one_hot(Tensor(x), 3)
    with pytest.raises(ValueError, match="step"):
        ops.range(0, 3, 0)
