"""RowTensor (mindspore.RowTensor): construction checks, fields, and dispatch by MultitypeFuncGraph as
mindcv's gradient scaling does."""
import numpy as np
import pytest

import aotnn as ms
from aotnn import RowTensor, Tensor, ops


def _rows():
    return RowTensor(Tensor(np.array([0, 2], np.int32)), Tensor(np.ones((2, 3), np.float32)), (4, 3))


def test_fields_and_copy():
    rows = _rows()
    assert rows.dense_shape == (4, 3) and rows.dtype == ms.float32
    np.testing.assert_array_equal(rows.indices.asnumpy(), [0, 2])
    copy = RowTensor(row_tensor=rows)
    assert copy.values is rows.values and copy.dense_shape == rows.dense_shape


@pytest.mark.parametrize("indices, values, shape, error, match", [
    (np.array([0, 1], np.float32), np.ones((2, 3), np.float32), (4, 3), TypeError, "int32/int64"),
    (np.array([0, 1], np.int64), np.ones((2, 2), np.float32), (4, 3), ValueError, r"shape \(2, 3\)"),
    (np.array([0, 4], np.int64), np.ones((2, 3), np.float32), (4, 3), ValueError, r"\[0, 4\)"),
    (np.array([0, 1], np.int64), np.ones((2, 3), np.float32), (4, 0), TypeError, "shape must be"),
])
def test_construction_errors(indices, values, shape, error, match):
    with pytest.raises(error, match=match):
        RowTensor(Tensor(indices), Tensor(values), shape)


def test_multitype_dispatch_on_row_tensor():
    scale = ops.MultitypeFuncGraph("grad_scale")

    @scale.register("Tensor", "RowTensor")
    def _(factor, grad):
        return RowTensor(grad.indices, grad.values * factor, grad.dense_shape)

    out = scale(Tensor(np.float32(0.5)), _rows())
    assert isinstance(out, RowTensor)
    np.testing.assert_allclose(out.values.asnumpy(), np.full((2, 3), 0.5))
