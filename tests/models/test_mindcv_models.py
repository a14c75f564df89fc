"""mindcv 0.3.0 models run unmodified on aotnn (through the mindspore aliases) and match MindSpore 2.10:
same parameter names, same logits for the same weights (fixtures by tools/mindcv_fixtures.py).

Every model of the issue runs at 224x224 (fixtures ``<model>.npz``); a fixture ``<model>@<size>.npz`` would
run at that size instead (``tools/mindcv_fixtures.py --size``), which none needs: the whole file took about
5.5 minutes with an empty kernel cache on 2 shared cores, almost all of it compilation (densenet121 60 s,
efficientnet_b0 and mixnet_s 35 s each): a model whose kernels are cached runs in 0.3-1.5 s, so a smaller
input would barely shorten it. The checkpoint test runs
mindcv's shufflenet_v2_x0_5 (10 classes) at 64x64 from a .ckpt that MindSpore 2.10 wrote.
"""
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


@pytest.mark.parametrize("stem", MODELS)
def test_model_matches_mindspore(mindcv, stem):
    fixture = np.load(os.path.join(FIXTURES, f"{stem}.npz"))
    name, size = mindcv_weights.parse_fixture_name(stem)
    net = mindcv.create_model(name, pretrained=False)
    net.set_train(False)
    pairs = mindcv_weights.set_weights(net)
    assert pairs == fixture["names"].tolist()   # keys and MindSpore's Parameter.name, CellList quirks included
    from aotnn import Tensor
    logits = net(Tensor(mindcv_weights.model_input(size))).asnumpy()
    np.testing.assert_allclose(logits, fixture["logits"], atol=1e-4, rtol=1e-3)


CKPT_DIR = os.path.join(FIXTURES, "ckpt")
CHECKPOINTS = sorted(f[:-5] for f in os.listdir(CKPT_DIR) if f.endswith(".ckpt"))


@pytest.mark.parametrize("stem", CHECKPOINTS)
def test_mindspore_checkpoint_loads_and_matches(mindcv, stem):
    """A .ckpt written by MindSpore 2.10's save_checkpoint (10-class model, weights set by name) loads into a
    fresh mindcv network with load_checkpoint + load_param_into_net: every value arrives, the logits match."""
    import mindspore
    name, size = mindcv_weights.parse_fixture_name(stem)
    net = mindcv.create_model(name, pretrained=False, num_classes=10)
    not_loaded = mindspore.load_param_into_net(net, mindspore.load_checkpoint(os.path.join(CKPT_DIR, f"{stem}.ckpt")))
    assert not any(not_loaded), not_loaded
    for key, param in net.parameters_and_names():
        np.testing.assert_array_equal(param.asnumpy(), mindcv_weights.value_for(key, param.shape), err_msg=key)
    net.set_train(False)
    logits = net(mindspore.Tensor(mindcv_weights.model_input(size))).asnumpy()
    np.testing.assert_allclose(logits, np.load(os.path.join(CKPT_DIR, f"{stem}.npz"))["logits"], atol=1e-4, rtol=1e-3)


def test_checkpoint_round_trip_restores_by_name_weights(mindcv, tmp_path):
    """resnet18 with weights set by name, saved by save_checkpoint and loaded into a fresh network, holds the
    same values under the same names (the path a user's .ckpt of a full-size model takes)."""
    import mindspore
    net = mindcv.create_model("resnet18", pretrained=False)
    pairs = mindcv_weights.set_weights(net)
    path = str(tmp_path / "resnet18.ckpt")
    mindspore.save_checkpoint(net, path)
    fresh = mindcv.create_model("resnet18", pretrained=False)
    not_loaded = mindspore.load_param_into_net(fresh, mindspore.load_checkpoint(path))
    assert not any(not_loaded), not_loaded
    assert [[k, p.name] for k, p in fresh.parameters_and_names()] == pairs
    for key, param in fresh.parameters_and_names():
        np.testing.assert_array_equal(param.asnumpy(), mindcv_weights.value_for(key, param.shape), err_msg=key)
