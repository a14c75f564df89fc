"""The int8 add against numpy written from its formula (float32 multipliers, round half to even, saturate)."""
import numpy as np
import pytest

from aotnn import Tensor, ops
from relay_frontend.errors import CaptureError

RNG = np.random.default_rng(27)


def _reference(a, b, ma, mb, za, zb, zy, qmin, qmax, dtype):
    left = (a.astype(np.int32) - za).astype(np.float32) * np.float32(ma)
    right = (b.astype(np.int32) - zb).astype(np.float32) * np.float32(mb)
    return np.clip(np.rint(left + right) + zy, qmin, qmax).astype(dtype)


@pytest.mark.parametrize("dtype, b_shape, za, zb, zy", [
    ("uint8", (2, 8, 5, 5), 128, 3, 60),
    ("int8", (1, 8, 1, 1), -5, 0, 7),
    ("uint8", (5,), 0, 255, 0),
])
def test_int8_add_matches_numpy(dtype, b_shape, za, zb, zy):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max + 1, (2, 8, 5, 5)).astype(dtype)
    b = RNG.integers(info.min, info.max + 1, b_shape).astype(dtype)
    ma, mb = np.float32(0.37), np.float32(1.3)
    got = ops.int8_add(Tensor(a), Tensor(b), ma, mb, za, zb, zy, int(info.min), int(info.max), dtype).asnumpy()
    expected = _reference(a, b, ma, mb, za, zb, zy, info.min, info.max, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == (2, 8, 5, 5)
    np.testing.assert_array_equal(got, expected)


def test_int8_add_rounds_half_to_even():
    """Multipliers of 0.5 put every odd sum on a tie: 1.5 -> 2, 2.5 -> 2, -0.5 -> -0 (hand-computed)."""
    a = np.array([3, 5, -1, 1], np.int8)
    b = np.zeros(4, np.int8)
    got = ops.int8_add(Tensor(a), Tensor(b), 0.5, 1.0).asnumpy()
    np.testing.assert_array_equal(got, np.array([2, 2, 0, 0], np.int8))


def test_int8_add_saturates():
    a = np.full(3, 255, np.uint8)
    got = ops.int8_add(Tensor(a), Tensor(a), 1.0, 1.0, qmin=0, qmax=255, out_dtype="uint8").asnumpy()
    np.testing.assert_array_equal(got, np.full(3, 255, np.uint8))


@pytest.mark.parametrize("kwargs, words", [
    ({"a_zero_point": 300}, ("a_zero_point", "[-128, 127]", "300")),
    ({"b_multiplier": -1.0}, ("b_multiplier", "positive")),
    ({"out_dtype": "int32"}, ("out_dtype", "int32")),
])
def test_int8_add_rejects_bad_arguments(kwargs, words):
    a = np.zeros(4, np.int8)
    args = {"a_multiplier": 1.0, "b_multiplier": 1.0, **kwargs}
    with pytest.raises((CaptureError, ValueError, TypeError)) as err:
        ops.int8_add(Tensor(a), Tensor(a), **args)
    for word in words:
        assert word in str(err.value)


def test_int8_add_rejects_float_input():
    with pytest.raises((CaptureError, ValueError, TypeError)) as err:
        ops.int8_add(Tensor(np.zeros(4, np.float32)), Tensor(np.zeros(4, np.int8)), 1.0, 1.0)
    assert "int8 or uint8" in str(err.value)
