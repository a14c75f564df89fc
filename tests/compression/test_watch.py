"""WatchedNetwork: what the watched cells see, from one compiled graph, against what forward hooks see
(each hooked cell run on its own) and against numpy's min/max of the same tensors; PTQ's calibrated
ranges against numpy's min/max of the activations forward hooks record (the former hooked path)."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.compression.quant import PostTrainingQuantization
from aotnn.compression.quant.watch import WatchedNetwork
from aotnn.jit import compiled

RNG = np.random.default_rng(11)
BATCHES = [RNG.standard_normal((3, 2, 6, 6)).astype(np.float32) for _ in range(3)]


class Twice(nn.Cell):
    """conv -> BatchNorm -> ReLU -> conv -> (+ the first ReLU's output) -> the same ReLU -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(4, 4, 1, has_bias=True)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4 * 6 * 6, 3)

    def construct(self, x):
        a = self.relu(self.bn(self.conv1(x)))
        return self.fc(self.flatten(self.relu(a + self.conv2(a))))


@pytest.fixture(scope="module")
def net():
    aotnn.set_seed(5)
    net = Twice()
    rng = np.random.default_rng(6)
    for param in net.get_parameters():
        if param.name.endswith("moving_variance"):
            param.set_data(Tensor(rng.uniform(0.5, 1.5, param.shape).astype(np.float32)))
        elif param.name.endswith(("moving_mean", "bias", "beta")):
            param.set_data(Tensor(rng.normal(0, 0.3, param.shape).astype(np.float32)))
    net.set_train(False)
    return net


def _watched(net):
    return [(name, cell) for name, cell in net.cells_and_names() if name in ("conv1", "bn", "relu", "conv2", "fc")]


def _hooked(net, x):
    """(name, first input, output) of each watched call, recorded by forward hooks (cells run one by one)."""
    calls, handles = [], []
    for name, cell in _watched(net):
        def hook(cell_, args, output, name=name):
            calls.append((name, args[0].asnumpy(), output.asnumpy()))
        handles.append(cell.register_forward_hook(hook))
    try:
        output = net(Tensor(x)).asnumpy()
    finally:
        for handle in handles:
            handle.remove()
    return output, calls


def test_values_match_forward_hooks_and_compile_once(net):
    watched = WatchedNetwork(net, _watched(net))
    captures = 0
    for x in BATCHES:
        before = compiled.STATS["captures"]
        output, calls = watched(Tensor(x))
        captures += compiled.STATS["captures"] - before
        reference_output, reference = _hooked(net, x)
        assert [c.name for c in calls] == [name for name, _, _ in reference] == \
            ["conv1", "bn", "relu", "conv2", "relu", "fc"]
        for call, (name, x_ref, y_ref) in zip(calls, reference):
            np.testing.assert_allclose(call.x, x_ref, rtol=1e-5, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(call.y, y_ref, rtol=1e-5, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(output.asnumpy(), reference_output, rtol=1e-5, atol=1e-5)
        # the second ReLU call's input is an addition's result, not conv2's output
        assert [c.follows for c in calls] == [False, True, True, True, False, False]
    assert captures == 1  # one graph for the three batches of one layout
    assert "construct" not in net.relu.__dict__  # the cells are left as they were


def test_minmax_mode_is_numpy_min_max_of_the_values(net):
    """The graph reducing in place is another graph than the one returning the tensors (fused otherwise):
    their activations may differ in the last float32 bit."""
    values = WatchedNetwork(net, _watched(net))
    extremes = WatchedNetwork(net, _watched(net), inputs_of=["conv2"], outputs_of=["relu"], mode="minmax")
    _, full = values(BATCHES[0])
    _, reduced = extremes(BATCHES[0])
    for whole, pair in zip(full, reduced):
        assert whole.name == pair.name
        x_wanted, y_wanted = pair.name == "conv2", pair.name == "relu"
        assert (pair.x is not None) == x_wanted and (pair.y is not None) == y_wanted
        if x_wanted:
            np.testing.assert_allclose(pair.x, [whole.x.min(), whole.x.max()], rtol=1e-6, atol=1e-7)
        if y_wanted:
            np.testing.assert_allclose(pair.y, [whole.y.min(), whole.y.max()], rtol=1e-6, atol=1e-7)


def test_calibrated_ranges_are_the_hooked_activations_min_max(net):
    """The ranges PTQ puts in the network are numpy's min/max (widened to hold 0) of the activations each
    call site produced over all batches, as forward hooks record them."""
    fake_quant_net = PostTrainingQuantization().apply(net, BATCHES)
    seen: dict[str, list[np.ndarray]] = {"conv1:in": [], "relu#0": [], "relu#1": []}
    for x in BATCHES:
        relu_calls = 0
        for name, x_in, y in _hooked(net, x)[1]:
            if name == "relu":
                seen[f"relu#{relu_calls}"].append(y)
                relu_calls += 1
            elif f"{name}:in" in seen:
                seen[f"{name}:in"].append(x_in)
    cells = {"conv1:in": fake_quant_net.conv1.fake_quant_input, "relu#0": fake_quant_net.relu.site0.fake_quant_act,
             "relu#1": fake_quant_net.relu.site1.fake_quant_act}
    for key, cell in cells.items():
        values = np.concatenate([v.ravel() for v in seen[key]])
        expected = [min(float(values.min()), 0.0), max(float(values.max()), 0.0)]
        got = [float(cell.minq.asnumpy()[0]), float(cell.maxq.asnumpy()[0])]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=key)


def test_errors_name_the_argument(net):
    with pytest.raises(TypeError, match="network"):
        WatchedNetwork(object(), [])
    with pytest.raises(TypeError, match="watched"):
        WatchedNetwork(net, [("relu", object())])
    with pytest.raises(ValueError, match="mode"):
        WatchedNetwork(net, _watched(net), mode="mean")


class Pools(nn.Cell):
    """conv -> ReLU -> average pool -> conv -> ReLU -> max pool -> flatten -> dense."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(2, 4, 3, pad_mode="same")
        self.relu1 = nn.ReLU()
        self.avg = nn.AvgPool2d(2, 2)
        self.conv2 = nn.Conv2d(4, 4, 3, pad_mode="same")
        self.relu2 = nn.ReLU()
        self.max = nn.MaxPool2d(3, 3)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(4, 3)

    def construct(self, x):
        x = self.avg(self.relu1(self.conv1(x)))
        return self.fc(self.flatten(self.max(self.relu2(self.conv2(x)))))


def test_input_fake_quant_only_where_the_input_leaves_the_activation_grid():
    """An average of ReLU outputs lies off the ReLU's grid: the next convolution quantizes its input on a
    grid of its own; a max-pooled and flattened one stays on it: the dense layer takes it as it is."""
    aotnn.set_seed(8)
    net = Pools()
    net.set_train(False)
    fake_quant_net = PostTrainingQuantization().apply(net, BATCHES[:2])
    assert type(fake_quant_net.conv1).__name__ == "InputQuant"  # the network's input
    assert type(fake_quant_net.conv2).__name__ == "InputQuant"
    assert type(fake_quant_net.fc).__name__ == "DenseQuant"
