"""FTRL and ProximalAdagrad with l1/l2 > 0 against MindSpore 2.10: 5 steps of fixed gradients from the same
weights, every step's parameters to 1e-5.

Fixture: tools/ms_numeric_fixtures.py (``optimizer_fixture``) run under MindSpore 2.10.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from aotnn import Parameter, Tensor, nn

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "ms_ftrl_proximal_adagrad.npz"))
CONFIGS = json.loads(str(DATA["configs"]))
CLASSES = {"ftrl": nn.FTRL, "proximal": nn.ProximalAdagrad}


@pytest.mark.parametrize("key", sorted(CONFIGS))
def test_matches_mindspore_steps(key):
    params = [Parameter(Tensor(DATA["init_w"].copy()), name="w"), Parameter(Tensor(DATA["init_b"].copy()), name="b")]
    opt = CLASSES[key.split("_")[0]](params, **CONFIGS[key])
    for step in range(DATA["grads_w"].shape[0]):
        assert opt((Tensor(DATA["grads_w"][step]), Tensor(DATA["grads_b"][step])))
        for param, name in zip(params, "wb"):
            np.testing.assert_allclose(param.asnumpy(), DATA[f"{key}.{name}"][step], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{key}, step {step}, {name}")
    assert opt.global_step.asnumpy().tolist() == [DATA["grads_w"].shape[0]]
