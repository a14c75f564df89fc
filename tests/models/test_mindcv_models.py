"""mindcv 0.3.0 models run unmodified on aotnn (through the mindspore aliases) and match MindSpore 2.10:
same parameter names, same logits for the same weights (fixtures by tools/mindcv_fixtures.py)."""
import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("mindcv") is None:  # importing it needs the aliases: only look it up here
    pytest.skip("mindcv is not installed", allow_module_level=True)

from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases  # noqa: E402

from . import mindcv_weights  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mindcv")
MODELS = sorted(f[:-4] for f in os.listdir(FIXTURES) if f.endswith(".npz"))


@pytest.fixture(scope="module")
def mindcv():
    install_mindspore_aliases()
    try:
        import mindcv as module
        yield module
    finally:
        uninstall_mindspore_aliases()


@pytest.mark.parametrize("name", MODELS)
def test_model_matches_mindspore(mindcv, name):
    fixture = np.load(os.path.join(FIXTURES, f"{name}.npz"))
    net = mindcv.create_model(name, pretrained=False)
    net.set_train(False)
    pairs = mindcv_weights.set_weights(net)
    assert pairs == fixture["names"].tolist()   # keys and MindSpore's Parameter.name, CellList quirks included
    from aotnn import Tensor
    logits = net(Tensor(mindcv_weights.model_input())).asnumpy()
    np.testing.assert_allclose(logits, fixture["logits"], atol=1e-4, rtol=1e-3)
