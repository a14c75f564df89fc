"""sort / topk / top_k / gather_nd / stop_gradient / assign_add / atan / tan and their primitives (Sort,
TopK, GatherNd, StopGradient, Assign, AssignAdd, LpNorm, SigmoidCrossEntropyWithLogits) against PyTorch CPU
and numpy."""
import numpy as np
import pytest
import torch

import aotnn as ms
from aotnn import Parameter, Tensor, ops

RNG = np.random.default_rng(18)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("axis, descending", [(-1, False), (0, True), (1, False)])
def test_sort_against_torch_stable(axis, descending):
    x = RNG.integers(0, 4, (3, 5, 4)).astype(np.float32)  # many ties: the order must be stable
    values, indices = ops.sort(Tensor(x), axis, descending)
    want = torch.sort(torch.from_numpy(x), dim=axis, descending=descending, stable=True)
    np.testing.assert_array_equal(values.asnumpy(), want.values.numpy())
    np.testing.assert_array_equal(indices.asnumpy(), want.indices.numpy())
    assert indices.dtype == ms.int32
    np.testing.assert_array_equal(ops.Sort(axis, descending)(Tensor(x))[1].asnumpy(), want.indices.numpy())


@pytest.mark.parametrize("k, dim, largest", [(2, None, True), (1, 0, False), (3, 1, True)])
def test_topk_against_torch(k, dim, largest):
    x = rand(4, 5)
    values, indices = ops.topk(Tensor(x), k, dim, largest)
    want = torch.topk(torch.from_numpy(x), k, dim=-1 if dim is None else dim, largest=largest)
    np.testing.assert_array_equal(values.asnumpy(), want.values.numpy())
    np.testing.assert_array_equal(indices.asnumpy(), want.indices.numpy())
    if dim is None and largest:
        np.testing.assert_array_equal(ops.TopK()(Tensor(x), k)[0].asnumpy(), want.values.numpy())
        np.testing.assert_array_equal(ops.top_k(Tensor(x), k)[1].asnumpy(), want.indices.numpy())
    with pytest.raises(ValueError, match="k must be"):
        ops.topk(Tensor(x), 9)


def test_gather_nd_against_numpy():
    x = rand(3, 4, 2)
    index = np.array([[[0, 1], [2, 3]], [[1, 0], [2, 2]]], np.int32)
    want = x[index[..., 0], index[..., 1]]
    np.testing.assert_array_equal(ops.gather_nd(Tensor(x), Tensor(index)).asnumpy(), want)
    np.testing.assert_array_equal(ops.GatherNd()(Tensor(x), Tensor(np.array([[2, 1, 0]], np.int64))).asnumpy(),
                                  x[2, 1, 0][None])
    with pytest.raises(ValueError, match="indices.shape"):
        ops.gather_nd(Tensor(x), Tensor(np.zeros((2, 4), np.int32)))


def test_stop_gradient_blocks_the_gradient():
    def fn(x):
        return ops.reduce_sum(x * ops.stop_gradient(x))

    x = rand(2, 3)
    np.testing.assert_allclose(ops.grad(fn)(Tensor(x)).asnumpy(), x, rtol=1e-6)  # d/dx (x * c) = c = x
    np.testing.assert_array_equal(ops.StopGradient()(Tensor(x)).asnumpy(), x)


def test_assign_and_assign_add():
    p = Parameter(Tensor(np.ones(3, np.float32)), name="p")
    ops.AssignAdd()(p, Tensor(np.full(3, 2, np.float32)))
    np.testing.assert_array_equal(p.asnumpy(), [3, 3, 3])
    ops.Assign()(p, Tensor(np.zeros(3, np.float32)))
    np.testing.assert_array_equal(p.asnumpy(), [0, 0, 0])
    with pytest.raises(TypeError, match="Parameter"):
        ops.assign_add(Tensor(np.ones(3, np.float32)), 1.0)


def test_atan_tan_lp_norm_and_sigmoid_cross_entropy():
    x = rand(3, 4)
    np.testing.assert_allclose(ops.atan(Tensor(x)).asnumpy(), np.arctan(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ops.tan(Tensor(x)).asnumpy(), np.tan(x), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ops.LpNorm(1)(Tensor(x)).asnumpy(), np.linalg.norm(x, 2, axis=1), rtol=1e-5)
    np.testing.assert_allclose(ops.LpNorm((0, 1), p=3, keep_dims=True)(Tensor(x)).asnumpy(),
                               [[np.sum(np.abs(x) ** 3) ** (1 / 3)]], rtol=1e-5)
    y = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    want = torch.nn.functional.binary_cross_entropy_with_logits(torch.from_numpy(x), torch.from_numpy(y),
                                                                reduction="none")
    np.testing.assert_allclose(ops.SigmoidCrossEntropyWithLogits()(Tensor(x), Tensor(y)).asnumpy(), want.numpy(),
                               rtol=1e-5, atol=1e-6)
