"""constexpr, partial, depend, MultitypeFuncGraph, HyperMap/Map, clip_by_global_norm, ReduceOp, AllReduce,
interpolate / ResizeNearestNeighbor and selu / glu."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import aotnn as ms
from aotnn import Tensor, nn, ops
from aotnn.ops import functional as F

RNG = np.random.default_rng(12)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_constexpr_bare_and_with_keywords_runs_at_capture_time():
    calls = []

    @ops.constexpr
    def doubled(shape):
        calls.append(shape)
        return tuple(2 * s for s in shape)

    @ops.constexpr(reuse_result=False)
    def halved(n):
        return n // 2

    class Net(nn.Cell):
        def construct(self, x):
            return ops.reshape(ops.tile(x, (1, 2)), (halved(doubled(x.shape)[1]), -1))

    x = rand(3, 2)
    np.testing.assert_array_equal(Net()(Tensor(x)).asnumpy(), np.tile(x, (1, 2)).reshape(2, -1))
    assert calls and calls[0] == (3, 2)


def test_partial_depend_and_functional_aliases():
    x = rand(2, 2)
    add_one = F.partial(ops.add, Tensor(np.ones((2, 2), np.float32)))
    np.testing.assert_allclose(add_one(Tensor(x)).asnumpy(), x + 1)
    assert F.depend(add_one, Tensor(x)) is add_one
    assert F.mixed_precision_cast(ms.float16, Tensor(x)).dtype == ms.float16
    assert F.mixed_precision_cast(ms.float16, Tensor(np.ones(2, np.int32))).dtype == ms.int32
    with pytest.raises(AttributeError, match="no_such_op"):
        F.no_such_op


def test_multitype_func_graph_dispatch_and_hyper_map():
    scale = ops.MultitypeFuncGraph("scale")

    @scale.register("Number", "Tensor")
    def _(factor, grad):
        return ("number", grad * factor)

    @scale.register("Tensor", "Tensor")
    def _(factor, grad):
        return ("tensor", grad * factor)

    grads = (Tensor(np.ones(2, np.float32)), Tensor(np.full(3, 2, np.float32)))
    out = ops.HyperMap()(F.partial(scale, 0.5), grads)
    assert [kind for kind, _ in out] == ["number", "number"]
    np.testing.assert_allclose(out[1][1].asnumpy(), [1, 1, 1])
    assert ops.Map()(F.partial(scale, Tensor(np.float32(3))), grads)[0][0] == "tensor"
    nested = ops.HyperMap(F.partial(scale, 2.0))(((grads[0],), grads[1]))
    assert nested[0][0][0] == "number"
    with pytest.raises(TypeError, match="no overload .*'String'"):
        scale("a", grads[0])
    with pytest.raises(ValueError, match="one length"):
        ops.HyperMap()(ops.add, grads, grads[:1])


def test_clip_by_global_norm_against_torch():
    grads = [rand(3, 4), rand(5)]
    tensors = [torch.from_numpy(g.copy()) for g in grads]
    for t in tensors:
        t.grad = t.clone()
    torch.nn.utils.clip_grad_norm_(tensors, max_norm=1.0)
    got = ops.clip_by_global_norm(tuple(Tensor(g) for g in grads), 1.0)
    for g, t in zip(got, tensors):
        np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    small = ops.clip_by_global_norm((Tensor(grads[1] * 1e-3),), 1.0)
    np.testing.assert_allclose(small[0].asnumpy(), grads[1] * 1e-3, rtol=1e-6)


def test_reduce_op_and_all_reduce_in_a_world_of_one():
    assert (ops.ReduceOp.SUM, ops.ReduceOp.MAX, ops.ReduceOp.MIN, ops.ReduceOp.PROD) == ("sum", "max", "min", "prod")
    x = Tensor(rand(3))
    assert ops.AllReduce(ops.ReduceOp.SUM)(x) is x
    with pytest.raises(ValueError, match="ReduceOp"):
        ops.AllReduce("mean")


@pytest.mark.parametrize("shape, size", [((1, 2, 3, 5), (7, 4)), ((2, 1, 4), (9,)), ((1, 1, 2, 3, 3), (4, 5, 2))])
def test_nearest_interpolate_against_torch(shape, size):
    x = rand(*shape)
    want = TF.interpolate(torch.from_numpy(x), size=size, mode="nearest").numpy()
    np.testing.assert_array_equal(ops.interpolate(Tensor(x), size=size).asnumpy(), want)


@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear_interpolate_and_upsample_against_torch(align_corners):
    x = rand(1, 2, 4, 5)
    want = TF.interpolate(torch.from_numpy(x), scale_factor=2, mode="bilinear", align_corners=align_corners)
    got = nn.Upsample(scale_factor=2.0, mode="bilinear", align_corners=align_corners)(Tensor(x))
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_resize_nearest_neighbor_align_corners():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # align_corners: source index round(dst * (4 - 1) / (3 - 1)) = 0, 2 (1.5 rounds up), 3
    got = ops.ResizeNearestNeighbor((3, 3), align_corners=True)(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(got[0, 0], x[0, 0][np.ix_([0, 2, 3], [0, 2, 3])])
    with pytest.raises(ValueError, match="one of size and scale_factor"):
        ops.interpolate(Tensor(x))


def test_selu_and_glu_against_torch():
    x = rand(2, 6)
    np.testing.assert_allclose(nn.SeLU()(Tensor(x)).asnumpy(), TF.selu(torch.from_numpy(x)).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.GLU()(Tensor(x)).asnumpy(), TF.glu(torch.from_numpy(x), -1).numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(nn.GLU(axis=0)(Tensor(x)).asnumpy(), TF.glu(torch.from_numpy(x), 0).numpy(),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="even"):
        nn.GLU()(Tensor(rand(2, 5)))
