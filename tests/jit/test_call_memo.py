"""A compiled Cell's repeated call skips what did not change (aotnn/jit/cell_call.py _CallMemo, the
runtime's resolved-parameter cache) and still sees every change: values, layouts, sub-cells, modes."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn import nn
from aotnn.jit import cell_call


def _dense_ref(net, x):
    return x @ net.fc.weight.asnumpy().T + net.fc.bias.asnumpy()


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(6, 4)
        self.body = nn.SequentialCell([nn.ReLU()])

    def construct(self, x):
        return self.body(self.fc(x))


@pytest.fixture
def counted(monkeypatch):
    calls = {"signature": 0, "resolve": 0}
    signature, resolve = cell_call._signature, aotnn_runtime.EntryPoint._resolve_params

    def count_signature(*args):
        calls["signature"] += 1
        return signature(*args)

    def count_resolve(self, params):
        calls["resolve"] += 1
        return resolve(self, params)

    monkeypatch.setattr(cell_call, "_signature", count_signature)
    monkeypatch.setattr(aotnn_runtime.EntryPoint, "_resolve_params", count_resolve)
    return calls


def test_a_repeated_call_neither_looks_up_nor_checks_parameters_again(counted):
    net = _Net()
    x = aotnn.Tensor(np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32))
    net(x)
    before = dict(counted)
    for _ in range(3):
        out = net(x)
    assert counted == before  # no signature walk, no parameter checks
    np.testing.assert_allclose(out.asnumpy(), np.maximum(_dense_ref(net, x.asnumpy()), 0), rtol=1e-5, atol=1e-5)


def test_new_parameter_values_reach_the_kernels(counted):
    net = _Net()
    x = aotnn.Tensor(np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32))
    net(x)
    net.fc.bias.set_data(aotnn.Tensor(np.full(4, 5.0, np.float32)))  # in place, same layout
    np.testing.assert_allclose(net(x).asnumpy(), np.maximum(_dense_ref(net, x.asnumpy()), 0), rtol=1e-5, atol=1e-5)
    assert counted["signature"] == 1  # same layout: the memo holds, only the values moved


def test_structure_and_mode_changes_are_seen():
    net = _Net()
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    net(aotnn.Tensor(x))
    net.body[0] = nn.Tanh()  # a container replaces its cell in its own table
    np.testing.assert_allclose(net(aotnn.Tensor(x)).asnumpy(), np.tanh(_dense_ref(net, x)), rtol=1e-5, atol=1e-5)
    net.body.append(nn.Sigmoid())
    expected = 1 / (1 + np.exp(-np.tanh(_dense_ref(net, x))))
    np.testing.assert_allclose(net(aotnn.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    net.fc.weight = aotnn.Parameter(aotnn.Tensor(np.ones((4, 6), np.float32)), name="fc.weight")
    expected = 1 / (1 + np.exp(-np.tanh(x.sum(1, keepdims=True) + net.fc.bias.asnumpy())))
    np.testing.assert_allclose(net(aotnn.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_dropout_follows_set_train_between_calls():
    class Drop(nn.Cell):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(p=0.5)

        def construct(self, x):
            return self.drop(x)

    net = Drop()
    x = aotnn.Tensor(np.ones((64, 64), np.float32))
    net.set_train(False)
    np.testing.assert_array_equal(net(x).asnumpy(), 1.0)
    net.set_train(True)
    assert (net(x).asnumpy() == 0).any()  # training mode drops; the inference memo is not reused
    net.set_train(False)
    np.testing.assert_array_equal(net(x).asnumpy(), 1.0)


def test_returned_tensors_do_not_share_memory_with_later_calls():
    net = _Net()
    a = np.random.default_rng(3).standard_normal((3, 6)).astype(np.float32)
    first = net(aotnn.Tensor(a))
    kept = first.asnumpy().copy()
    net(aotnn.Tensor(a + 10))
    np.testing.assert_array_equal(first.asnumpy(), kept)


def test_the_runtime_checks_parameters_again_when_the_arrays_change(lenet_artifact):
    path, params, x, expected = lenet_artifact
    entry = aotnn_runtime.load(path)["predict"]
    first = entry.raw(x, params=params, params_key="k")[0]
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-4)
    shifted = {**params, "fc3.bias": params["fc3.bias"] + 1}  # a new array under the same key
    np.testing.assert_allclose(entry.raw(x, params=shifted, params_key="k")[0], expected + 1, rtol=1e-4, atol=1e-4)
    with pytest.raises(aotnn_runtime.InputError, match="fc3.bias"):
        entry.raw(x, params={**params, "fc3.bias": np.zeros(3, np.float32)}, params_key="k")


def test_a_called_cell_deep_copies_and_the_copy_runs_on_its_own_weights():
    import copy
    net = _Net()
    x = np.random.default_rng(4).standard_normal((3, 6)).astype(np.float32)
    net(aotnn.Tensor(x))  # leaves the call memo (it holds the compiled module) on the cell
    twin = copy.deepcopy(net)
    twin.fc.bias.set_data(aotnn.Tensor(np.full(4, 5.0, np.float32)))
    np.testing.assert_allclose(twin(aotnn.Tensor(x)).asnumpy(), np.maximum(_dense_ref(twin, x), 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(net(aotnn.Tensor(x)).asnumpy(), np.maximum(_dense_ref(net, x), 0), rtol=1e-5, atol=1e-5)


def test_a_parameter_changed_through_another_cell_is_seen_without_a_signature_walk(counted):
    """Two cells sharing a Parameter: a change made by one (an in-place set_data, then a new array
    of the same layout) reaches the other's next call, whose memo skips its per-parameter checks
    only while no Parameter changed."""
    net = _Net()
    other = nn.SequentialCell([net.fc])
    x = aotnn.Tensor(np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32))
    net(x)
    other(x)
    net.fc.weight.set_data(aotnn.Tensor(np.ones((4, 6), np.float32)))
    np.testing.assert_allclose(other(x).asnumpy(), _dense_ref(net, x.asnumpy()), rtol=1e-5, atol=1e-5)
    net.fc.bias._data = aotnn_runtime.as_aligned(np.full(4, -2.0, np.float32))  # a new array object
    np.testing.assert_allclose(net(x).asnumpy(), np.maximum(_dense_ref(net, x.asnumpy()), 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(other(x).asnumpy(), _dense_ref(net, x.asnumpy()), rtol=1e-5, atol=1e-5)
    assert counted["signature"] == 2  # one per cell: layouts never changed


def _aligned(params):
    """Copies the kernels read where they lie (a staged copy would keep the runtime from caching)."""
    copies = {}
    for name, value in params.items():
        copies[name] = aotnn_runtime.aligned_empty(value.shape, value.dtype)
        copies[name][...] = value
    return copies


def test_the_runtime_sees_an_array_replaced_in_the_same_mapping(lenet_artifact):
    """The same mapping object and key skip the layout check; a value replaced in that mapping
    is still seen (used, or refused when its shape is wrong)."""
    path, params, x, expected = lenet_artifact
    entry = aotnn_runtime.load(path)["predict"]
    given = _aligned(params)
    np.testing.assert_allclose(entry.raw(x, params=given, params_key="k")[0], expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(entry.raw(x, params=given, params_key="k")[0], expected, rtol=1e-4, atol=1e-4)
    assert entry._resolved_cache is not None and entry._resolved_cache[6] is given  # the fast path's case
    given["fc3.bias"] = _aligned({"b": params["fc3.bias"] + 1})["b"]
    np.testing.assert_allclose(entry.raw(x, params=given, params_key="k")[0], expected + 1, rtol=1e-4, atol=1e-4)
    given["fc3.bias"] = np.zeros(3, np.float32)
    with pytest.raises(aotnn_runtime.InputError, match="fc3.bias"):
        entry.raw(x, params=given, params_key="k")


def test_an_array_the_runtime_holds_cannot_be_resized_in_place(lenet_artifact):
    """Why the layouts need no second look: numpy refuses to move the memory of an array the
    runtime's cache references (only ``refcheck=False``, documented as unsafe, would)."""
    path, params, x, _ = lenet_artifact
    entry = aotnn_runtime.load(path)["predict"]
    given = _aligned(params)
    entry.raw(x, params=given, params_key="k")
    with pytest.raises(ValueError, match="resize"):
        given["fc3.bias"].resize((4096,))


def test_a_hook_registered_after_repeated_calls_runs():
    net = _Net()
    x = aotnn.Tensor(np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32))
    net(x)
    net(x)
    seen = []
    net.register_forward_hook(lambda cell, inputs, output: seen.append(output.asnumpy().copy()))
    out = net(x)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], out.asnumpy())


def test_a_cell_called_alone_is_still_traced_inside_its_parent():
    class Parent(nn.Cell):
        def __init__(self, child):
            super().__init__()
            self.child = child

        def construct(self, x):
            return self.child(x) * 2.0

    child = _Net()
    x = aotnn.Tensor(np.random.default_rng(6).standard_normal((3, 6)).astype(np.float32))
    child(x)
    child(x)  # memoized
    expected = 2.0 * np.maximum(_dense_ref(child, x.asnumpy()), 0)
    np.testing.assert_allclose(Parent(child)(x).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_an_output_feeds_the_next_call():
    """Outputs are the runtime's arrays as they are (not copied to 64-byte alignment): as inputs
    of the next call the runtime stages them."""
    net = nn.Dense(4, 4)
    x = np.random.default_rng(7).standard_normal((2, 4)).astype(np.float32)
    weight, bias = net.weight.asnumpy(), net.bias.asnumpy()
    y = x
    out = aotnn.Tensor(x)
    for _ in range(3):
        out = net(out)
        y = y @ weight.T + bias
    np.testing.assert_allclose(out.asnumpy(), y, rtol=1e-4, atol=1e-4)
