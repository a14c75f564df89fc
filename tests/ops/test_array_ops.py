"""MindSpore 2.x array ops (split, unstack, gather_elements, repeats, cumsum, axes moves, creation) and
their primitives against numpy and PyTorch CPU."""
import numpy as np
import pytest
import torch

import aotnn as ms
from aotnn import Tensor, nn, ops

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_split_sizes_and_sections_against_numpy():
    x = rand(2, 7, 3)
    pieces = ops.split(Tensor(x), 3, axis=1)
    for got, want in zip(pieces, np.split(x, [3, 6], axis=1)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    pieces = ops.split(Tensor(x), [2, 5], axis=-2)
    for got, want in zip(pieces, np.split(x, [2], axis=1)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    with pytest.raises(ValueError, match="sum to 7"):
        ops.split(Tensor(x), [2, 2], axis=1)
    with pytest.raises(TypeError, match="split_size_or_sections"):
        ops.split(Tensor(x), 2.5, axis=1)


def test_chunk_unstack_and_the_unstack_primitive():
    x = rand(3, 5)
    assert [p.shape for p in ops.chunk(Tensor(x), 2, axis=1)] == [(3, 3), (3, 2)]
    rows = ops.Unstack(axis=1)(Tensor(x))
    assert len(rows) == 5
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(row.asnumpy(), x[:, i])
    with pytest.raises(ValueError, match="num is 4"):
        ops.Unstack(axis=1, num=4)(Tensor(x))


def test_split_primitive_against_numpy():
    x = rand(2, 8, 3)
    pieces = ops.Split(1, 4)(Tensor(x))
    expected = np.split(x, 4, axis=1)
    assert len(pieces) == 4
    for piece, want in zip(pieces, expected):
        np.testing.assert_array_equal(piece.asnumpy(), want)
    with pytest.raises(ValueError, match="divisible"):
        ops.Split(1, 3)(Tensor(x))
    with pytest.raises(ValueError, match="output_num"):
        ops.Split(0, 0)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_elements_against_torch(dim):
    x = rand(3, 4, 5)
    index_shape = [3, 4, 5]
    index_shape[dim] = 6
    index = RNG.integers(0, x.shape[dim], index_shape).astype(np.int64)
    want = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(index)).numpy()
    np.testing.assert_array_equal(ops.gather_elements(Tensor(x), dim, Tensor(index)).asnumpy(), want)


def test_gather_elements_smaller_index_and_int32():
    x = rand(4, 5)
    index = RNG.integers(0, 4, (2, 3)).astype(np.int32)
    want = torch.gather(torch.from_numpy(x), 0, torch.from_numpy(index.astype(np.int64))).numpy()
    np.testing.assert_array_equal(ops.gather_elements(Tensor(x), 0, Tensor(index)).asnumpy(), want)
    with pytest.raises(TypeError, match="int32 or int64"):
        ops.gather_elements(Tensor(x), 0, Tensor(index.astype(np.float32)))


def test_repeat_elements_and_interleave_against_numpy():
    x = rand(2, 3)
    np.testing.assert_array_equal(ops.repeat_elements(Tensor(x), 3, axis=1).asnumpy(), np.repeat(x, 3, axis=1))
    np.testing.assert_array_equal(ops.repeat_interleave(Tensor(x), 2).asnumpy(), np.repeat(x, 2))
    with pytest.raises(ValueError, match="rep"):
        ops.repeat_elements(Tensor(x), 0)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumsum_against_numpy(axis):
    x = rand(3, 4, 5)
    np.testing.assert_allclose(ops.cumsum(Tensor(x), axis).asnumpy(), np.cumsum(x, axis), rtol=1e-5, atol=1e-5)


def test_cumsum_of_ints():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(ops.cumsum(Tensor(x), 1).asnumpy(), np.cumsum(x, 1))


def test_axis_moves_and_flip_against_numpy():
    x = rand(2, 3, 4)
    np.testing.assert_array_equal(ops.swapaxes(Tensor(x), 0, 2).asnumpy(), np.swapaxes(x, 0, 2))
    np.testing.assert_array_equal(ops.movedim(Tensor(x), 0, -1).asnumpy(), np.moveaxis(x, 0, -1))
    np.testing.assert_array_equal(ops.movedim(Tensor(x), (0, 1), (2, 0)).asnumpy(),
                                  np.moveaxis(x, (0, 1), (2, 0)))
    np.testing.assert_array_equal(ops.flip(Tensor(x), (0, 2)).asnumpy(), np.flip(x, (0, 2)))
    np.testing.assert_array_equal(ops.narrow(Tensor(x), 2, 1, 2).asnumpy(), x[:, :, 1:3])


def test_creation_ops_against_numpy():
    np.testing.assert_allclose(ops.linspace(-1, 2, 7).asnumpy(), np.linspace(-1, 2, 7), rtol=1e-6)
    assert ops.linspace(0, 1, 3).dtype == ms.float32
    np.testing.assert_array_equal(ops.eye(3, 4, ms.int32).asnumpy(), np.eye(3, 4, dtype=np.int32))
    np.testing.assert_array_equal(ops.tuple_to_array((1, 2, 3)).asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(ops.Zeros()((2, 3), ms.float32).asnumpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(ops.Ones()(4, ms.int32).asnumpy(), np.ones(4))
    with pytest.raises(ValueError, match="steps"):
        ops.linspace(0, 1, 0)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_against_numpy(indexing):
    a, b, c = np.arange(3, dtype=np.float32), np.arange(4, dtype=np.float32) * 2, np.arange(2, dtype=np.float32)
    got = ops.meshgrid(Tensor(a), Tensor(b), Tensor(c), indexing=indexing)
    for g, w in zip(got, np.meshgrid(a, b, c, indexing=indexing)):
        np.testing.assert_array_equal(g.asnumpy(), w)


def test_tile_primitive_rank_changes_against_numpy():
    x = rand(2, 3)
    np.testing.assert_array_equal(ops.Tile()(Tensor(x), (2, 1, 3)).asnumpy(), np.tile(x, (2, 1, 3)))
    np.testing.assert_array_equal(ops.Tile()(Tensor(x), (2,)).asnumpy(), np.tile(x, (2,)))


def test_elementwise_primitives():
    x = rand(3, 4)
    np.testing.assert_allclose(ops.Reciprocal()(Tensor(x)).asnumpy(), 1 / x, rtol=1e-6)
    np.testing.assert_array_equal(ops.Sign()(Tensor(x)).asnumpy(), np.sign(x))
    np.testing.assert_array_equal(ops.Identity()(Tensor(x)).asnumpy(), x)
    norm = np.sqrt(np.maximum((x ** 2).sum(1, keepdims=True), 1e-4))
    np.testing.assert_allclose(ops.L2Normalize(axis=1)(Tensor(x)).asnumpy(), x / norm, rtol=1e-5)
    mask = x > 0
    np.testing.assert_array_equal(ops.masked_fill(Tensor(x), Tensor(mask), 5.0).asnumpy(), np.where(mask, 5, x))


def test_argmax_2x_signature_and_1x_keywords():
    x = rand(3, 4, 5)
    assert ops.argmax(Tensor(x), dim=1, keepdim=True).shape == (3, 1, 5)
    np.testing.assert_array_equal(ops.argmax(Tensor(x), dim=-1).asnumpy(), x.argmax(-1))
    np.testing.assert_array_equal(ops.argmax(Tensor(x), axis=0).asnumpy(), x.argmax(0))
    np.testing.assert_array_equal(ops.argmax(Tensor(x), axis=2, keepdims=True).asnumpy(), x.argmax(2)[..., None])
    assert ops.argmax(Tensor(x)).asnumpy() == x.argmax()
    assert ops.argmax(Tensor(x), 1).dtype == ms.int64
    with pytest.raises(TypeError, match="both 'dim' and 'axis'"):
        ops.argmax(Tensor(x), dim=1, axis=1)


def test_array_ops_inside_a_compiled_cell():
    class Net(nn.Cell):
        def construct(self, x, index):
            a, b = ops.split(x, [1, 3], axis=1)
            picked = ops.gather_elements(b, 1, index)
            return ops.cumsum(picked, 1) + ops.repeat_elements(a, 2, axis=1)

    x = rand(2, 4)
    index = np.array([[0, 2], [1, 1]], np.int64)
    picked = np.take_along_axis(x[:, 1:], index, 1)
    want = np.cumsum(picked, 1) + np.repeat(x[:, :1], 2, axis=1)
    got = Net()(Tensor(x), Tensor(index))
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("axis, reduction", [(1, "none"), (0, "add"), (-1, "add")])
def test_tensor_scatter_elements_against_torch(axis, reduction):
    x = rand(3, 5)
    dim = axis % 2
    index_shape = (2, 5) if dim == 0 else (3, 2)
    # distinct indices along the axis for 'none' (PyTorch leaves the winner of duplicates unspecified)
    index = np.stack([RNG.permutation(x.shape[dim])[:index_shape[dim]] for _ in range(index_shape[1 - dim])],
                     axis=1 - dim).astype(np.int64)
    updates = rand(*index_shape)
    t = torch.from_numpy(x.copy())
    want = (t.scatter(dim, torch.from_numpy(index), torch.from_numpy(updates)) if reduction == "none"
            else t.scatter_add(dim, torch.from_numpy(index), torch.from_numpy(updates)))
    got = ops.tensor_scatter_elements(Tensor(x), Tensor(index), Tensor(updates), axis, reduction)
    np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-6)


def test_ops_function_namespace_alias():
    assert ops.function.silu is ops.silu and ops.function.split is ops.split
