"""Every kind of numpy array a caller may hand the runtime gives the PyTorch reference output.

Read-only (memory-mapped), strided, misaligned, Fortran-order and big-endian arrays are
converted to what the kernels assume; an array whose memory moved between two calls (resized
in place, or a new array at a recycled address) is read where it lies now.
"""
from __future__ import annotations

import numpy as np
import pytest

import aotnn_runtime
from aotnn_runtime import InputError

from tests.conftest import lenet_reference


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * np.abs(expected).max())


@pytest.fixture(scope="module")
def module(lenet_artifact):
    return aotnn_runtime.load(lenet_artifact[0])


def _read_only(x, tmp_path):
    y = x.copy()
    y.flags.writeable = False
    return y


def _memory_mapped(x, tmp_path):
    np.save(tmp_path / "x.npy", x)
    return np.load(tmp_path / "x.npy", mmap_mode="r")


def _strided(x, tmp_path):
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), np.float32)
    wide[..., 1::2] = x
    return wide[..., 1::2]


def _misaligned(x, tmp_path):
    raw = np.zeros(x.nbytes + 1, np.uint8)
    y = raw[1:].view(np.float32).reshape(x.shape)  # not even 4-byte aligned: numpy's flag is off
    y[...] = x
    assert not y.flags.aligned
    return y


def _read_only_misaligned(x, tmp_path):
    y = _misaligned(x, tmp_path)
    y.flags.writeable = False
    return y


def _fortran(x, tmp_path):
    return np.asfortranarray(x)


def _big_endian(x, tmp_path):
    return x.astype(">f4")


def _read_only_big_endian_strided(x, tmp_path):
    y = _strided(x, tmp_path).astype(">f4")[..., :]
    y = np.lib.stride_tricks.as_strided(y, writeable=False)
    return y


def _nested_list(x, tmp_path):
    return x.tolist()  # Python floats: converted to the input's dtype


KINDS = [_read_only, _memory_mapped, _strided, _misaligned, _read_only_misaligned, _fortran, _big_endian,
         _read_only_big_endian_strided, _nested_list]


@pytest.mark.parametrize("make", KINDS, ids=[kind.__name__.lstrip("_") for kind in KINDS])
def test_each_kind_of_array_gives_the_reference(module, lenet_artifact, tmp_path, make):
    _, _, x, expected = lenet_artifact
    value = make(x, tmp_path)
    _close(module.run(value)[0], expected)
    _close(module.run(value)[0], expected)  # a second call with the same array: the cached path


@pytest.mark.parametrize("make", KINDS, ids=[kind.__name__.lstrip("_") for kind in KINDS])
def test_no_kind_of_array_is_modified_or_kept(module, lenet_artifact, tmp_path, make):
    """The conversion never writes into the caller's array, and a later call sees new contents."""
    _, params, x, expected = lenet_artifact
    value = make(x, tmp_path)
    before = np.array(value, copy=True)
    _close(module.run(value)[0], expected)
    np.testing.assert_array_equal(np.asarray(value), before)
    other = -x
    _close(module.run(make(other, tmp_path))[0], lenet_reference(params, other))


def test_read_only_input_through_raw_and_prepare_steps(lenet_artifact):
    """A fresh module's first call (the handle path) also takes a read-only input."""
    path, _, x, expected = lenet_artifact
    y = x.copy()
    y.flags.writeable = False
    module = aotnn_runtime.load(path)
    _close(module["predict"].raw(y)[0], expected)


def test_read_only_parameter_override(lenet_artifact):
    path, params, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    bias = params["fc3.bias"] + 1.0
    bias.flags.writeable = False
    expected = lenet_reference({**params, "fc3.bias": bias}, x)
    _close(module.run(x, params={"fc3.bias": bias})[0], expected)


def test_array_resized_in_place_between_calls_is_read_where_it_now_lies(lenet_artifact):
    path, params, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    a = x.copy()
    _close(module.run(a)[0], expected)
    old = a.ctypes.data
    # grow (realloc moves the data far away), then shrink back to the input's shape
    a.resize((64 * a.size,), refcheck=False)
    a.resize(x.shape, refcheck=False)
    assert a.ctypes.data != old, "the reallocation did not move the data; the test proves nothing"
    a[...] = 2 * x
    reference = lenet_reference(params, 2 * x)
    _close(module.run(a)[0], reference)
    _close(module.run(a)[0], reference)


def test_new_array_at_a_recycled_address_gives_its_own_result(lenet_artifact):
    path, params, x, expected = lenet_artifact
    module = aotnn_runtime.load(path)
    for scale in (1.0, 3.0, -1.0, 0.5):
        a = np.empty_like(x)  # often the address of the array deleted just before
        a[...] = scale * x
        reference = lenet_reference(params, scale * x)
        _close(module.run(a)[0], reference)
        del a


def test_list_that_does_not_fit_is_refused_clearly(module):
    with pytest.raises(InputError, match="'x'.*shape"):
        module.run([[1.0, 2.0]])
    with pytest.raises(InputError, match="'x'"):
        module.run([[1.0], [2.0, 3.0]])  # ragged
    with pytest.raises(InputError, match="'x'.*dtype"):
        module.run(np.zeros((2, 1, 32, 32), ">f8"))  # big-endian is converted, float64 is still refused


def test_complex_list_is_refused_clearly(module, lenet_artifact):
    x = lenet_artifact[2]
    with pytest.raises(InputError, match="'x'.*float32"):
        module.run((x + 1j).tolist())


def test_graph_cell_takes_every_kind_of_array(lenet_artifact, tmp_path):
    """aotnn's side: a loaded graph called with such arrays (as Tensors and as numpy arrays)."""
    import aotnn
    from aotnn import nn
    path, _, x, expected = lenet_artifact
    cell = nn.GraphCell(aotnn.load(path))
    for make in KINDS[:-1]:
        value = make(x, tmp_path)
        _close(cell(value).asnumpy(), expected)
        _close(cell(aotnn.Tensor(value)).asnumpy(), expected)


def test_parameter_resized_in_place_between_calls_is_read_where_it_now_lies(lenet_artifact):
    path, params, x, _ = lenet_artifact
    module = aotnn_runtime.load(path)
    bias = params["fc3.bias"].copy()
    _close(module.run(x, params={"fc3.bias": bias})[0], lenet_reference(params, x))
    old = bias.ctypes.data
    bias.resize((4096 * bias.size,), refcheck=False)
    bias.resize(params["fc3.bias"].shape, refcheck=False)
    assert bias.ctypes.data != old, "the reallocation did not move the data; the test proves nothing"
    bias[...] = params["fc3.bias"] + 1.0
    _close(module.run(x, params={"fc3.bias": bias})[0], lenet_reference({**params, "fc3.bias": bias}, x))


def test_compiled_cell_takes_every_kind_of_array(tmp_path):
    """aotnn's side: a Cell (compiled on its first call) given such arrays as Tensors; PyTorch reference."""
    import torch
    import aotnn
    from aotnn import nn
    net = nn.Dense(32, 3)
    x = np.random.default_rng(1).random((2, 32), dtype=np.float32)
    weight, bias = (p.asnumpy() for p in net.get_parameters())
    expected = torch.nn.functional.linear(torch.tensor(x), torch.tensor(weight), torch.tensor(bias)).numpy()
    for make in KINDS[:-1]:
        _close(net(aotnn.Tensor(make(x, tmp_path))).asnumpy(), expected)
