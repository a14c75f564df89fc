"""Lamb and LARS (layer-wise trust ratios) against numpy versions of MindSpore's update rules."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import nn
from .optim_reference import GRADS, INIT, Reference, check, close, f64, lamb_rule, make_params, run


@pytest.mark.parametrize("names,kwargs", [(["w", "b"], dict(learning_rate=0.1)),
                                          (["w", "ln.beta"], dict(learning_rate=0.05, beta1=0.8, beta2=0.99,
                                                                  eps=1e-4, weight_decay=0.1))])
def test_lamb_matches_formula(names, kwargs):
    params = make_params(names)
    opt = nn.Lamb(params, **kwargs)
    assert [p.name for p in opt.moments1] == [f"lamb_m.{n}" for n in names]
    assert [p.name for p in opt.moments2] == [f"lamb_v.{n}" for n in names]
    wd = kwargs.get("weight_decay", 0.0)
    wds = [0.0 if "beta" in n or "gamma" in n else wd for n in names]
    rule = lamb_rule(kwargs.get("beta1", 0.9), kwargs.get("beta2", 0.999), kwargs.get("eps", 1e-6), wds)
    ref = Reference(*rule, lr=kwargs["learning_rate"])
    check(run(opt, params), ref.run())
    close(opt.moments1[0], ref.state[0]["m"])
    assert opt.global_step.asnumpy().tolist() == [len(GRADS)]


def _lars_reference(lr, momentum, wd, scale, coefficient, epsilon, use_clip, lars_flags):
    params, moments, trajectory = f64(INIT), [np.zeros(s.shape) for s in INIT], []
    for step_grads in GRADS:
        for i, g in enumerate(f64(step_grads)):
            w = params[i]
            g = g * scale / scale  # the test feeds gradients times the loss scale
            if lars_flags[i]:
                wn, gn = np.linalg.norm(w), np.linalg.norm(g)
                coeff = coefficient * wn / (gn + wd * wn + epsilon)
                if use_clip:
                    coeff = np.clip(coeff / lr, 0, 1)
                g = coeff * (g + wd * w)
            moments[i] = moments[i] * momentum + g
            params[i] = w - lr * moments[i]
        trajectory.append([p.copy() for p in params])
    return trajectory


@pytest.mark.parametrize("use_clip", [False, True])
def test_lars_around_momentum(use_clip):
    params = make_params(["w", "fc.bias"])
    inner = nn.Momentum(params, learning_rate=0.1, momentum=0.9, weight_decay=0.01, loss_scale=2.0)
    opt = nn.LARS(inner, epsilon=1e-5, coefficient=0.02, use_clip=use_clip)
    assert opt.lars_flag == (True, False)  # 'bias' parameters keep their gradients
    assert not inner.exec_weight_decay and opt.global_step is inner.global_step
    grads = [[g * 2.0 for g in step] for step in GRADS]
    check(run(opt, params, grads), _lars_reference(0.1, 0.9, 0.01, 2.0, 0.02, 1e-5, use_clip, [True, False]))


def test_lamb_and_lars_errors():
    with pytest.raises(TypeError):
        nn.LARS(nn.Dense(2, 2))
    with pytest.raises(TypeError):
        nn.LARS(nn.Momentum(make_params(), 0.1, 0.9), epsilon=1)
    with pytest.raises(TypeError):
        nn.LARS(nn.Momentum(make_params(), 0.1, 0.9), use_clip=0)
    with pytest.raises(ValueError):
        nn.Lamb(make_params(), 0.1, eps=-1e-6)
    with pytest.raises(TypeError):
        nn.Lamb(make_params(), 0.1, beta2=1)
    with pytest.raises(ValueError):
        nn.Lamb(make_params(), -0.1)
