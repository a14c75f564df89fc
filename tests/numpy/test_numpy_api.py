"""aotnn.numpy inside a compiled construct, its argument handling and errors, and mindspore.numpy aliasing."""
import numpy as np
import pytest

import aotnn.numpy as mnp
from aotnn import Tensor, nn


def test_numpy_functions_capture_inside_construct():
    class Net(nn.Cell):
        def construct(self, x, y):
            z = mnp.where(mnp.greater(x, 0), mnp.multiply(x, 2.0), mnp.exp(y))
            parts = mnp.split(z, 2, axis=1)
            return mnp.sum(mnp.concatenate((parts[1], parts[0]), axis=1), axis=0) + mnp.var(x, axis=0)

    rng = np.random.default_rng(15)
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    z = np.where(x > 0, 2 * x, np.exp(y))
    want = np.concatenate((z[:, 2:], z[:, :2]), axis=1).sum(0) + x.var(0)
    np.testing.assert_allclose(Net()(Tensor(x), Tensor(y)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_array_likes_and_promotion():
    np.testing.assert_array_equal(mnp.add([1, 2], [3, 4]).asnumpy(), [4, 6])
    assert mnp.add([1, 2], [3, 4]).dtype == mnp.int32
    out = mnp.matmul(mnp.arange(6).reshape(2, 3), mnp.ones(3))
    assert out.dtype == mnp.float32
    np.testing.assert_array_equal(out.asnumpy(), [3, 12])
    np.testing.assert_array_equal(mnp.expand_dims(mnp.ones((2, 3)), (0, 3)).shape, (1, 2, 3, 1))
    np.testing.assert_array_equal(mnp.array_split(mnp.arange(7), 3)[0].asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(mnp.take(mnp.arange(5), Tensor(np.array([-1, 7], np.int32)), mode="wrap").asnumpy(),
                                  [4, 2])


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="equal sections"):
        mnp.split(mnp.arange(5), 2)
    with pytest.raises(ValueError, match="both be given"):
        mnp.where(mnp.ones(2) > 0)
    with pytest.raises(ValueError, match="xmin and xmax"):
        mnp.clip(mnp.ones(2), None, None)
    with pytest.raises(TypeError, match="array"):
        mnp.array(["a", "b"])
    with pytest.raises(ValueError, match="mode"):
        mnp.take(mnp.ones(3), Tensor(np.array([0], np.int32)), mode="raise")


def test_mindspore_numpy_alias():
    from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases

    install_mindspore_aliases()
    try:
        import mindspore
        from mindspore.numpy import ones, split

        assert ones is mnp.ones and split is mnp.split
        assert mindspore.numpy is mnp
    finally:
        uninstall_mindspore_aliases()
