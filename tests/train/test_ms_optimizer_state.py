"""Optimizer state in checkpoints against MindSpore 2.10's: what ``save_checkpoint(train_net)`` writes for a
TrainOneStepCell with Momentum or Adam after 2 steps (names, dtypes, shapes, values), and MindSpore's file
loaded into an aotnn training net continues as MindSpore's own 3rd step did.

Fixtures: tools/ms_numeric_fixtures.py (``optimizer_state_fixture``) run under MindSpore 2.10.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import aotnn as ms
from aotnn import Tensor, nn

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DATA = np.load(os.path.join(FIXTURES, "ms_optimizer_state.npz"))


def _train_net(opt_name):
    net = nn.Dense(6, 3, weight_init=Tensor(DATA["init.weight"]), bias_init=Tensor(DATA["init.bias"]))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()
    opt = nn.Momentum(params, 0.1, 0.9) if opt_name == "momentum" else nn.Adam(params, 0.01)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    train.set_train()
    return train


def _step(train):
    return float(train(Tensor(DATA["x"]), Tensor(DATA["y"])).asnumpy())


def _arrays(ckpt):
    return {name: value.asnumpy() for name, value in ckpt.items()}


@pytest.mark.parametrize("opt_name", ["momentum", "adam"])
def test_saved_state_matches_mindspore_checkpoint(opt_name, tmp_path):
    expected = _arrays(ms.load_checkpoint(os.path.join(FIXTURES, f"ms_{opt_name}_state.ckpt")))
    if opt_name == "momentum":
        assert set(expected) == {"weight", "bias", "global_step", "learning_rate", "momentum",
                                 "moments.weight", "moments.bias"}
    train = _train_net(opt_name)
    _step(train)
    _step(train)
    path = str(tmp_path / "state.ckpt")
    ms.save_checkpoint(train, path)
    got = _arrays(ms.load_checkpoint(path))
    assert list(got) == list(expected)  # same names in the same order
    for name, want in expected.items():
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    assert got["global_step"].tolist() == [2]


@pytest.mark.parametrize("opt_name", ["momentum", "adam"])
def test_mindspore_checkpoint_resumes_training(opt_name):
    train = _train_net(opt_name)
    ckpt = ms.load_checkpoint(os.path.join(FIXTURES, f"ms_{opt_name}_state.ckpt"))
    assert ms.load_param_into_net(train, ckpt) == ([], [])
    loss = _step(train)
    np.testing.assert_allclose(loss, DATA[f"{opt_name}.step3.loss"], rtol=1e-5)
    for _, param in train.parameters_and_names():
        np.testing.assert_allclose(param.asnumpy(), DATA[f"{opt_name}.step3.{param.name}"], rtol=1e-5, atol=1e-6,
                                   err_msg=param.name)
