"""nn.Pad, ops.Pad, ops.MirrorPad and ops.pad against numpy's np.pad and PyTorch's F.pad."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn as ms
from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(5)
NUMPY_MODE = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_doc_example(mode):
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    expected = {
        "CONSTANT": [[0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 2, 3, 0, 0], [0, 0, 4, 5, 6, 0, 0], [0, 0, 0, 0, 0, 0, 0]],
        "REFLECT": [[6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1], [6, 5, 4, 5, 6, 5, 4], [3, 2, 1, 2, 3, 2, 1]],
        "SYMMETRIC": [[2, 1, 1, 2, 3, 3, 2], [2, 1, 1, 2, 3, 3, 2], [5, 4, 4, 5, 6, 6, 5], [5, 4, 4, 5, 6, 6, 5]],
    }[mode]
    out = nn.Pad(paddings=((1, 1), (2, 2)), mode=mode)(Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), np.array(expected, np.float32))


@pytest.mark.parametrize("mode, paddings", [
    ("CONSTANT", ((0, 1), (2, 0), (1, 3), (0, 2))),
    ("REFLECT", ((0, 0), (1, 2), (2, 4), (3, 1))),
    ("SYMMETRIC", ((1, 0), (3, 3), (0, 5), (4, 2))),
])
def test_pad_4d_against_numpy(mode, paddings):
    x = rand(2, 3, 5, 4)
    out = nn.Pad(paddings, mode)(Tensor(x))
    np.testing.assert_array_equal(out.asnumpy(), np.pad(x, paddings, mode=NUMPY_MODE[mode]))


def test_pad_float16_and_int():
    x = rand(3, 4, dtype=np.float16)
    out = nn.Pad(((1, 2), (2, 1)), "REFLECT")(Tensor(x))
    assert out.dtype == ms.float16
    np.testing.assert_array_equal(out.asnumpy(), np.pad(x, ((1, 2), (2, 1)), mode="reflect"))
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = nn.Pad(((2, 0), (1, 1)))(Tensor(xi))
    assert out.dtype == ms.int32
    np.testing.assert_array_equal(out.asnumpy(), np.pad(xi, ((2, 0), (1, 1))))


def test_pad_inside_a_cell():
    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.pad = nn.Pad(((0, 0), (0, 0), (1, 1), (2, 2)), "SYMMETRIC")
            self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", weight_init="ones")

        def construct(self, x):
            return self.conv(self.pad(x))

    x = rand(1, 2, 5, 4)
    ref = F.conv2d(torch.from_numpy(np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode="symmetric")),
                   torch.ones(3, 2, 3, 3))
    np.testing.assert_allclose(Net()(Tensor(x)).asnumpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


def test_pad_primitives():
    x = rand(2, 3)
    np.testing.assert_array_equal(ops.Pad(((1, 1), (2, 2)))(Tensor(x)).asnumpy(), np.pad(x, ((1, 1), (2, 2))))
    paddings = Tensor(np.array([[1, 0], [2, 2]], np.int64))
    np.testing.assert_array_equal(ops.MirrorPad("SYMMETRIC")(Tensor(x), paddings).asnumpy(),
                                  np.pad(x, ((1, 0), (2, 2)), mode="symmetric"))


@pytest.mark.parametrize("mode, padding, value", [
    ("constant", (1, 2, 0, 3), 1.5),
    ("reflect", (2, 1, 1, 2), None),
    ("replicate", (3, 0, 2, 4), None),
    ("circular", (1, 2, 2, 1), None),
])
def test_functional_pad_against_torch(mode, padding, value):
    x = rand(1, 2, 4, 5)
    out = ops.pad(Tensor(x), padding, mode, value)
    kwargs = {"value": value} if value is not None else {}
    ref = F.pad(torch.from_numpy(x), padding, mode=mode, **kwargs)
    np.testing.assert_array_equal(out.asnumpy(), ref.numpy())


@pytest.mark.parametrize("make, error", [
    (lambda: nn.Pad([[1, 1]]), TypeError),
    (lambda: nn.Pad(((1, 1, 1),)), ValueError),
    (lambda: nn.Pad(((1, 1),) * 5), ValueError),
    (lambda: nn.Pad(((1, -1),)), ValueError),
    (lambda: nn.Pad(((1, 1.5),)), TypeError),
    (lambda: nn.Pad(((1, 1),), mode="EDGE"), ValueError),
    (lambda: nn.Pad(((1, 1),), mode="reflect"), ValueError),
    (lambda: ops.Pad([[1, 1]]), TypeError),
    (lambda: ops.MirrorPad("CONSTANT"), ValueError),
])
def test_bad_arguments(make, error):
    with pytest.raises(error):
        make()


def test_bad_inputs():
    x = Tensor(rand(2, 3))
    with pytest.raises(ValueError):
        nn.Pad(((1, 1),))(x)                          # one pair for a 2-D input
    with pytest.raises(ValueError):
        nn.Pad(((0, 0), (3, 0)), "REFLECT")(x)        # reflect needs padding < 3
    with pytest.raises(ValueError):
        nn.Pad(((0, 0), (4, 0)), "SYMMETRIC")(x)
    with pytest.raises(ValueError):
        ops.pad(x, (1, 2, 3))
    with pytest.raises(TypeError):
        ops.pad(x, (1, 1), mode="reflect", value=2.0)
