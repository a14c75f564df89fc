"""COOTensor, SparseToDense and SparseTensorDenseMatmul against scipy.sparse / numpy references."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse

import aotnn
from aotnn import COOTensor, Tensor, nn, ops

_N, _C, _M = 5, 7, 3


def _random_coo(rng, count: int, shape=(_N, _C), dtype=np.float32, index_dtype=np.int32):
    """Random entries with some indices repeated on purpose."""
    idx = np.stack([rng.integers(0, d, count) for d in shape], axis=1).astype(index_dtype)
    idx[-2:] = idx[:2]  # duplicates
    return idx, rng.normal(size=count).astype(dtype)


def _scipy_matrix(idx, vals, shape):
    """scipy's COO matrix; converting to CSR adds up duplicates, as MindSpore's matmul kernel does."""
    return scipy.sparse.coo_matrix((vals.astype(np.float64), (idx[:, 0], idx[:, 1])), shape=shape).tocsr()


def _last_wins_dense(idx, vals, shape):
    """MindSpore's CPU SparseToDense: entries written in order, a repeated index keeps the last value."""
    out = np.zeros(shape, vals.dtype)
    for row, value in zip(idx, vals):
        out[tuple(row)] = value
    return out


# -- documented examples ------------------------------------------------------------------------
def test_sparse_to_dense_docstring_example():
    indices = Tensor([[0, 1], [1, 2]])
    values = Tensor([1, 2], dtype=aotnn.int32)

    class Net(nn.Cell):
        def __init__(self, dense_shape):
            super().__init__()
            self.dense_shape = dense_shape
            self.op = nn.SparseToDense()

        def construct(self, indices, values):
            x = COOTensor(indices, values, self.dense_shape)
            return self.op(x)

    out = Net((3, 4))(indices, values)
    assert out.dtype == aotnn.int32
    np.testing.assert_array_equal(out.asnumpy(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])


def test_sparse_tensor_dense_matmul_docstring_example():
    indices = Tensor([[0, 1], [1, 2]], dtype=aotnn.int32)
    values = Tensor([1, 2], dtype=aotnn.float32)
    dense = Tensor([[1, 1], [2, 2], [3, 3], [4, 4]], dtype=aotnn.float32)
    out = nn.SparseTensorDenseMatmul()(indices, values, (3, 4), dense)
    np.testing.assert_array_equal(out.asnumpy(), [[2, 2], [6, 6], [0, 0]])
    prim = ops.SparseToDense()(Tensor([[0, 1], [1, 2]]), Tensor([1, 2], dtype=aotnn.float32), (3, 4))
    np.testing.assert_array_equal(prim.asnumpy(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])


# -- COOTensor ----------------------------------------------------------------------------------
def test_coo_tensor_properties_and_to_dense_with_duplicates():
    rng = np.random.default_rng(0)
    idx, vals = _random_coo(rng, 9)
    coo = COOTensor(Tensor(idx), Tensor(vals), (_N, _C))
    assert coo.shape == (_N, _C) and coo.dtype == aotnn.float32 and coo.ndim == 2 and coo.size == 9
    assert coo.indices.shape == (9, 2) and coo.values.shape == (9,)
    np.testing.assert_array_equal(coo.to_dense().asnumpy(), _last_wins_dense(idx, vals, (_N, _C)))
    copy = COOTensor(coo_tensor=coo)
    assert copy.shape == coo.shape and copy.values is coo.values
    assert coo.astype(aotnn.float64).dtype == aotnn.float64


def test_sparse_to_dense_three_dims_int16_and_bool():
    rng = np.random.default_rng(1)
    shape = (3, 4, 2)
    idx, vals = _random_coo(rng, 10, shape, index_dtype=np.int16)
    coo = COOTensor(Tensor(idx), Tensor(vals), shape)
    np.testing.assert_array_equal(coo.to_dense().asnumpy(), _last_wins_dense(idx, vals, shape))
    flags = np.array([True, False, True, True, False, True, True, True, False, True])
    dense = nn.SparseToDense()(COOTensor(Tensor(idx.astype(np.int64)), Tensor(flags), shape))
    assert dense.dtype == aotnn.bool_
    np.testing.assert_array_equal(dense.asnumpy(), _last_wins_dense(idx, flags, shape))


def test_sparse_to_dense_float64_and_float16():
    rng = np.random.default_rng(2)
    idx, vals = _random_coo(rng, 9)
    for dtype in (np.float64, np.float16):
        out = nn.SparseToDense()(COOTensor(Tensor(idx), Tensor(vals.astype(dtype)), (_N, _C)))
        assert out.asnumpy().dtype == dtype
        np.testing.assert_array_equal(out.asnumpy(), _last_wins_dense(idx, vals.astype(dtype), (_N, _C)))


# -- SparseTensorDenseMatmul --------------------------------------------------------------------
@pytest.mark.parametrize("adjoint_st,adjoint_dt", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_adjoint_flags_match_scipy(adjoint_st, adjoint_dt):
    rng = np.random.default_rng(3)
    idx, vals = _random_coo(rng, 12)
    a = _scipy_matrix(idx, vals, (_N, _C))
    a = a.T if adjoint_st else a
    b = rng.normal(size=(a.shape[1], _M)).astype(np.float32)
    dense = b.T.copy() if adjoint_dt else b
    net = nn.SparseTensorDenseMatmul(adjoint_st, adjoint_dt)
    assert "adjoint_st=" in repr(net)
    out = net(Tensor(idx), Tensor(vals), (_N, _C), Tensor(dense))
    assert out.shape == (a.shape[0], _M)
    np.testing.assert_allclose(out.asnumpy(), a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_float64_float16_and_int_match_scipy():
    rng = np.random.default_rng(4)
    idx, vals = _random_coo(rng, 12, index_dtype=np.int64)
    b = rng.normal(size=(_C, _M))
    prim = ops.SparseTensorDenseMatmul()
    out = prim(Tensor(idx), Tensor(vals.astype(np.float64)), (_N, _C), Tensor(b))
    np.testing.assert_allclose(out.asnumpy(), _scipy_matrix(idx, vals, (_N, _C)) @ b, rtol=1e-12)
    v16, b16 = vals.astype(np.float16), b.astype(np.float16)
    out = prim(Tensor(idx), Tensor(v16), (_N, _C), Tensor(b16))
    assert out.dtype == aotnn.float16
    np.testing.assert_allclose(out.asnumpy(), _scipy_matrix(idx, v16, (_N, _C)) @ b16.astype(np.float64),
                               rtol=2e-2, atol=2e-2)
    vi, bi = rng.integers(-3, 4, 12).astype(np.int32), rng.integers(-3, 4, (_C, _M)).astype(np.int32)
    out = prim(Tensor(idx), Tensor(vi), (_N, _C), Tensor(bi))
    assert out.dtype == aotnn.int32
    np.testing.assert_array_equal(out.asnumpy(), (_scipy_matrix(idx, vi, (_N, _C)) @ bi).astype(np.int32))


def test_gradients_wrt_values_and_dense():
    rng = np.random.default_rng(5)
    idx, vals = _random_coo(rng, 8)
    b = rng.normal(size=(_C, _M)).astype(np.float32)
    weight = rng.normal(size=(_N, _M)).astype(np.float32)
    net = nn.SparseTensorDenseMatmul()

    def loss(values, dense):
        return (net(Tensor(idx), values, (_N, _C), dense) * Tensor(weight)).sum()

    d_values, d_dense = aotnn.grad(loss, grad_position=(0, 1))(Tensor(vals), Tensor(b))
    a = _scipy_matrix(idx, vals, (_N, _C))
    np.testing.assert_allclose(d_dense.asnumpy(), a.T @ weight, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d_values.asnumpy(), (weight[idx[:, 0]] * b[idx[:, 1]]).sum(1), rtol=1e-5, atol=1e-5)

    grid = rng.normal(size=(_N, _C)).astype(np.float32)
    d_sparse = aotnn.grad(lambda v: (ops.SparseToDense()(Tensor(idx), v, (_N, _C)) * Tensor(grid)).sum())(Tensor(vals))
    last = np.array([not any((idx[j] == idx[i]).all() for j in range(i + 1, len(idx))) for i in range(len(idx))])
    np.testing.assert_allclose(d_sparse.asnumpy(), np.where(last, grid[idx[:, 0], idx[:, 1]], 0), rtol=1e-6)


def test_out_of_range_rows_are_dropped_inside_a_compiled_graph():
    # Inside construct the indices' values are unknown, so they cannot be checked: such rows are
    # dropped instead of writing out of bounds.
    class Net(nn.Cell):
        def construct(self, indices, values):
            return COOTensor(indices, values, (3, 4)).to_dense()

    idx = np.array([[0, 1], [3, 0], [2, -1], [2, 3]], np.int32)
    out = Net()(Tensor(idx), Tensor(np.array([1., 2., 3., 4.], np.float32)))
    np.testing.assert_array_equal(out.asnumpy(), _last_wins_dense(idx[[0, 3]], np.array([1., 4.], np.float32), (3, 4)))


# -- invalid arguments --------------------------------------------------------------------------
def test_invalid_arguments_raise():
    idx, vals = Tensor(np.array([[0, 1], [1, 2]], np.int32)), Tensor(np.array([1., 2.], np.float32))
    dense = Tensor(np.ones((4, 2), np.float32))
    with pytest.raises(TypeError, match="adjoint_st"):
        nn.SparseTensorDenseMatmul(adjoint_st=1)
    with pytest.raises(TypeError, match="adjoint_dt"):
        ops.SparseTensorDenseMatmul(adjoint_dt="yes")
    with pytest.raises(TypeError, match="indices"):
        COOTensor(Tensor(np.array([[0., 1.]], np.float32)), Tensor(np.array([1.], np.float32)), (3, 4))
    with pytest.raises(TypeError, match="indices"):
        COOTensor([[0, 1]], Tensor(np.array([1.], np.float32)), (3, 4))
    with pytest.raises(ValueError, match="outside"):
        COOTensor(Tensor(np.array([[0, 4]], np.int32)), Tensor(np.array([1.], np.float32)), (3, 4))
    with pytest.raises(ValueError, match="values"):
        COOTensor(idx, Tensor(np.array([1.], np.float32)), (3, 4))
    with pytest.raises(ValueError, match="shape"):
        COOTensor(idx, vals, (3, 4, 5))
    with pytest.raises(ValueError, match="positive"):
        COOTensor(idx, vals, (3, 0))
    with pytest.raises(TypeError, match="COOTensor"):
        nn.SparseToDense()(idx)
    with pytest.raises(TypeError, match="int32 or int64|int32"):
        ops.SparseToDense()(Tensor(np.array([[0, 1]], np.int16)), Tensor(np.array([1.], np.float32)), (3, 4))
    net = nn.SparseTensorDenseMatmul()
    with pytest.raises(ValueError, match="outside"):
        net(Tensor(np.array([[3, 1]], np.int32)), Tensor(np.array([1.], np.float32)), (3, 4), dense)
    with pytest.raises(TypeError, match="dtype"):
        net(idx, vals, (3, 4), Tensor(np.ones((4, 2), np.float64)))
    with pytest.raises(ValueError, match="dense.shape"):
        net(idx, vals, (3, 4), Tensor(np.ones((3, 2), np.float32)))
    with pytest.raises(ValueError, match="2 entries"):
        ops.SparseTensorDenseMatmul()(idx, vals, (3, 4, 1), dense)
    with pytest.raises(TypeError, match="values"):
        net(idx, Tensor(np.array([1, 2], np.uint8)), (3, 4), Tensor(np.ones((4, 2), np.uint8)))


def test_one_training_step_updates_the_dense_weight():
    rng = np.random.default_rng(6)
    idx, vals = _random_coo(rng, 6)
    w0 = rng.normal(size=(_C, _M)).astype(np.float32)
    target = rng.normal(size=(_N, _M)).astype(np.float32)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = aotnn.Parameter(Tensor(w0), name="weight")
            self.matmul = nn.SparseTensorDenseMatmul()

        def construct(self, values):
            return self.matmul(Tensor(idx), values, (_N, _C), self.weight)

    net = Net()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=0.1))
    loss = step(Tensor(vals), Tensor(target))
    a = _scipy_matrix(idx, vals, (_N, _C))
    out = a @ w0
    np.testing.assert_allclose(float(loss.asnumpy()), ((out - target) ** 2).mean(), rtol=1e-5)
    grad = a.T @ (2 * (out - target) / out.size)
    np.testing.assert_allclose(net.weight.asnumpy(), w0 - 0.1 * grad, rtol=1e-5, atol=1e-6)


# -- CSRTensor ----------------------------------------------------------------------------------
def test_csr_tensor_docstring_example_and_scipy():
    indptr, indices = Tensor([0, 1, 2, 2], dtype=aotnn.int32), Tensor([1, 2], dtype=aotnn.int32)
    csr = aotnn.CSRTensor(indptr, indices, Tensor([1., 2.], dtype=aotnn.float32), (3, 4))
    assert csr.shape == (3, 4) and csr.dtype == aotnn.float32 and csr.size == 2 and csr.ndim == 2
    np.testing.assert_array_equal(csr.to_dense().asnumpy(), [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(csr.to_coo().indices.asnumpy(), [[0, 1], [1, 2]])

    grid = np.random.default_rng(8).normal(size=(6, 5))
    grid[np.random.default_rng(9).random((6, 5)) < 0.6] = 0
    grid[2] = 0  # an empty row
    matrix = scipy.sparse.csr_matrix(grid)

    class Net(nn.Cell):
        def construct(self, sparse):
            return sparse.to_dense() * 2

    csr = aotnn.CSRTensor(Tensor(matrix.indptr.astype(np.int64)), Tensor(matrix.indices.astype(np.int64)),
                          Tensor(matrix.data), (6, 5))
    np.testing.assert_allclose(Net()(csr).asnumpy(), matrix.toarray() * 2, rtol=1e-12)


def test_csr_tensor_invalid_arguments():
    cols, vals = Tensor(np.array([1, 2], np.int32)), Tensor(np.array([1., 2.], np.float32))
    with pytest.raises(ValueError, match="indptr"):
        aotnn.CSRTensor(Tensor(np.array([0, 1, 2], np.int32)), cols, vals, (3, 4))
    with pytest.raises(ValueError, match="rise"):
        aotnn.CSRTensor(Tensor(np.array([0, 2, 1, 2], np.int32)), cols, vals, (3, 4))
    with pytest.raises(ValueError, match="column"):
        aotnn.CSRTensor(Tensor(np.array([0, 1, 2, 2], np.int32)), Tensor(np.array([1, 4], np.int32)), vals, (3, 4))
    with pytest.raises(TypeError, match="indices"):
        aotnn.CSRTensor(Tensor(np.array([0, 1, 2, 2], np.int32)), vals, vals, (3, 4))
    with pytest.raises(TypeError, match="shape"):
        aotnn.CSRTensor(Tensor(np.array([0, 1, 2, 2], np.int32)), cols, vals, (3, 4, 1))
