"""MindSpore 2.x functional math aliases and helpers (tensor_math_ops) against PyTorch CPU and numpy."""
import numpy as np
import pytest
import torch

from aotnn import Tensor, ops

RNG = np.random.default_rng(21)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
P = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)  # in (0, 1): asin, acos, atanh, logs
BIG = RNG.uniform(1.1, 3.0, (3, 4)).astype(np.float32)  # > 1: acosh


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


UNARY = [
    ("sinh", X, torch.sinh), ("cosh", X, torch.cosh), ("asin", P, torch.asin), ("acos", P, torch.acos),
    ("asinh", X, torch.asinh), ("acosh", BIG, torch.acosh), ("atanh", P, torch.atanh), ("trunc", X * 3, torch.trunc),
    ("frac", X * 3, torch.frac), ("log2", BIG, torch.log2), ("log10", BIG, torch.log10), ("log1p", P, torch.log1p),
    ("expm1", X, torch.expm1), ("erfc", X, torch.erfc), ("deg2rad", X * 90, torch.deg2rad),
    ("ravel", X, torch.ravel), ("t", X, torch.t),
]


@pytest.mark.parametrize("name, x, reference", UNARY, ids=[u[0] for u in UNARY])
def test_unary_against_torch(name, x, reference):
    got = getattr(ops, name)(Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, reference(t(x)).numpy(), rtol=2e-5, atol=2e-6)


BINARY = [
    ("eq", torch.eq), ("ne", torch.ne), ("gt", torch.gt), ("ge", torch.ge), ("lt", torch.lt), ("le", torch.le),
    ("true_divide", torch.true_divide), ("floor_divide", torch.floor_divide), ("remainder", torch.remainder),
    ("fmod", torch.fmod), ("xlogy", None), ("logical_xor", None),
]


@pytest.mark.parametrize("name, reference", BINARY, ids=[b[0] for b in BINARY])
def test_binary_against_torch(name, reference):
    a, b = X * 3, Y + np.sign(Y)  # b kept away from 0 for the divisions
    if name == "xlogy":
        a, b, reference = np.where(X > 0, X, 0).astype(np.float32), BIG, torch.xlogy
    if name == "logical_xor":
        a, b, reference = X > 0, Y > 0, torch.logical_xor
    got = getattr(ops, name)(Tensor(a), Tensor(b)).asnumpy()
    np.testing.assert_allclose(got, reference(t(a), t(b)).numpy(), rtol=1e-5, atol=1e-5)


def test_ternary_products_and_reductions_against_torch():
    np.testing.assert_allclose(ops.lerp(Tensor(X), Tensor(Y), 0.3).asnumpy(), torch.lerp(t(X), t(Y), 0.3).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(ops.addcmul(Tensor(X), Tensor(Y), Tensor(P), 0.5).asnumpy(),
                               torch.addcmul(t(X), t(Y), t(P), value=0.5).numpy(), rtol=1e-6)
    np.testing.assert_allclose(ops.addcdiv(Tensor(X), Tensor(Y), Tensor(P), 2).asnumpy(),
                               torch.addcdiv(t(X), t(Y), t(P), value=2).numpy(), rtol=1e-5)
    a, b, c = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 4, 5), (2, 3, 5)))
    np.testing.assert_allclose(ops.bmm(Tensor(a), Tensor(b)).asnumpy(), torch.bmm(t(a), t(b)).numpy(), rtol=1e-5)
    np.testing.assert_allclose(ops.baddbmm(Tensor(c), Tensor(a), Tensor(b), 0.5, 2).asnumpy(),
                               torch.baddbmm(t(c), t(a), t(b), beta=0.5, alpha=2).numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ops.addmm(Tensor(c[0]), Tensor(a[0]), Tensor(b[0]), beta=2, alpha=0.5).asnumpy(),
                               torch.addmm(t(c[0]), t(a[0]), t(b[0]), beta=2, alpha=0.5).numpy(), rtol=1e-5,
                               atol=1e-5)
    v, w = X[0], Y[0]
    np.testing.assert_allclose(ops.outer(Tensor(v), Tensor(w)).asnumpy(), np.outer(v, w), rtol=1e-6)
    np.testing.assert_allclose(ops.dot(Tensor(v), Tensor(w)).asnumpy(), np.dot(v, w), rtol=1e-5)
    np.testing.assert_allclose(ops.var(Tensor(X), 1, ddof=1).asnumpy(), X.var(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(ops.std(Tensor(X), keepdims=True).asnumpy(), X.std(keepdims=True), rtol=1e-5)


def test_nan_inf_handling_against_numpy():
    x = np.array([[1.5, np.nan, np.inf], [-np.inf, 0.0, -2.0]], np.float32)
    np.testing.assert_array_equal(ops.isnan(Tensor(x)).asnumpy(), np.isnan(x))
    np.testing.assert_array_equal(ops.isinf(Tensor(x)).asnumpy(), np.isinf(x))
    np.testing.assert_array_equal(ops.isfinite(Tensor(x)).asnumpy(), np.isfinite(x))
    np.testing.assert_array_equal(ops.nan_to_num(Tensor(x)).asnumpy(), np.nan_to_num(x))
    np.testing.assert_array_equal(ops.nan_to_num(Tensor(x), 1.0, 5.0, -5.0).asnumpy(),
                                  np.nan_to_num(x, nan=1.0, posinf=5.0, neginf=-5.0))
    np.testing.assert_allclose(ops.nansum(Tensor(x[:, ::2]), 1).asnumpy(), np.nansum(x[:, ::2], 1))
    np.testing.assert_array_equal(ops.isclose(Tensor(x), Tensor(x), equal_nan=True).asnumpy(),
                                  np.isclose(x, x, equal_nan=True))


def test_counting_and_truth_reductions_against_numpy():
    m = np.array([[0, 2, 0], [1, 1, 0]], np.int32)
    np.testing.assert_array_equal(ops.count_nonzero(Tensor(m), 1).asnumpy(), np.count_nonzero(m, 1))
    np.testing.assert_array_equal(ops.all(Tensor(m), 0).asnumpy(), m.all(0))
    np.testing.assert_array_equal(ops.any(Tensor(m), 1, keep_dims=True).asnumpy(), m.any(1, keepdims=True))
    assert bool(ops.any(Tensor(m)).asnumpy()) and not bool(ops.all(Tensor(m)).asnumpy())


def test_indexing_helpers_against_torch():
    index = np.array([2, 0, 2], np.int64)
    np.testing.assert_array_equal(ops.index_select(Tensor(X), 1, Tensor(index)).asnumpy(),
                                  torch.index_select(t(X), 1, t(index)).numpy())
    flat_index = np.array([[0, 11], [5, 3]], np.int64)
    np.testing.assert_array_equal(ops.take(Tensor(X), Tensor(flat_index)).asnumpy(),
                                  torch.take(t(X), t(flat_index)).numpy())
    pieces = ops.tensor_split(Tensor(np.arange(7, dtype=np.float32)), 3)
    for got, want in zip(pieces, torch.tensor_split(torch.arange(7.0), 3)):
        np.testing.assert_array_equal(got.asnumpy(), want.numpy())
    np.testing.assert_array_equal(ops.argsort(Tensor(X), 1, True).asnumpy(),
                                  torch.argsort(t(X), dim=1, descending=True, stable=True).numpy())
    cube = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    for offset, d1, d2 in ((0, 0, 1), (1, 1, 2), (-1, 2, 0)):
        np.testing.assert_array_equal(ops.diagonal(Tensor(cube), offset, d1, d2).asnumpy(),
                                      torch.diagonal(t(cube), offset, d1, d2).numpy())
