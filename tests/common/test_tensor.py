"""Tensor and Parameter against numpy: construction defaults, operators, indexing, methods."""
import numpy as np
import pytest

import aotnn as ms
from aotnn import Parameter, Tensor, ops

RNG = np.random.default_rng(20240611)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
Y = RNG.standard_normal((2, 3, 4)).astype(np.float32)
POS = (RNG.random((2, 3, 4)) + 0.5).astype(np.float32)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    actual = actual.asnumpy() if isinstance(actual, Tensor) else np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# -- construction ----------------------------------------------------------------------------
@pytest.mark.parametrize("data, dtype, shape", [
    (2, ms.int64, ()),
    (1.5, ms.float32, ()),
    (True, ms.bool_, ()),
    ([1, 2, 3], ms.int64, (3,)),
    ([[1.0, 2.0]], ms.float32, (1, 2)),
    (np.ones((2, 2), np.float64), ms.float64, (2, 2)),
    (np.float64(2.5), ms.float64, ()),
    (np.arange(3, dtype=np.int32), ms.int32, (3,)),
    (np.zeros(4, np.float16), ms.float16, (4,)),
    (np.array([True, False]), ms.bool_, (2,)),
])
def test_construction_defaults(data, dtype, shape):
    t = Tensor(data)
    assert t.dtype == dtype
    assert t.shape == shape
    assert t.ndim == len(shape)
    np.testing.assert_array_equal(t.asnumpy(), np.asarray(data))
    assert t.asnumpy().dtype == np.dtype(dtype.name)


def test_construction_with_dtype_and_copy_semantics():
    data = np.arange(6).reshape(2, 3)
    t = Tensor(data, ms.float32)
    assert t.dtype == ms.float32 and t.shape == (2, 3)
    np.testing.assert_array_equal(t.asnumpy(), data.astype(np.float32))
    data[0, 0] = 100          # the tensor holds its own copy
    assert t.asnumpy()[0, 0] == 0
    out = t.asnumpy()
    out[0, 1] = 50            # asnumpy() is a copy too
    assert t.asnumpy()[0, 1] == 1
    assert Tensor(t).dtype == ms.float32
    assert Tensor([1, 2], dtype=ms.int32).dtype == ms.int32
    assert Tensor(3, dtype=np.float16).dtype == ms.float16
    assert t.size == 6 and len(t) == 2


def test_construction_errors():
    with pytest.raises(TypeError):
        Tensor("abc")
    with pytest.raises(ValueError):
        Tensor()
    with pytest.raises(TypeError):
        Tensor(np.array(["a", "b"]))


def test_scalar_conversions():
    assert Tensor(3).item() == 3
    assert float(Tensor(2.5)) == 2.5
    assert int(Tensor(7)) == 7
    assert bool(Tensor(1)) is True
    assert Tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    with pytest.raises(ValueError):
        bool(Tensor([1, 2]))


# -- operators -------------------------------------------------------------------------------
@pytest.mark.parametrize("name, fn", [
    ("add", lambda a, b: a + b),
    ("sub", lambda a, b: a - b),
    ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b),
    ("pow", lambda a, b: a ** b),
])
def test_binary_operators(name, fn):
    a, b = (np.abs(X) + 0.1, Y) if name == "pow" else (X, POS)
    close(fn(Tensor(a), Tensor(b)), fn(a, b).astype(np.float32), rtol=1e-5)


def test_broadcasting_operators():
    row = RNG.standard_normal((4,)).astype(np.float32)
    col = RNG.standard_normal((3, 1)).astype(np.float32)
    close(Tensor(X) + Tensor(row), X + row)
    close(Tensor(X) * Tensor(col), X * col)
    close(Tensor(col) - Tensor(X), col - X)


def test_reverse_operators_with_python_scalars():
    t = Tensor(POS)
    close(t + 2, POS + 2)
    close(2 + t, 2 + POS)
    close(3 - t, 3 - POS)
    close(t - 3, POS - 3)
    close(2.5 * t, 2.5 * POS)
    close(1 / t, 1 / POS)
    close(t / 4, POS / 4)
    close(t ** 2, POS ** 2)
    close(2 ** t, (2 ** POS).astype(np.float32))
    close(-t, -POS)
    close(abs(Tensor(X)), np.abs(X))
    for out in (t + 2, 3 - t, 2.5 * t, t ** 2):
        assert out.dtype == ms.float32


def test_scalar_promotion_dtypes():
    i = Tensor(np.array([1, 2, 3], np.int64))
    assert (i + 1).dtype == ms.int64
    np.testing.assert_array_equal((3 - i).asnumpy(), [2, 1, 0])
    half = i * 1.5
    assert half.dtype == ms.float32
    close(half, np.array([1.5, 3.0, 4.5], np.float32))
    # integer division gives float32 (MindSpore's ops.div)
    q = Tensor(np.array([3, 4], np.int32)) / Tensor(np.array([2, 8], np.int32))
    assert q.dtype == ms.float32
    close(q, np.array([1.5, 0.5], np.float32))
    # an int tensor divided by a Python int (a 0-d constant cast inside the kernel)
    r = Tensor(np.array([1, 2], np.int32)) / 2
    assert r.dtype == ms.float32
    close(r, np.array([0.5, 1.0], np.float32))
    close(6 / Tensor(np.array([4, 3], np.int64)), np.array([1.5, 2.0], np.float32))
    # mixed tensor dtypes: int with float gives the float dtype
    m = Tensor(np.array([1, 2], np.int32)) + Tensor(np.array([0.5, 0.25], np.float32))
    assert m.dtype == ms.float32
    close(m, np.array([1.5, 2.25], np.float32))
    close(Tensor(np.array([1, 2], np.int32)) / Tensor(np.array([0.5, 4.0], np.float32)),
          np.array([2.0, 0.5], np.float32))
    # ...except that an integer or bool tensor with a float one gives the float one's dtype (MindSpore)
    h = Tensor(np.array([1, 2], np.int64)) * Tensor(np.array([0.5, 0.5], np.float16))
    assert h.dtype == ms.float16
    close(h, np.array([0.5, 1.0], np.float16))
    assert (Tensor(np.array([True])) + Tensor(np.array([1.5], np.float32))).dtype == ms.float32
    assert (Tensor(np.array([1], np.int16)) + Tensor(np.array([1], np.int32))).dtype == ms.int32
    # float64 stays float64
    d = Tensor(np.array([1.0, 2.0])) * 2
    assert d.dtype == ms.float64


def test_matmul_operator():
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 2)).astype(np.float32)
    close(Tensor(a) @ Tensor(b), a @ b, rtol=1e-5, atol=1e-5)
    batch = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    close(Tensor(batch) @ Tensor(b), batch @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, fn", [
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
])
def test_comparisons(name, fn):
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    b = np.array([[3.0, 2.0, 1.0], [4.0, 0.0, 7.0]], np.float32)
    out = fn(Tensor(a), Tensor(b))
    assert out.dtype == ms.bool_
    np.testing.assert_array_equal(out.asnumpy(), fn(a, b))
    np.testing.assert_array_equal(fn(Tensor(a), 3.0).asnumpy(), fn(a, 3.0))
    np.testing.assert_array_equal(fn(2.0, Tensor(a)).asnumpy(), fn(2.0, a))


# -- indexing --------------------------------------------------------------------------------
@pytest.mark.parametrize("index", [
    0, -1, 1,
    slice(None),
    slice(None, None, 2),
    (slice(None), slice(1, None, 2)),
    (Ellipsis, 1),
    (Ellipsis, -1),
    (None, Ellipsis, -1),
    (0, Ellipsis, None),
    (slice(None), None, 1),
    (1, slice(None, None, 3), -2),
    (slice(-2, None), slice(0, 3, 2), slice(1, 3)),
    (-1, -2, -3),
    None,
    Ellipsis,
    (slice(0, 1), Ellipsis, slice(None, None, 3)),
])
def test_indexing_matches_numpy(index):
    got = Tensor(X)[index]
    expected = X[index]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.asnumpy(), expected)


def test_indexing_errors():
    t = Tensor(X)
    with pytest.raises(IndexError):
        t[5]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(IndexError):
        t[..., 0, ...]


def test_setitem():
    t = Tensor(np.zeros((2, 3), np.float32))
    t[0, 1] = 5.0
    t[1] = Tensor(np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(t.asnumpy(), [[0, 5, 0], [1, 2, 3]])


# -- methods -----------------------------------------------------------------------------------
def test_reshape_transpose_flatten():
    t = Tensor(X)
    close(t.reshape(4, 6), X.reshape(4, 6))
    close(t.reshape((6, -1)), X.reshape(6, -1))
    close(t.reshape([24]), X.reshape(24))
    close(t.transpose(), X.transpose())
    close(t.transpose(1, 0, 2), X.transpose(1, 0, 2))
    close(t.transpose((2, 0, 1)), X.transpose(2, 0, 1))
    close(t.T, X.T)
    close(t.flatten(), X.reshape(-1))
    close(t.expand_dims(0), X[None])
    close(t.expand_dims(-1), X[..., None])
    ones = Tensor(np.ones((1, 3, 1), np.float32))
    assert ones.squeeze().shape == (3,)
    assert ones.squeeze(0).shape == (3, 1)
    assert ones.squeeze(2).shape == (1, 3)
    with pytest.raises(Exception):
        t.reshape(5, 5)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    t = Tensor(X)
    close(t.sum(axis=axis, keepdims=keepdims), X.sum(axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-5)
    close(t.mean(axis=axis, keep_dims=keepdims), X.mean(axis=axis, keepdims=keepdims), rtol=1e-5, atol=1e-6)
    close(t.max(axis=axis, keepdims=keepdims), X.max(axis=axis, keepdims=keepdims))
    close(t.min(axis=axis, keepdims=keepdims), X.min(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_argmax(axis):
    out = Tensor(X).argmax(axis=axis)
    assert out.dtype == ms.int64
    np.testing.assert_array_equal(out.asnumpy(), np.argmax(X, axis=axis))
    out = Tensor(X).argmin(axis=axis)
    np.testing.assert_array_equal(out.asnumpy(), np.argmin(X, axis=axis))


def test_argmax_dtypes_primitive_vs_functional():
    assert ops.Argmax()(Tensor(X)).dtype == ms.int32
    np.testing.assert_array_equal(ops.Argmax()(Tensor(X)).asnumpy(), X.argmax(-1))
    np.testing.assert_array_equal(ops.Argmax(axis=1)(Tensor(X)).asnumpy(), X.argmax(1))
    assert ops.Argmax(output_type=ms.int64)(Tensor(X)).dtype == ms.int64
    assert ops.argmax(Tensor(X), 1).dtype == ms.int64
    np.testing.assert_array_equal(ops.argmax(Tensor(X), 1).asnumpy(), X.argmax(1))


def test_astype():
    t = Tensor(np.array([1.7, -2.7, 0.2], np.float32))
    i = t.astype(ms.int32)
    assert i.dtype == ms.int32
    np.testing.assert_array_equal(i.asnumpy(), np.array([1.7, -2.7, 0.2], np.float32).astype(np.int32))
    assert t.astype(ms.float16).dtype == ms.float16
    assert t.astype(np.float64).dtype == ms.float64
    assert t.astype("int64").dtype == ms.int64
    b = t.astype(ms.bool_)
    np.testing.assert_array_equal(b.asnumpy(), [True, True, True])


def test_full_defaults_to_int64_and_truncates():
    t = ops.full((2, 3), 2.7)
    assert t.dtype == ms.int64
    np.testing.assert_array_equal(t.asnumpy(), np.full((2, 3), 2))
    np.testing.assert_array_equal(ops.full((2,), -2.7).asnumpy(), [-2, -2])
    f = ops.full((2,), 2.7, dtype=ms.float32)
    assert f.dtype == ms.float32
    np.testing.assert_allclose(f.asnumpy(), [2.7, 2.7])


# -- Parameter ---------------------------------------------------------------------------------
def test_parameter_basics():
    p = Parameter(Tensor(np.ones((2, 3), np.float32)), name="w")
    assert isinstance(p, Tensor)
    assert p.name == "w" and p.requires_grad is True
    assert p.shape == (2, 3) and p.dtype == ms.float32
    q = Parameter(np.zeros(3, np.float32), requires_grad=False)
    assert q.requires_grad is False
    assert q.name == "Parameter"
    q.requires_grad = True
    assert q.requires_grad
    with pytest.raises(TypeError):
        Parameter(np.zeros(2), name=3)
    assert "name=w" in repr(p) and "shape=(2, 3)" in repr(p)


def test_parameter_set_data():
    p = Parameter(Tensor(np.zeros((2, 2), np.float32)), name="p")
    p.set_data(Tensor(np.full((2, 2), 3, np.float64)))
    assert p.dtype == ms.float32                      # keeps its dtype
    np.testing.assert_array_equal(p.asnumpy(), np.full((2, 2), 3))
    p.set_data(np.arange(6, dtype=np.float32).reshape(3, 2))
    assert p.shape == (3, 2)                          # the shape may change
    np.testing.assert_array_equal(p.asnumpy(), np.arange(6).reshape(3, 2))
    p.set_data(1.5)
    np.testing.assert_array_equal(p.asnumpy(), np.full((3, 2), 1.5))
    with pytest.raises(TypeError):
        p.set_data("x")


def test_parameter_clone():
    p = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="w", requires_grad=False)
    c = p.clone()
    assert c is not p and isinstance(c, Parameter)
    assert c.name == "w" and c.requires_grad is False
    np.testing.assert_array_equal(c.asnumpy(), p.asnumpy())
    c.set_data(np.zeros(4, np.float32))
    np.testing.assert_array_equal(p.asnumpy(), np.arange(4))   # independent storage
    z = p.clone(init="zeros")
    np.testing.assert_array_equal(z.asnumpy(), np.zeros(4))


def test_parameter_in_arithmetic():
    p = Parameter(Tensor(POS), name="p")
    close(p * 2 + Tensor(X), POS * 2 + X)
