"""Math and matrix layers against scipy.special, numpy.linalg and PyTorch (independent references)."""
import math

import numpy as np
import pytest
import torch

import aotnn as ms
from aotnn import Tensor, nn

scipy_special = pytest.importorskip("scipy.special")

RNG = np.random.default_rng(5)


def close(actual, expected, rtol=1e-5, atol=1e-5):
    expected = np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual.asnumpy().astype(np.float64), expected, rtol=rtol, atol=atol)


# -- special functions ----------------------------------------------------------------------------
SPECIAL_X = np.array([0.1, 0.5, 1.0, 2.0, 3.5, 7.25, 12.0, 40.0, -0.3, -2.5, -3.7, 123.4], np.float32)


def test_lgamma_matches_scipy_and_documented_example():
    out = nn.LGamma()(Tensor(SPECIAL_X))
    assert out.dtype == ms.float32
    close(out, scipy_special.gammaln(SPECIAL_X.astype(np.float64)), rtol=2e-6, atol=2e-6)
    close(nn.LGamma()(Tensor(np.array([2, 3, 4], np.float32))), [3.5762787e-07, 6.9314754e-01, 1.7917603e+00],
          atol=1e-6)


def test_lgamma_poles_infinities_and_float16():
    x = np.array([0.0, -1.0, -4.0, np.inf, -np.inf, 5.0], np.float32)
    out = nn.LGamma()(Tensor(x)).asnumpy()
    assert np.isposinf(out[:5]).all() and abs(out[5] - math.lgamma(5.0)) < 1e-5
    h = nn.LGamma()(Tensor(SPECIAL_X[:8].astype(np.float16)))
    assert h.dtype == ms.float16
    close(h, scipy_special.gammaln(SPECIAL_X[:8].astype(np.float16).astype(np.float64)), rtol=2e-3, atol=2e-3)


def test_digamma_matches_scipy():
    out = nn.DiGamma()(Tensor(SPECIAL_X))
    close(out, scipy_special.psi(SPECIAL_X.astype(np.float64)), rtol=2e-5, atol=2e-5)
    close(nn.DiGamma()(Tensor(np.array([2, 3, 4], np.float32))), [0.42278463, 0.92278427, 1.2561178], atol=1e-6)
    poles = nn.DiGamma()(Tensor(np.array([-1.0, -3.0, 0.0], np.float32))).asnumpy()
    assert np.isnan(poles[:2]).all() and np.isneginf(poles[2])


def test_igamma_matches_scipy_on_both_branches_with_broadcast():
    a = np.array([[0.3], [2.0], [6.0], [25.0], [80.0]], np.float32)
    x = np.array([0.05, 1.0, 3.0, 7.5, 30.0, 95.0], np.float32)
    out = nn.IGamma()(Tensor(a), Tensor(x))
    assert out.shape == (5, 6)
    close(out, scipy_special.gammainc(a.astype(np.float64), x.astype(np.float64)), rtol=1e-4, atol=2e-6)
    documented = nn.IGamma()(Tensor(np.array([2.0, 4.0, 6.0, 8.0], np.float32)),
                             Tensor(np.array([2.0, 3.0, 4.0, 5.0], np.float32)))
    close(documented, [0.593994, 0.35276785, 0.21486944, 0.13337152], atol=2e-6)


def test_igamma_domain_edges():
    a = Tensor(np.array([2.0, -1.0, 2.0, 3.0, 0.0, 2.0], np.float32))
    x = Tensor(np.array([-1.0, 2.0, 0.0, np.inf, 4.0, 1.5], np.float32))
    out = nn.IGamma()(a, x).asnumpy()
    assert np.isnan(out[:2]).all()
    np.testing.assert_allclose(out[2:], [0.0, 1.0, 1.0, scipy_special.gammainc(2.0, 1.5)], rtol=1e-5, atol=1e-6)


def test_lbeta_matches_scipy_small_and_large_arguments():
    x = np.array([0.5, 2.0, 4.0, 6.0, 8.0, 30.0, 3.0, 250.0], np.float32)
    y = np.array([1.5, 2.0, 3.0, 14.0, 15.0, 40.0, 90.0, 1000.0], np.float32)
    ref = scipy_special.betaln(x.astype(np.float64), y.astype(np.float64))
    close(nn.LBeta()(Tensor(x), Tensor(y)), ref, rtol=2e-5, atol=2e-5)
    close(nn.LBeta()(Tensor(y[:4]), Tensor(x[:4])), ref[:4], rtol=2e-5, atol=2e-5)   # symmetric
    h = nn.LBeta()(Tensor(x[:4].astype(np.float16)), Tensor(y[:4].astype(np.float16)))
    assert h.dtype == ms.float16
    close(h, ref[:4], rtol=2e-3, atol=2e-2)


def test_special_function_dtype_errors():
    ints = Tensor(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="x"):
        nn.LGamma()(ints)
    with pytest.raises(TypeError):
        nn.DiGamma()(ints)
    f32, f16 = Tensor(np.ones(2, np.float32)), Tensor(np.ones(2, np.float16))
    with pytest.raises(TypeError, match="dtype"):
        nn.IGamma()(f32, f16)
    with pytest.raises(TypeError):
        nn.LBeta()(f32, ints)


# -- ReduceLogSumExp, Moments, Range ----------------------------------------------------------------
def test_reduce_log_sum_exp_against_torch():
    x = (RNG.standard_normal((3, 4, 5)) * 30).astype(np.float32)
    close(nn.ReduceLogSumExp(1, keep_dims=True)(Tensor(x)), torch.logsumexp(torch.tensor(x), 1, keepdim=True),
          rtol=1e-5)
    close(nn.ReduceLogSumExp((0, 2))(Tensor(x)), torch.logsumexp(torch.tensor(x), (0, 2)), rtol=1e-5)
    close(nn.ReduceLogSumExp(())(Tensor(x)), torch.logsumexp(torch.tensor(x).flatten(), 0), rtol=1e-5)
    with pytest.raises(TypeError, match="axis"):
        nn.ReduceLogSumExp(1.0)
    with pytest.raises(TypeError, match="keep_dims"):
        nn.ReduceLogSumExp(1, keep_dims=1)


def test_moments_against_numpy():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    mean, var = nn.Moments(axis=1, keep_dims=True)(Tensor(x))
    close(mean, x.mean(1, keepdims=True)), close(var, x.var(1, keepdims=True))
    mean, var = nn.Moments(axis=(0, 2))(Tensor(x))
    close(mean, x.mean((0, 2))), close(var, x.var((0, 2)))
    mean, var = nn.Moments()(Tensor(x))
    assert mean.shape == () and abs(var.asnumpy() - x.var()) < 1e-5
    mean, var = nn.Moments(axis=2)(Tensor(x.astype(np.float16)))
    assert mean.dtype == ms.float16 and var.dtype == ms.float16
    close(var, x.astype(np.float16).astype(np.float64).var(2), rtol=2e-3, atol=2e-3)
    with pytest.raises(TypeError, match="axis"):
        nn.Moments(axis=[0])
    with pytest.raises(TypeError, match="keep_dims"):
        nn.Moments(keep_dims=0)


def test_range():
    out = nn.Range(1, 8, 2)()
    assert out.dtype == ms.int32 and out.asnumpy().tolist() == [1, 3, 5, 7]
    out = nn.Range(5)()
    assert out.asnumpy().tolist() == [0, 1, 2, 3, 4]
    out = nn.Range(1.0, 0.0, -0.25)()
    assert out.dtype == ms.float32
    np.testing.assert_allclose(out.asnumpy(), np.arange(1.0, 0.0, -0.25))
    with pytest.raises(ValueError, match="delta"):
        nn.Range(1, 5, 0)
    with pytest.raises(ValueError):
        nn.Range(3, 3)
    with pytest.raises(TypeError, match="start"):
        nn.Range("1", 4)


# -- MatMul ---------------------------------------------------------------------------------------
def test_matmul_broadcast_and_transposes_against_torch():
    x1, x2 = RNG.standard_normal((3, 2, 3)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    close(nn.MatMul()(Tensor(x1), Tensor(x2)), torch.matmul(torch.tensor(x1), torch.tensor(x2)))
    a, b = RNG.standard_normal((2, 1, 5, 3)).astype(np.float32), RNG.standard_normal((4, 6, 5)).astype(np.float32)
    ref = torch.matmul(torch.tensor(a).transpose(-1, -2), torch.tensor(b).transpose(-1, -2))
    close(nn.MatMul(transpose_x1=True, transpose_x2=True)(Tensor(a), Tensor(b)), ref, rtol=1e-5)


def test_matmul_vectors():
    v, m = RNG.standard_normal(3).astype(np.float32), RNG.standard_normal((2, 3, 4)).astype(np.float32)
    close(nn.MatMul()(Tensor(v), Tensor(m)), torch.matmul(torch.tensor(v), torch.tensor(m)))
    w = RNG.standard_normal(4).astype(np.float32)
    close(nn.MatMul()(Tensor(m), Tensor(w)), torch.matmul(torch.tensor(m), torch.tensor(w)))
    close(nn.MatMul()(Tensor(w), Tensor(w)), np.dot(w, w), rtol=1e-5)


def test_matmul_errors():
    with pytest.raises(TypeError, match="transpose_x1"):
        nn.MatMul(transpose_x1=1)
    with pytest.raises(ValueError, match="columns"):
        nn.MatMul()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((4, 2), np.float32)))
    with pytest.raises(TypeError, match="dtype"):
        nn.MatMul()(Tensor(np.ones((2, 3), np.float32)), Tensor(np.ones((3, 2), np.float16)))


# -- MatDet / MatInverse --------------------------------------------------------------------------
def spd(batch, n):
    a = RNG.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


def test_mat_det_and_inverse_documented_example():
    x = np.array([[4, 12, -16], [12, 37, -43], [-16, -43, 98]], np.float32)
    det = nn.MatDet()(Tensor(x))
    assert det.shape == ()
    np.testing.assert_allclose(det.asnumpy(), np.linalg.det(x.astype(np.float64)), rtol=1e-4)
    close(nn.MatInverse()(Tensor(x)), np.linalg.inv(x.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_mat_det_and_inverse_batched_general_matrices():
    general = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)     # not symmetric: pivoting matters
    general[0, 0] = [[0, 1, 2, 3], [1, 0, 1, 1], [2, 3, 0, 1], [1, 1, 1, 0]]  # zero leading pivot
    close(nn.MatDet()(Tensor(general)), np.linalg.det(general.astype(np.float64)), rtol=1e-4, atol=1e-4)
    close(nn.MatInverse()(Tensor(general)), np.linalg.inv(general.astype(np.float64)), rtol=1e-3, atol=1e-3)
    pd = spd((2,), 3)
    h = nn.MatInverse()(Tensor(pd.astype(np.float16)))
    assert h.dtype == ms.float16
    close(h, np.linalg.inv(pd.astype(np.float16).astype(np.float64)), rtol=1e-2, atol=1e-3)


def test_mat_det_and_inverse_errors():
    with pytest.raises(TypeError):
        nn.MatDet()(Tensor(np.eye(3, dtype=np.int32)))
    with pytest.raises(ValueError, match="square"):
        nn.MatInverse()(Tensor(np.ones((2, 3), np.float32)))


# -- MatrixDiag / MatrixDiagPart / MatrixSetDiag ----------------------------------------------------
def test_matrix_diag_family_against_torch():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    close(nn.MatrixDiag()(Tensor(x)), torch.diag_embed(torch.tensor(x)))
    ints = RNG.integers(-5, 5, (2, 3, 4)).astype(np.int32)
    part = nn.MatrixDiagPart()(Tensor(ints))
    assert part.dtype == ms.int32
    close(part, torch.diagonal(torch.tensor(ints), dim1=-2, dim2=-1))
    tall = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    diagonal = RNG.standard_normal((2, 3)).astype(np.float32)
    expected = tall.copy()
    for i in range(3):
        expected[:, i, i] = diagonal[:, i]
    close(nn.MatrixSetDiag()(Tensor(tall), Tensor(diagonal)), expected)
    wide = RNG.standard_normal((3, 4)).astype(np.float16)
    expected = wide.copy()
    np.fill_diagonal(expected, [1, 2, 3])
    close(nn.MatrixSetDiag()(Tensor(wide), Tensor(np.array([1, 2, 3], np.float16))), expected)


def test_matrix_diag_family_errors():
    with pytest.raises(TypeError):
        nn.MatrixDiag()(Tensor(np.ones(3, np.float64)))
    with pytest.raises(ValueError):
        nn.MatrixDiagPart()(Tensor(np.ones(3, np.float32)))
    with pytest.raises(ValueError, match="diagonal"):
        nn.MatrixSetDiag()(Tensor(np.ones((3, 3), np.float32)), Tensor(np.ones(2, np.float32)))


# -- gradients (the layers train inside compiled graphs) ---------------------------------------------
def test_gradients_against_torch_autograd():
    x = np.array([0.7, 1.5, 4.2, -0.5], np.float32)
    grad = ms.ops.grad(lambda v: ms.ops.reduce_sum(nn.LGamma()(v)))(Tensor(x))
    close(grad, scipy_special.psi(x.astype(np.float64)), rtol=1e-4, atol=1e-4)
    m = (RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    grad = ms.ops.grad(lambda v: ms.ops.reduce_sum(nn.MatDet()(v)))(Tensor(m))
    mt = torch.tensor(m, dtype=torch.float64, requires_grad=True)
    torch.linalg.det(mt).sum().backward()
    close(grad, mt.grad, rtol=1e-4, atol=1e-4)
    a, v = np.array([2.0, 3.0], np.float32), np.array([1.5, 6.0], np.float32)
    grad = ms.ops.grad(lambda t: ms.ops.reduce_sum(nn.IGamma()(Tensor(a), t)))(Tensor(v))
    close(grad, v ** (a - 1) * np.exp(-v) / scipy_special.gamma(a), rtol=1e-4, atol=1e-6)  # dP/dx


def test_functional_ops_and_primitives():
    a, x = np.array([2.0, 5.0], np.float32), np.array([1.0, 9.0], np.float32)
    close(ms.ops.Igammac()(Tensor(a), Tensor(x)), scipy_special.gammaincc(a, x), rtol=1e-4, atol=1e-6)
    close(ms.ops.Lgamma()(Tensor(a)), scipy_special.gammaln(a), atol=1e-5)
    m = np.array([[2.0, 1.0], [0.5, 3.0]], np.float32)
    close(ms.ops.MatrixInverse(adjoint=True)(Tensor(m)), np.linalg.inv(m).T, rtol=1e-5)
    close(ms.ops.MatrixDeterminant()(Tensor(m)), np.linalg.det(m), rtol=1e-5)
    with pytest.raises(ValueError, match="axis"):
        ms.ops.logsumexp(Tensor(m), 2)
    with pytest.raises(TypeError, match="float16/float32|dtype"):
        ms.ops.lgamma(Tensor(np.array([1, 2], np.int64)))
