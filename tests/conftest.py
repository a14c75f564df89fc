"""Shared fixtures: an exported LeNet5 artifact and its independent PyTorch reference."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F


def lenet_reference(params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """LeNet5 written with PyTorch's functional ops from MindSpore's parameter names."""
    p = {k: torch.tensor(v) for k, v in params.items()}
    h = F.max_pool2d(F.relu(F.conv2d(torch.tensor(x), p["conv1.weight"])), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, p["conv2.weight"])), 2).flatten(1)
    h = F.relu(F.linear(h, p["fc1.weight"], p["fc1.bias"]))
    h = F.relu(F.linear(h, p["fc2.weight"], p["fc2.bias"]))
    return F.linear(h, p["fc3.weight"], p["fc3.bias"]).numpy()


@pytest.fixture(scope="session")
def lenet_artifact(tmp_path_factory):
    """(artifact path, parameter arrays by name, input, PyTorch reference output)."""
    import aotnn
    aotnn.set_seed(3)
    net = aotnn.models.LeNet5()
    for param in net.get_parameters():  # give biases non-zero values too
        param.set_data(np.random.default_rng(len(param.name)).normal(0, 0.2, param.shape).astype(np.float32))
    x = np.random.default_rng(0).random((2, 1, 32, 32), dtype=np.float32)
    path = aotnn.export(net, aotnn.Tensor(x), file_name=str(tmp_path_factory.mktemp("art") / "lenet"))
    params = {p.name: p.asnumpy() for p in net.get_parameters()}
    return path, params, x, lenet_reference(params, x)


@pytest.fixture(scope="module")
def ms():
    """``mindspore`` as a script imports it: aotnn through the aliases, installed for the test module."""
    from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases
    install_mindspore_aliases()
    try:
        import mindspore
        yield mindspore
    finally:
        uninstall_mindspore_aliases()
