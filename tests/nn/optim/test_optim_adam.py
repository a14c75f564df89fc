"""Adam (plain, Nesterov, AMSGrad), AdamOffload, LazyAdam and AdamWeightDecay against numpy versions of
MindSpore's update rules."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import nn
from .optim_reference import (GRADS, Reference, adam_rule, adam_weight_decay_rule, check, close, make_params,
                              run)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(learning_rate=0.01, beta1=0.8, beta2=0.99, eps=1e-6, use_nesterov=True),
    dict(learning_rate=0.01, use_amsgrad=True, weight_decay=0.05, loss_scale=8.0),
])
def test_adam_matches_formula(kwargs):
    params = make_params()
    opt = nn.Adam(params, **kwargs)
    assert [p.name for p in opt.moment1] == ["moment1.w", "moment1.b"]
    assert [p.name for p in opt.moment2] == ["moment2.w", "moment2.b"]
    assert opt.beta1_power.name == "beta1_power" and opt.beta1_power.shape == ()
    assert float(opt.beta1_power.asnumpy()) == 1.0
    scale = kwargs.get("loss_scale", 1.0)
    grads = [[g * scale for g in step] for step in GRADS]
    traj = run(opt, params, grads)
    rule = adam_rule(kwargs.get("beta1", 0.9), kwargs.get("beta2", 0.999), kwargs.get("eps", 1e-8),
                     kwargs.get("use_nesterov", False), kwargs.get("use_amsgrad", False))
    ref = Reference(*rule, lr=kwargs.get("learning_rate", 1e-3), wd=kwargs.get("weight_decay", 0.0), scale=scale)
    check(traj, ref.run(grads))
    close(opt.moment1[0], ref.state[0]["m"])
    close(opt.moment2[1], ref.state[1]["v"])
    close(opt.beta2_power, kwargs.get("beta2", 0.999) ** len(GRADS))
    if kwargs.get("use_amsgrad"):
        assert [p.name for p in opt.vhat] == ["vhat.w", "vhat.b"]
        close(opt.vhat[0], ref.state[0]["vhat"])


def test_adam_float16():
    params = make_params(dtype=np.float16)
    opt = nn.Adam(params, learning_rate=0.01)
    traj = run(opt, params, dtype=np.float16)
    assert opt.moment1[0].dtype.name == "float16"
    check(traj, Reference(*adam_rule(), lr=0.01).run(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("cls", [nn.AdamOffload, nn.LazyAdam])
def test_offload_and_lazy_adam_follow_adam(cls):
    params = make_params()
    opt = cls(params, learning_rate=0.01, use_nesterov=cls is nn.LazyAdam, weight_decay=0.01)
    assert opt.beta1_power.shape == (1,)
    traj = run(opt, params)
    check(traj, Reference(*adam_rule(nesterov=cls is nn.LazyAdam), lr=0.01, wd=0.01).run())
    # both count their steps: MindSpore 2.10's constructs advance global_step on every call
    assert opt.global_step.asnumpy().tolist() == [len(GRADS)]


@pytest.mark.parametrize("names,wd", [(["w", "b"], 0.0), (["w", "ln.gamma"], 0.1)])
def test_adam_weight_decay_matches_formula(names, wd):
    params = make_params(names)
    opt = nn.AdamWeightDecay(params, learning_rate=0.01, beta1=0.85, weight_decay=wd)
    assert [p.name for p in opt.moments1] == [f"adam_m.{n}" for n in names]
    assert [p.name for p in opt.moments2] == [f"adam_v.{n}" for n in names]
    wds = [wd if "gamma" not in n and "beta" not in n else 0.0 for n in names]
    ref = Reference(*adam_weight_decay_rule(0.85, 0.999, 1e-6, wds), lr=0.01)
    check(run(opt, params), ref.run())
    close(opt.moments2[0], ref.state[0]["v"])


def test_adam_errors():
    with pytest.raises(ValueError):
        nn.Adam(make_params(), beta1=1.0)
    with pytest.raises(ValueError):
        nn.Adam(make_params(), beta2=0.0)
    with pytest.raises(ValueError):
        nn.Adam(make_params(), eps=0.0)
    with pytest.raises(TypeError):
        nn.Adam(make_params(), beta1=1)
    with pytest.raises(TypeError):
        nn.Adam(make_params(), use_nesterov=1)
    with pytest.raises(TypeError):
        nn.Adam(make_params(), use_amsgrad="yes")
    with pytest.raises(ValueError):
        nn.Adam(make_params(), use_lazy=True, use_offload=True)
    with pytest.raises(ValueError):
        nn.Adam(make_params(), use_amsgrad=True, use_lazy=True)
    with pytest.raises(ValueError):
        nn.AdamWeightDecay(make_params(), weight_decay=-0.1)
    with pytest.raises(TypeError):
        nn.AdamOffload(make_params(), eps=1)
    with pytest.raises(ValueError):
        nn.LazyAdam(make_params(), loss_scale=0.0)
    opt = nn.Adam(make_params())
    opt.target = "CPU"
    assert opt.target == "CPU"
    with pytest.raises(ValueError):
        opt.target = "TPU"
