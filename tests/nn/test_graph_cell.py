"""aotnn.load + nn.GraphCell: exported graphs run as Cells, alone and composed with other Cells."""
from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import aotnn
import aotnn_runtime
from aotnn import Tensor, nn, ops

_RNG = np.random.default_rng(7)
_W1, _B1 = _RNG.normal(size=(8, 4)).astype(np.float32), _RNG.normal(size=8).astype(np.float32)
_W2, _B2 = _RNG.normal(size=(3, 8)).astype(np.float32), _RNG.normal(size=3).astype(np.float32)
_X = _RNG.random((2, 4), dtype=np.float32)


def _mlp_reference(x, w1=_W1, b1=_B1, w2=_W2, b2=_B2):
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


@pytest.fixture(scope="module")
def mlp_graph(tmp_path_factory):
    """(the exported Dense net, its artifact path): Dense(4, 8) -> ReLU -> Dense(8, 3) with fixed weights."""
    net = nn.SequentialCell([nn.Dense(4, 8, weight_init=Tensor(_W1), bias_init=Tensor(_B1)), nn.ReLU(),
                             nn.Dense(8, 3, weight_init=Tensor(_W2), bias_init=Tensor(_B2))])
    path = aotnn.export(net, Tensor(_X), file_name=str(tmp_path_factory.mktemp("graph") / "mlp"))
    return net, path


def test_lenet_graph_cell_matches_reference_and_original(lenet_artifact):
    path, params, x, expected = lenet_artifact
    graph = aotnn.load(path)
    cell = nn.GraphCell(graph)
    out = cell(Tensor(x))
    assert isinstance(out, Tensor) and out.shape == (2, 10)
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-4, atol=1e-5)  # PyTorch reference
    original = aotnn.models.LeNet5()
    for param in original.get_parameters():
        param.set_data(params[param.name])
    np.testing.assert_allclose(out.asnumpy(), original(Tensor(x)).asnumpy(), rtol=1e-6, atol=1e-6)


def test_dense_graph_cell_matches_numpy_and_original(mlp_graph):
    net, path = mlp_graph
    cell = nn.GraphCell(aotnn.load(path[:-len(".aot")]))  # the name given to export works too
    out = cell(Tensor(_X)).asnumpy()
    np.testing.assert_allclose(out, _mlp_reference(_X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, net(Tensor(_X)).asnumpy(), rtol=1e-6, atol=1e-6)
    assert "input" in repr(cell) and list(cell.get_parameters()) == []


def test_graph_cell_composes_in_sequential_cell(mlp_graph):
    _, path = mlp_graph
    w = _RNG.normal(size=(2, 3)).astype(np.float32)
    b = _RNG.normal(size=2).astype(np.float32)
    seq = nn.SequentialCell([nn.GraphCell(aotnn.load(path)), nn.Dense(3, 2, weight_init=Tensor(w),
                                                                      bias_init=Tensor(b))])
    out = seq(Tensor(_X))
    np.testing.assert_allclose(out.asnumpy(), _mlp_reference(_X) @ w.T + b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(seq(Tensor(_X)).asnumpy(), out.asnumpy())  # second call, same result


def test_graph_cell_inside_custom_cell_with_ops(mlp_graph):
    _, path = mlp_graph
    w = _RNG.normal(size=(5, 3)).astype(np.float32)

    class Head(nn.Cell):
        def __init__(self, graph):
            super().__init__()
            self.body = nn.GraphCell(graph)
            self.fc = nn.Dense(3, 5, weight_init=Tensor(w), has_bias=False)

        def construct(self, x, scale):
            return ops.relu(self.fc(self.body(x)) * scale), self.body(x)

    out, inner = Head(aotnn.load(path))(Tensor(_X), Tensor(np.float32(0.5)))
    np.testing.assert_allclose(inner.asnumpy(), _mlp_reference(_X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.asnumpy(), np.maximum(_mlp_reference(_X) @ w.T * 0.5, 0), rtol=1e-5, atol=1e-5)


def test_params_init_replaces_weights_for_that_cell_only(mlp_graph):
    _, path = mlp_graph
    graph = aotnn.load(path)
    w2 = _RNG.normal(size=(3, 8)).astype(np.float32)
    b1 = _RNG.normal(size=8).astype(np.float32)
    custom = nn.GraphCell(graph, params_init={"2.weight": aotnn.Parameter(Tensor(w2), name="w"), "0.bias": Tensor(b1)})
    np.testing.assert_allclose(custom(Tensor(_X)).asnumpy(), _mlp_reference(_X, b1=b1, w2=w2), rtol=1e-5, atol=1e-5)
    plain = nn.GraphCell(graph)  # the loaded graph keeps its own weights
    np.testing.assert_allclose(plain(Tensor(_X)).asnumpy(), _mlp_reference(_X), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(graph.get_parameter("2.weight"), _W2)


def test_graph_cell_invalid_arguments(mlp_graph):
    _, path = mlp_graph
    graph = aotnn.load(path)
    with pytest.raises(TypeError, match="graph"):
        nn.GraphCell(path)
    with pytest.raises(ValueError, match="no parameter"):
        nn.GraphCell(graph, params_init={"missing.weight": Tensor(_W1)})
    with pytest.raises(ValueError, match="float32"):
        nn.GraphCell(graph, params_init={"0.weight": Tensor(_W1.T.copy())})
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(graph, params_init={"0.weight": _W1.tolist()})
    with pytest.raises(TypeError, match="params_init"):
        nn.GraphCell(graph, params_init=[("0.weight", _W1)])
    with pytest.raises(ValueError, match="obf_random_seed"):
        nn.GraphCell(graph, obf_random_seed=3)


def test_wrong_inputs_raise_before_running(mlp_graph):
    _, path = mlp_graph
    cell = nn.GraphCell(aotnn.load(path))
    with pytest.raises(ValueError, match="shape"):
        cell(Tensor(np.ones((3, 4), np.float32)))
    with pytest.raises(ValueError, match="dtype"):
        cell(Tensor(np.ones((2, 4), np.float64)))
    with pytest.raises(ValueError, match="1 input"):
        cell(Tensor(_X), Tensor(_X))
    with pytest.raises(TypeError, match="GraphCell"):  # a loaded graph cannot be differentiated
        aotnn.grad(lambda x: cell(x).sum())(Tensor(_X))


def test_load_missing_or_corrupt_file(mlp_graph, tmp_path):
    _, path = mlp_graph
    with pytest.raises(ValueError, match="does not exist"):
        aotnn.load(str(tmp_path / "nothing.aot"))
    with pytest.raises(TypeError, match="file_name"):
        aotnn.load(3)
    plain = tmp_path / "plain.aot"
    plain.write_bytes(b"not an artifact")
    with pytest.raises(aotnn_runtime.ArtifactError, match="not an aotnn artifact"):
        aotnn.load(str(plain))
    broken = tmp_path / "broken.aot"
    shutil.copytree(path, broken)
    library = broken / "kernels.so"
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0xFF
    library.write_bytes(bytes(data))
    with pytest.raises(aotnn_runtime.ArtifactError, match="SHA-256"):
        aotnn.load(str(broken))
    os.remove(broken / "manifest.json")
    with pytest.raises(aotnn_runtime.ArtifactError, match="manifest"):
        aotnn.load(str(broken))
