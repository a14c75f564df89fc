"""Momentum and SGD: trajectories and state against numpy versions of MindSpore's update rules."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import nn
from .optim_reference import GRADS, Reference, check, close, make_params, momentum_rule, run, sgd_rule


@pytest.mark.parametrize("nesterov,wd,scale", [(False, 0.0, 1.0), (True, 0.01, 4.0)])
def test_momentum_matches_formula(nesterov, wd, scale):
    params = make_params()
    opt = nn.Momentum(params, learning_rate=0.1, momentum=0.9, weight_decay=wd, loss_scale=scale,
                      use_nesterov=nesterov)
    assert [p.name for p in opt.moments] == ["moments.w", "moments.b"]
    assert opt.momentum.name == "momentum" and opt.momentum.shape == ()
    grads = [[g * scale for g in step] for step in GRADS]
    traj = run(opt, params, grads)
    ref = Reference(*momentum_rule(0.9, nesterov), lr=0.1, wd=wd, scale=scale)
    check(traj, ref.run(grads))
    for moment, state in zip(opt.moments, ref.state):
        close(moment, state["v"])
    # MindSpore 2.10's Momentum advances global_step on every call, whatever the learning rate
    assert opt.global_step.asnumpy().tolist() == [len(GRADS)]


def test_momentum_float16():
    params = make_params(dtype=np.float16)
    opt = nn.Momentum(params, 0.1, 0.9)
    traj = run(opt, params, dtype=np.float16)
    assert traj[-1][0].dtype == np.float16 and opt.moments[0].dtype.name == "float16"
    check(traj, Reference(*momentum_rule(0.9), lr=0.1).run(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("kwargs", [
    dict(learning_rate=0.1),
    dict(learning_rate=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
    dict(learning_rate=0.05, momentum=0.8, nesterov=True, weight_decay=0.02, loss_scale=2.0),
])
def test_sgd_matches_formula(kwargs):
    params = make_params()
    opt = nn.SGD(params, **kwargs)
    assert [p.name for p in opt.accum] == ["accum.w", "accum.b"]
    assert [p.name for p in opt.stat] == ["stat.w", "stat.b"]
    np.testing.assert_array_equal(opt.stat[0].asnumpy(), np.ones((2, 3)))
    scale = kwargs.get("loss_scale", 1.0)
    grads = [[g * scale for g in step] for step in GRADS]
    traj = run(opt, params, grads)
    rule = sgd_rule(kwargs.get("momentum", 0.0), kwargs.get("dampening", 0.0), kwargs.get("weight_decay", 0.0),
                    kwargs.get("nesterov", False))
    check(traj, Reference(*rule, lr=kwargs["learning_rate"], scale=scale).run(grads))
    if kwargs.get("momentum", 0.0) > 0:
        np.testing.assert_array_equal(opt.stat[1].asnumpy(), np.zeros(3))


def test_momentum_and_sgd_errors():
    with pytest.raises(ValueError):
        nn.Momentum(make_params(), 0.1, -0.1)
    with pytest.raises(TypeError):
        nn.Momentum(make_params(), 0.1, 1)
    with pytest.raises(TypeError):
        nn.Momentum(make_params(), 0.1, 0.9, use_nesterov=1)
    with pytest.raises(ValueError):
        nn.SGD(make_params(), momentum=-1.0)
    with pytest.raises(ValueError):
        nn.SGD(make_params(), dampening=-0.5)
    with pytest.raises(ValueError):
        nn.SGD(make_params(), nesterov=True)
    with pytest.raises(TypeError):
        nn.SGD(make_params(), momentum="0.9")
    with pytest.raises(TypeError):
        nn.SGD(make_params(), weight_decay=nn.Dense(2, 2))
