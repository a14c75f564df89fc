"""Functional ops and primitive classes against numpy and PyTorch (CPU)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops
from aotnn.common.parameter import Parameter

RNG = np.random.default_rng(7)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    expected = expected.numpy() if isinstance(expected, torch.Tensor) else np.asarray(expected)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# -- element-wise --------------------------------------------------------------------------------
@pytest.mark.parametrize("name, ref", [
    ("relu", lambda a: np.maximum(a, 0)),
    ("relu6", lambda a: np.clip(a, 0, 6)),
    ("exp", np.exp),
    ("tanh", np.tanh),
    ("sigmoid", lambda a: 1 / (1 + np.exp(-a))),
    ("neg", np.negative),
    ("abs", np.abs),
    ("square", np.square),
    ("floor", np.floor),
    ("ceil", np.ceil),
    ("sin", np.sin),
    ("cos", np.cos),
])
def test_unary_functional(name, ref):
    a = rand(3, 5) * 4
    close(getattr(ops, name)(Tensor(a)), ref(a).astype(np.float32), rtol=1e-5, atol=1e-6)


def test_log_sqrt_rsqrt():
    a = np.abs(rand(4, 4)) + 0.1
    close(ops.log(Tensor(a)), np.log(a))
    close(ops.sqrt(Tensor(a)), np.sqrt(a))
    close(ops.rsqrt(Tensor(a)), 1 / np.sqrt(a), rtol=1e-5)


@pytest.mark.parametrize("prim, ref", [
    (ops.ReLU, lambda a: np.maximum(a, 0)),
    (ops.Sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    (ops.Tanh, np.tanh),
    (ops.Neg, np.negative),
    (ops.Exp, np.exp),
])
def test_unary_primitives(prim, ref):
    a = rand(2, 3, 4)
    close(prim()(Tensor(a)), ref(a).astype(np.float32))


@pytest.mark.parametrize("prim, ref", [
    (ops.Add, np.add), (ops.Sub, np.subtract), (ops.Mul, np.multiply), (ops.RealDiv, np.divide),
    (ops.Maximum, np.maximum), (ops.Minimum, np.minimum),
])
def test_binary_primitives(prim, ref):
    a, b = rand(2, 3, 4), np.abs(rand(3, 1)) + 0.5
    close(prim()(Tensor(a), Tensor(b)), ref(a, b))
    close(prim()(Tensor(b), Tensor(a)), ref(b, a))


def test_realdiv_and_sub_with_scalar_tensor():
    """The seed's Block: RealDiv by Tensor(2.37891) (0-d float32), Sub from Tensor([1.0])."""
    a = rand(2, 3)
    scalar = Tensor(2.37891)
    assert scalar.shape == () and scalar.dtype == ms.float32
    close(ops.RealDiv()(Tensor(a), scalar), a / np.float32(2.37891))
    close(ops.Sub()(Tensor([1.0]), Tensor(a)), np.float32(1.0) - a)


def test_comparison_and_select():
    a, b = rand(3, 4), rand(3, 4)
    cond = ops.greater(Tensor(a), Tensor(b))
    np.testing.assert_array_equal(cond.asnumpy(), a > b)
    close(ops.select(cond, Tensor(a), Tensor(b)), np.where(a > b, a, b))
    np.testing.assert_array_equal(ops.Equal()(Tensor(a), Tensor(a)).asnumpy(), np.ones((3, 4), bool))
    close(ops.clip_by_value(Tensor(a), -0.5, 0.5), np.clip(a, -0.5, 0.5))
    close(ops.maximum(Tensor(a), Tensor(b)), np.maximum(a, b))


# -- matrix products ------------------------------------------------------------------------------
@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
def test_matmul_primitive_transposes(ta, tb):
    a = rand(5, 3) if ta else rand(3, 5)
    b = rand(4, 5) if tb else rand(5, 4)
    out = ops.MatMul(transpose_a=ta, transpose_b=tb)(Tensor(a), Tensor(b))
    expected = torch.matmul(torch.tensor(a).T if ta else torch.tensor(a), torch.tensor(b).T if tb else torch.tensor(b))
    close(out, expected, rtol=1e-5, atol=1e-5)


def test_matmul_transpose_b_like_dense():
    x, w = rand(6, 8), rand(3, 8)
    close(ops.MatMul(transpose_b=True)(Tensor(x), Tensor(w)), F.linear(torch.tensor(x), torch.tensor(w)),
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True)])
def test_batch_matmul(ta, tb):
    a = rand(2, 4, 3, 5) if not ta else rand(2, 4, 5, 3)
    b = rand(2, 4, 5, 6) if not tb else rand(2, 4, 6, 5)
    ta_ = torch.tensor(a).transpose(-1, -2) if ta else torch.tensor(a)
    tb_ = torch.tensor(b).transpose(-1, -2) if tb else torch.tensor(b)
    out = ops.BatchMatMul(transpose_a=ta, transpose_b=tb)(Tensor(a), Tensor(b))
    close(out, torch.matmul(ta_, tb_), rtol=1e-5, atol=1e-5)
    close(ops.matmul(Tensor(a), Tensor(b)) if not (ta or tb) else out, torch.matmul(ta_, tb_), rtol=1e-5,
          atol=1e-5)


def test_matmul_dtype_mismatch_raises_type_error():
    with pytest.raises(TypeError):
        ops.matmul(Tensor(rand(2, 2)), Tensor(rand(2, 2).astype(np.float16)))


# -- shapes and types ------------------------------------------------------------------------------
def test_transpose_primitive():
    a = rand(2, 3, 4, 5)
    close(ops.Transpose()(Tensor(a), (0, 2, 1, 3)), a.transpose(0, 2, 1, 3))
    close(ops.Transpose()(Tensor(a), (3, 2, 1, 0)), a.transpose(3, 2, 1, 0))
    close(ops.transpose(Tensor(a), (1, 0, 3, 2)), a.transpose(1, 0, 3, 2))


def test_reshape_primitive():
    a = rand(2, 3, 4)
    close(ops.Reshape()(Tensor(a), (6, 4)), a.reshape(6, 4))
    close(ops.Reshape()(Tensor(a), (-1, 2)), a.reshape(-1, 2))
    close(ops.reshape(Tensor(a), (24,)), a.reshape(24))
    with pytest.raises(Exception):
        ops.reshape(Tensor(a), (5, 5))


def test_expand_dims_squeeze_flatten():
    a = rand(3, 4)
    close(ops.ExpandDims()(Tensor(a), 0), a[None])
    close(ops.ExpandDims()(Tensor(a), 1), a[:, None])
    close(ops.ExpandDims()(Tensor(a), -1), a[..., None])
    close(ops.Squeeze(0)(Tensor(a[None])), a)
    close(ops.Squeeze()(Tensor(a[None, :, None])), a)
    b = rand(2, 3, 4)
    close(ops.Flatten()(Tensor(b)), b.reshape(2, 12))
    close(ops.flatten(Tensor(b)), b.reshape(2, 12))


def test_shape_and_dtype_primitives():
    t = Tensor(rand(2, 3, 4))
    assert ops.Shape()(t) == (2, 3, 4)
    assert isinstance(ops.Shape()(t), tuple)
    assert ops.shape(t) == (2, 3, 4)
    assert ops.DType()(t) == ms.float32
    assert ops.DType()(Tensor(3)) == ms.int64
    assert ops.rank(t) == 3 and ops.size(t) == 24


def test_fill_and_creation():
    f = ops.Fill()(ms.float32, (2, 3), 1.5)
    assert f.dtype == ms.float32 and f.shape == (2, 3)
    np.testing.assert_array_equal(f.asnumpy(), np.full((2, 3), 1.5))
    i = ops.fill(ms.int32, (4,), 7)
    assert i.dtype == ms.int32
    np.testing.assert_array_equal(i.asnumpy(), [7, 7, 7, 7])
    assert ops.ones((2, 2)).dtype == ms.float32 and ops.zeros(3, ms.int32).dtype == ms.int32
    np.testing.assert_array_equal(ops.ones_like(Tensor(rand(2, 2))).asnumpy(), np.ones((2, 2)))
    ar = ops.arange(0, 1, 0.25)
    assert ar.dtype == ms.float32
    np.testing.assert_allclose(ar.asnumpy(), [0, 0.25, 0.5, 0.75])


def test_cast():
    a = rand(3, 3) * 10
    out = ops.Cast()(Tensor(a), ms.int32)
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), a.astype(np.int32))
    h = ops.cast(Tensor(a), ms.float16)
    assert h.dtype == ms.float16
    np.testing.assert_array_equal(h.asnumpy(), a.astype(np.float16))


def test_concat_stack_tile_broadcast_gather():
    a, b = rand(2, 3), rand(2, 3)
    close(ops.concat((Tensor(a), Tensor(b)), 1), np.concatenate([a, b], 1))
    close(ops.Concat(0)((Tensor(a), Tensor(b))), np.concatenate([a, b], 0))
    close(ops.stack([Tensor(a), Tensor(b)], 1), np.stack([a, b], 1))
    close(ops.tile(Tensor(a), (2, 1)), np.tile(a, (2, 1)))
    close(ops.broadcast_to(Tensor(a[:1]), (4, 3)), np.broadcast_to(a[:1], (4, 3)))
    idx = np.array([1, 0, 1], np.int32)
    close(ops.gather(Tensor(a), Tensor(idx), 0), a[idx])
    close(ops.gather(Tensor(a), Tensor(idx), 1), a[:, idx])


# -- reductions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("keep_dims", [False, True])
@pytest.mark.parametrize("axis", [(), 0, 1, (0, 2), -1])
def test_reduce_sum_primitive(keep_dims, axis):
    a = rand(2, 3, 4)
    np_axis = None if axis == () else axis
    out = ops.ReduceSum(keep_dims)(Tensor(a), axis)
    close(out, a.sum(axis=np_axis, keepdims=keep_dims), rtol=1e-5, atol=1e-5)
    close(ops.ReduceMean(keep_dims=keep_dims)(Tensor(a), axis), a.mean(axis=np_axis, keepdims=keep_dims),
          rtol=1e-5, atol=1e-6)
    close(ops.ReduceMax(keep_dims)(Tensor(a), axis), a.max(axis=np_axis, keepdims=keep_dims))


def test_reduce_sum_keep_dims_keyword_and_default_axis():
    a = rand(3, 5)
    out = ops.ReduceSum(keep_dims=True)(Tensor(a))
    assert out.shape == (1, 1)
    close(out, a.sum(keepdims=True), rtol=1e-5, atol=1e-5)
    assert ops.ReduceSum()(Tensor(a)).shape == ()
    close(ops.reduce_sum(Tensor(a), 1), a.sum(1), rtol=1e-5, atol=1e-5)
    close(ops.mean(Tensor(a), 0, True), a.mean(0, keepdims=True))


# -- softmax ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1, (1,)])
def test_softmax_primitive(axis):
    a = rand(3, 4, 5) * 3
    ax = axis[0] if isinstance(axis, tuple) else axis
    close(ops.Softmax(axis)(Tensor(a)), torch.softmax(torch.tensor(a), ax), rtol=1e-5, atol=1e-6)
    close(ops.LogSoftmax(axis)(Tensor(a)), torch.log_softmax(torch.tensor(a), ax), rtol=1e-5, atol=1e-5)


def test_softmax_functional():
    a = rand(4, 6) * 3
    close(ops.softmax(Tensor(a)), torch.softmax(torch.tensor(a), -1), rtol=1e-5, atol=1e-6)
    close(ops.softmax(Tensor(a), 0), torch.softmax(torch.tensor(a), 0), rtol=1e-5, atol=1e-6)


# -- primitives inside a compiled Cell: the seed's attention Block, scaled down ----------------------
class Block(nn.Cell):
    def __init__(self, y):
        super().__init__()
        self.transpose1 = ops.Transpose()
        self.transpose2 = ops.Transpose()
        self.transpose3 = ops.Transpose()
        self.transpose4 = ops.Transpose()
        self.real_div1 = ops.RealDiv()
        self.real_div2 = ops.RealDiv()
        self.batch_matmul1 = ops.BatchMatMul()
        self.batch_matmul2 = ops.BatchMatMul()
        self.softmax = ops.Softmax(-1)
        self.expand_dims = ops.ExpandDims()
        self.sub = ops.Sub()
        self.y = Parameter(Tensor(y))

    def construct(self, x):
        transpose1 = self.transpose1(x, (0, 2, 1, 3))
        real_div1 = self.real_div1(transpose1, Tensor(2.37891))
        transpose2 = self.transpose2(x, (0, 2, 3, 1))
        real_div2 = self.real_div2(transpose2, Tensor(2.37891))
        batch_matmul1 = self.batch_matmul1(real_div1, real_div2)
        expand_dims = self.expand_dims(self.y, 1)
        sub = self.sub(Tensor([1.0]), expand_dims)
        soft_max = self.softmax(sub)
        transpose3 = self.transpose3(x, (0, 2, 1, 3))
        batch_matmul2 = self.batch_matmul2(soft_max[0], transpose3)
        transpose4 = self.transpose4(batch_matmul2, (0, 2, 1, 3))
        return transpose4, batch_matmul1


def test_seed_block_in_a_cell():
    y = rand(4, 6, 6)
    x = rand(2, 6, 3, 6)
    out, bm1 = Block(y)(Tensor(x))
    tx, ty = torch.tensor(x), torch.tensor(y)
    s = torch.tensor(2.37891, dtype=torch.float32)
    ref_bm1 = torch.matmul(tx.permute(0, 2, 1, 3) / s, tx.permute(0, 2, 3, 1) / s)
    soft = torch.softmax(1.0 - ty.unsqueeze(1), -1)
    ref = torch.matmul(soft[0], tx.permute(0, 2, 1, 3)).permute(0, 2, 1, 3)
    close(bm1, ref_bm1, rtol=1e-5, atol=1e-5)
    close(out, ref, rtol=1e-5, atol=1e-5)


# -- nn ops (functional) -----------------------------------------------------------------------------
def test_functional_conv2d_and_dense():
    x, w, b = rand(2, 3, 7, 7), rand(4, 3, 3, 3), rand(4)
    close(ops.conv2d(Tensor(x), Tensor(w), pad_mode="valid"), F.conv2d(torch.tensor(x), torch.tensor(w)),
          rtol=1e-5, atol=1e-5)
    close(ops.conv2d(Tensor(x), Tensor(w), Tensor(b), stride=2, pad_mode="pad", padding=1),
          F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=2, padding=1), rtol=1e-5, atol=1e-5)
    xi, wi = rand(5, 8), rand(3, 8)
    close(ops.dense(Tensor(xi), Tensor(wi), Tensor(b[:3])),
          F.linear(torch.tensor(xi), torch.tensor(wi), torch.tensor(b[:3])), rtol=1e-5, atol=1e-5)


def test_functional_batch_norm_inference():
    x = rand(2, 3, 4, 4)
    gamma, beta, mean, var = rand(3), rand(3), rand(3), np.abs(rand(3)) + 0.5
    out = ops.batch_norm(Tensor(x), Tensor(gamma), Tensor(beta), Tensor(mean), Tensor(var), 1e-5)
    ref = F.batch_norm(torch.tensor(x), torch.tensor(mean), torch.tensor(var), torch.tensor(gamma),
                       torch.tensor(beta), training=False, eps=1e-5)
    close(out, ref, rtol=1e-5, atol=1e-5)
