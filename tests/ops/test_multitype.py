"""MultitypeFuncGraph/HyperMap/Map, Reciprocal, boost.GradientAccumulation, RowTensor and the callable
``jit`` against hand-computed values."""
import numpy as np
import pytest

import aotnn
from aotnn import Parameter, Tensor, nn, ops
from aotnn.boost import GradientAccumulation


def test_multitype_dispatch_and_hyper_map():
    scale = ops.MultitypeFuncGraph("scale")

    @scale.register("Number", "Tensor")
    def _(a, t):
        return t * a

    @scale.register("Tensor", "Tensor")
    def _(a, t):
        return t + a

    one = Tensor(np.ones(2, np.float32))
    assert scale(3.0, one).asnumpy().tolist() == [3.0, 3.0]
    assert scale(one, one).asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="no overload registered"):
        scale("a", one)
    # every argument a sequence of one length, as MindSpore 2.10 requires (it does not broadcast a scalar)
    nested = ops.HyperMap()(scale, (2.0, (3.0,)), (one, (one * 3,)))
    assert nested[0].asnumpy().tolist() == [2.0, 2.0] and nested[1][0].asnumpy().tolist() == [9.0, 9.0]
    assert [t.asnumpy().tolist() for t in ops.Map(scale)((2.0, 2.0), (one, one))] == [[2.0, 2.0]] * 2
    np.testing.assert_allclose(ops.Reciprocal()(Tensor(np.array([2.0, 4.0], np.float32))).asnumpy(), [0.5, 0.25])


def test_gradient_accumulation_updates_every_n_steps_with_the_mean():
    w = Parameter(np.zeros(2, np.float32), name="w")
    acc = GradientAccumulation(2, nn.SGD([w], learning_rate=1.0))
    acc(Tensor(np.float32(0)), (Tensor(np.array([1.0, 2.0], np.float32)),))
    assert w.asnumpy().tolist() == [0.0, 0.0]
    acc(Tensor(np.float32(0)), (Tensor(np.array([3.0, 4.0], np.float32)),))
    np.testing.assert_allclose(w.asnumpy(), [-2.0, -3.0])          # w -= lr * mean(grads)
    np.testing.assert_allclose(acc._grad_accumulation[0].asnumpy(), [0.0, 0.0])


def test_row_tensor_and_jit_decorator():
    rows = aotnn.RowTensor(Tensor(np.array([2, 0, 2])), Tensor(np.ones((3, 2), np.float32)), (4, 2))
    assert rows.dense_shape == (4, 2) and rows.indices.asnumpy().tolist() == [2, 0, 2]  # MindSpore's fields

    @aotnn.jit
    def double(x):
        return x * 2

    @aotnn.jit(jit_level="O1")
    def triple(x):
        return x * 3

    assert double(2) == 4 and triple(2) == 6
