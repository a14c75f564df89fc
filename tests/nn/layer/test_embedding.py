"""Embedding, EmbeddingLookup and MultiFieldEmbeddingLookup against PyTorch / numpy references."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn


def _reference_lookup(table: np.ndarray, ids: np.ndarray, max_norm=None) -> np.ndarray:
    """PyTorch's embedding for in-range ids, zero rows for the others (MindSpore's documented behaviour)."""
    valid = (ids >= 0) & (ids < table.shape[0])
    rows = F.embedding(torch.tensor(np.where(valid, ids, 0).astype(np.int64)), torch.tensor(table.copy()),
                       max_norm=max_norm).numpy()
    return np.where(valid[..., None], rows, 0)


def test_embedding_matches_torch_with_out_of_range_ids():
    aotnn.set_seed(0)
    net = nn.Embedding(7, 5)
    assert net.embedding_table.shape == (7, 5) and net.embedding_table.name == "embedding_table"
    ids = np.array([[0, 6, 3], [7, -1, 2]], np.int32)
    out = net(Tensor(ids))
    assert out.shape == (2, 3, 5) and out.dtype == aotnn.float32
    np.testing.assert_allclose(out.asnumpy(), _reference_lookup(net.embedding_table.asnumpy(), ids), rtol=1e-6)
    assert not out.asnumpy()[1, 0].any() and not out.asnumpy()[1, 1].any()


def test_embedding_one_hot_padding_idx_and_int64_ids():
    table = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    net = nn.Embedding(6, 4, use_one_hot=True, embedding_table=Tensor(table), padding_idx=2)
    assert not net.embedding_table.asnumpy()[2].any()
    assert table[2].any()  # the caller's tensor is left alone
    ids = np.array([2, 5, 0, 2, 9], np.int64)
    want = _reference_lookup(np.where(np.arange(6)[:, None] == 2, 0, table), ids)
    np.testing.assert_allclose(net(Tensor(ids)).asnumpy(), want, rtol=1e-6)


def test_embedding_documented_example():
    net = nn.Embedding(200, 16, True)
    x = Tensor(np.ones([8, 12]), aotnn.int32)
    out = net(x)
    assert out.shape == (8, 12, 16)
    np.testing.assert_array_equal(out.asnumpy()[3, 7], net.embedding_table.asnumpy()[1])


@pytest.mark.parametrize("target", ["CPU", "DEVICE"])
def test_embedding_lookup_matches_torch(target):
    aotnn.set_seed(0)
    net = nn.EmbeddingLookup(9, 3, param_init="uniform", target=target, sparse=target == "CPU")
    ids = np.array([[1, 0], [3, 12], [8, 8]], np.int32)
    out = net(Tensor(ids))
    assert out.shape == (3, 2, 3)
    np.testing.assert_allclose(out.asnumpy(), _reference_lookup(net.embedding_table.asnumpy(), ids), rtol=1e-6)


def test_embedding_lookup_max_norm_and_float16():
    table = np.random.default_rng(2).normal(0, 2, (5, 4)).astype(np.float32)
    net = nn.EmbeddingLookup(5, 4, param_init=Tensor(table), max_norm=1.5)
    ids = np.array([4, 0, 2, 7], np.int32)
    np.testing.assert_allclose(net(Tensor(ids)).asnumpy(), _reference_lookup(table, ids, max_norm=1.5),
                               rtol=1e-5, atol=1e-6)
    half = nn.EmbeddingLookup(5, 4, param_init=Tensor(table.astype(np.float16)), dtype=aotnn.float16)
    out = half(Tensor(ids))
    assert out.dtype == aotnn.float16
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), _reference_lookup(table, ids), atol=2e-3)


def _reference_fields(table, ids, values, fields, field_size, operator):
    """MindSpore's formula written with loops: weight each row, pool rows per (sample, field)."""
    batch, length = ids.shape
    out = np.zeros((batch, field_size, table.shape[1]), np.float32)
    for b in range(batch):
        for f in range(field_size):
            members = [l for l in range(length) if fields[b, l] == f]
            weight = sum(abs(values[b, l]) for l in members)
            if weight == 0:
                continue
            rows = [values[b, l] * table[ids[b, l]] for l in members]
            if operator == "SUM":
                out[b, f] = np.sum(rows, axis=0)
            elif operator == "MEAN":
                out[b, f] = np.sum(rows, axis=0) / weight
            else:
                out[b, f] = np.max([r for r, l in zip(rows, members) if values[b, l] != 0], axis=0)
    return out


@pytest.mark.parametrize("operator", ["SUM", "MEAN", "MAX"])
def test_multi_field_embedding_lookup(operator):
    table = np.random.default_rng(3).normal(size=(10, 3)).astype(np.float32)
    net = nn.MultiFieldEmbeddingLookup(10, 3, field_size=3, param_init=Tensor(table), operator=operator)
    ids = np.array([[2, 4, 6, 0, 0], [1, 3, 5, 7, 0]], np.int32)
    values = np.array([[1, 0.5, 2, 0, 0], [1, -1, 3, 0.25, 0]], np.float32)
    fields = np.array([[0, 1, 1, 0, 0], [0, 0, 1, 0, 0]], np.int32)  # field 2 stays empty
    out = net(Tensor(ids), Tensor(values), Tensor(fields))
    assert out.shape == (2, 3, 3) and out.dtype == aotnn.float32
    np.testing.assert_allclose(out.asnumpy(), _reference_fields(table, ids, values, fields, 3, operator),
                               rtol=1e-5, atol=1e-6)


def test_multi_field_documented_example():
    input_indices = Tensor([[2, 4, 6, 0, 0], [1, 3, 5, 0, 0]], aotnn.int32)
    input_values = Tensor([[1, 1, 1, 0, 0], [1, 1, 1, 0, 0]], aotnn.float32)
    field_ids = Tensor([[0, 1, 1, 0, 0], [0, 0, 1, 0, 0]], aotnn.int32)
    net = nn.MultiFieldEmbeddingLookup(10, 2, field_size=2, operator='SUM', target='DEVICE')
    assert net(input_indices, input_values, field_ids).shape == (2, 2, 2)


@pytest.mark.parametrize("make,error", [
    (lambda: nn.Embedding(7.0, 3), TypeError),
    (lambda: nn.Embedding(7, 3, use_one_hot=1), TypeError),
    (lambda: nn.Embedding(7, 3, padding_idx=7), ValueError),
    (lambda: nn.Embedding(7, 3, padding_idx=-1), ValueError),
    (lambda: nn.Embedding(7, 3, dtype=aotnn.bool_), TypeError),
    (lambda: nn.EmbeddingLookup(0, 3), ValueError),
    (lambda: nn.EmbeddingLookup(4, "3"), TypeError),
    (lambda: nn.EmbeddingLookup(4, 3, target="GPU"), ValueError),
    (lambda: nn.EmbeddingLookup(4, 3, sparse=False), ValueError),
    (lambda: nn.EmbeddingLookup(4, 3, sparse=1), TypeError),
    (lambda: nn.EmbeddingLookup(4, 3, slice_mode="row"), ValueError),
    (lambda: nn.EmbeddingLookup(4, 3, manual_shapes=[2, 2]), TypeError),
    (lambda: nn.EmbeddingLookup(4, 3, vocab_cache_size=-1), ValueError),
    (lambda: nn.EmbeddingLookup(4, 3, max_norm=0.0), ValueError),
    (lambda: nn.MultiFieldEmbeddingLookup(4, 3, field_size=0), ValueError),
    (lambda: nn.MultiFieldEmbeddingLookup(4, 3, 2, operator="MIN"), ValueError),
    (lambda: nn.MultiFieldEmbeddingLookup(4, 3, 2, feature_num_list=[1]), TypeError),
])
def test_invalid_arguments(make, error):
    with pytest.raises(error):
        make()


def test_invalid_inputs():
    with pytest.raises(TypeError, match="dtype of 'x'"):
        nn.Embedding(4, 2)(Tensor(np.zeros((2, 2), np.float32)))
    net = nn.MultiFieldEmbeddingLookup(4, 2, 2)
    ids = Tensor(np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError, match="input_values"):
        net(ids, Tensor(np.zeros((2, 3), np.float16)), ids)
    with pytest.raises(ValueError, match="2d"):
        net(Tensor(np.zeros((6,), np.int32)), Tensor(np.zeros((6,), np.float32)), Tensor(np.zeros((6,), np.int32)))


def test_table_gradient_skips_out_of_range_ids():
    net = nn.Embedding(6, 3)

    class Loss(nn.Cell):
        def __init__(self):
            super().__init__()
            self.embedding = net

        def construct(self, ids):
            return (self.embedding(ids) ** 2).sum()

    ids = np.array([[1, 1, 7], [4, -2, 0]], np.int32)
    grad = aotnn.ops.GradOperation(get_by_list=True)(Loss(), net.trainable_params())(Tensor(ids))[0]
    table = net.embedding_table.asnumpy()
    want = np.zeros_like(table)
    for i in (1, 1, 4, 0):
        want[i] += 2 * table[i]
    np.testing.assert_allclose(grad.asnumpy(), want, rtol=1e-6)
