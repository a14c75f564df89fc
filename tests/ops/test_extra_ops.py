"""addn, addmv, addbmm, atan2, sinc, mse_loss, diag, scatter, msort, cumprod, cross, aminmax, dropout and the
primitives Slice, ReduceAll/Any/Std, BroadcastTo, Range, ReverseV2, TensorShape, Logit, Dropout, Dropout2D
against PyTorch CPU and numpy; equality of bool tensors."""
import numpy as np
import pytest
import torch

import aotnn as ms
from aotnn import Tensor, ops

RNG = np.random.default_rng(22)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got.asnumpy(), want.numpy() if isinstance(want, torch.Tensor) else want,
                               rtol=rtol, atol=atol)


def test_products_against_torch():
    close(ops.addn([Tensor(X), Tensor(Y), Tensor(X)]), 2 * X + Y)
    m, v = RNG.standard_normal((3, 5)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
    close(ops.addmv(Tensor(X[:, 0]), Tensor(m), Tensor(v), beta=0.5, alpha=2),
          torch.addmv(t(X[:, 0]), t(m), t(v), beta=0.5, alpha=2))
    b1, b2 = RNG.standard_normal((2, 3, 5)).astype(np.float32), RNG.standard_normal((2, 5, 4)).astype(np.float32)
    close(ops.addbmm(Tensor(X), Tensor(b1), Tensor(b2), beta=2, alpha=0.5),
          torch.addbmm(t(X), t(b1), t(b2), beta=2, alpha=0.5), atol=1e-5)
    a, b = RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal((4, 3)).astype(np.float32)
    close(ops.cross(Tensor(a), Tensor(b)), torch.linalg.cross(t(a), t(b), dim=1))
    close(ops.cross(Tensor(a.T.copy()), Tensor(b.T.copy()), 0), torch.linalg.cross(t(a.T), t(b.T), dim=0))


def test_element_wise_against_torch():
    y = np.array([1.0, -1.0, 0.0, 1.0, 0.0, -2.0], np.float32)
    x = np.array([-1.0, -1.0, -1.0, 0.0, 0.0, 3.0], np.float32)
    close(ops.atan2(Tensor(y), Tensor(x)), torch.atan2(t(y), t(x)))
    close(ops.atan2(Tensor(Y), Tensor(X)), torch.atan2(t(Y), t(X)))
    z = np.array([0.0, 0.5, -1.5, 2.0], np.float32)
    close(ops.sinc(Tensor(z)), torch.sinc(t(z)), atol=1e-6)
    for reduction in ("mean", "sum", "none"):
        close(ops.mse_loss(Tensor(X), Tensor(Y), reduction), torch.nn.functional.mse_loss(t(X), t(Y), reduction=reduction))


def test_reorderings_against_torch():
    close(ops.diag(Tensor(X[0])), torch.diag(t(X[0])))
    np.testing.assert_array_equal(ops.diag(Tensor(X[:2, :2])).shape, (2, 2, 2, 2))
    index = np.array([[2, 0, 1, 1]], np.int64)
    src = RNG.standard_normal((1, 4)).astype(np.float32)
    close(ops.scatter(Tensor(X), 0, Tensor(index), Tensor(src)), t(X).scatter(0, t(index), t(src)))
    close(ops.msort(Tensor(X)), torch.msort(t(X)))
    close(ops.cumprod(Tensor(X), 1), torch.cumprod(t(X), 1))
    close(ops.cumprod(Tensor(X), 0), torch.cumprod(t(X), 0))
    low, high = ops.aminmax(Tensor(X), axis=1)
    close(low, X.min(1)), close(high, X.max(1))


def test_dropout_functional():
    x = np.ones((64, 64), np.float32)
    np.testing.assert_array_equal(ops.dropout(Tensor(x), 0.5, training=False).asnumpy(), x)
    ms.set_seed(1)
    out = ops.dropout(Tensor(x), 0.25).asnumpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.15 < (out == 0).mean() < 0.35
    with pytest.raises(ValueError, match="p must be"):
        ops.dropout(Tensor(x), 1.5)


def test_primitives():
    close(ops.Slice()(Tensor(X), (1, 1), (2, -1)), X[1:3, 1:])
    flags = X > 0
    np.testing.assert_array_equal(ops.ReduceAll()(Tensor(flags), 1).asnumpy(), flags.all(1))
    np.testing.assert_array_equal(ops.ReduceAny(True)(Tensor(flags), 0).asnumpy(), flags.any(0, keepdims=True))
    deviation, mean = ops.ReduceStd(axis=1)(Tensor(X))
    close(deviation, X.std(1, ddof=1)), close(mean, X.mean(1))
    close(ops.BroadcastTo((2, 3, 4))(Tensor(X)), np.broadcast_to(X, (2, 3, 4)))
    np.testing.assert_array_equal(ops.Range()(Tensor(np.float32(1)), Tensor(np.float32(6)),
                                              Tensor(np.float32(2))).asnumpy(), [1, 3, 5])
    close(ops.ReverseV2((0, 1))(Tensor(X)), X[::-1, ::-1])
    np.testing.assert_array_equal(ops.TensorShape()(Tensor(X)).asnumpy(), [3, 4])
    p = RNG.uniform(0.01, 0.99, (5,)).astype(np.float32)
    close(ops.Logit()(Tensor(p)), torch.logit(t(p)))
    close(ops.Logit(0.1)(Tensor(p)), torch.logit(t(p), eps=0.1))
    ms.set_seed(2)
    out, mask = ops.Dropout(0.5)(Tensor(np.ones((32, 32), np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), mask.asnumpy() * 2)
    out, mask = ops.Dropout2D(0.5)(Tensor(np.ones((4, 8, 3, 3), np.float32)))
    assert mask.dtype == ms.bool_
    channel_kept = mask.asnumpy().all(axis=(2, 3))
    np.testing.assert_array_equal(channel_kept, mask.asnumpy().any(axis=(2, 3)))  # whole channels


def test_equality_of_bool_tensors():
    a, b = np.array([True, False, True]), np.array([True, True, False])
    np.testing.assert_array_equal(ops.equal(Tensor(a), Tensor(b)).asnumpy(), a == b)
    np.testing.assert_array_equal(ops.not_equal(Tensor(a), Tensor(b)).asnumpy(), a != b)
    np.testing.assert_array_equal(ops.not_equal(Tensor(a), 0).asnumpy(), a)


def test_integer_powers_stay_exact_integers():
    # mindcv's ConViT squares int32 index grids
    x = np.array([-3, 2, 5, 0], np.int32)
    got = Tensor(x) ** 2
    assert got.dtype == ms.int32
    np.testing.assert_array_equal(got.asnumpy(), x ** 2)
    np.testing.assert_array_equal(ops.pow(Tensor(x), Tensor(np.array([3, 0, 2, 4], np.int32))).asnumpy(),
                                  x ** np.array([3, 0, 2, 4]))
