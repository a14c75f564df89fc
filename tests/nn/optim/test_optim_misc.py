"""Rprop, ASGD and AdaFactor against numpy versions of MindSpore's update rules."""
from __future__ import annotations

import pytest

from aotnn import nn
from .optim_reference import (GRADS, Reference, adafactor_rule, asgd_rule, check, close, make_params, rprop_rule,
                              run)


@pytest.mark.parametrize("kwargs", [dict(), dict(learning_rate=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2),
                                                 weight_decay=0.1)])
def test_rprop_matches_formula(kwargs):
    params = make_params()
    opt = nn.Rprop(params, **kwargs)
    assert [p.name for p in opt.prev] == ["prev.w", "prev.b"]
    assert [p.name for p in opt.step_size] == ["step_size.w", "step_size.b"]
    etas, sizes = kwargs.get("etas", (0.5, 1.2)), kwargs.get("step_sizes", (1e-6, 50.0))
    # repeat gradients with flipped signs so that all three branches (grow, shrink, keep) occur
    grads = GRADS[:2] + [[-g for g in GRADS[1]]] + GRADS[3:]
    ref = Reference(*rprop_rule(etas[0], etas[1], *sizes), lr=kwargs.get("learning_rate", 0.1),
                    wd=kwargs.get("weight_decay", 0.0))
    check(run(opt, params, grads), ref.run(grads))
    close(opt.step_size[0], ref.state[0]["step"])
    close(opt.prev[1], ref.state[1]["prev"])


@pytest.mark.parametrize("kwargs", [dict(), dict(learning_rate=0.05, lambd=0.01, alpha=0.5, t0=2.0,
                                                 weight_decay=0.1)])
def test_asgd_matches_formula(kwargs):
    params = make_params()
    opt = nn.ASGD(params, **kwargs)
    assert [p.name for p in opt.mu] == ["mu_w", "mu_b"] and [p.name for p in opt.eta] == ["eta_w", "eta_b"]
    assert [p.name for p in opt.ax] == ["ax_.w", "ax_.b"]
    rule = asgd_rule(kwargs.get("lambd", 1e-4), kwargs.get("alpha", 0.75), kwargs.get("t0", 1e6))
    ref = Reference(*rule, lr=kwargs.get("learning_rate", 0.1), wd=kwargs.get("weight_decay", 0.0))
    check(run(opt, params), ref.run())
    close(opt.ax[0], ref.state[0]["ax"])
    close(opt.eta[1], ref.state[1]["eta"])
    close(opt.mu[0], ref.state[0]["mu"])


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(beta1=0.9, weight_decay=0.1, warmup_init=True, decay_rate=0.7, clip_threshold=0.5),
    dict(learning_rate=0.05, relative_step=False, scale_parameter=False, beta1=0.5),
])
def test_adafactor_matches_formula(kwargs):
    params = make_params()
    opt = nn.AdaFactor(params, **kwargs)
    assert opt.exp_avg_sq_row[0].name == "exp_avg_sq_row_w" and opt.exp_avg_sq_row[0].shape == (2,)
    assert opt.exp_avg_sq_col[0].name == "exp_avg_sq_col_w" and opt.exp_avg_sq_col[0].shape == (3,)
    assert opt.exp_avg_sq[1].name == "exp_avg_sq_b" and opt.exp_avg_sq[1].shape == (3,)
    if kwargs.get("beta1"):
        assert [p.name for p in opt.exp_avg] == ["exp_avg.w", "exp_avg.b"]
    rule = adafactor_rule(clip=kwargs.get("clip_threshold", 1.0), decay_rate=kwargs.get("decay_rate", 0.8),
                          beta1=kwargs.get("beta1", 0.0), wd=kwargs.get("weight_decay", 0.0),
                          scale_parameter=kwargs.get("scale_parameter", True),
                          relative_step=kwargs.get("relative_step", True),
                          warmup_init=kwargs.get("warmup_init", False))
    ref = Reference(*rule, lr=kwargs.get("learning_rate", 0.0))
    check(run(opt, params), ref.run())
    close(opt.exp_avg_sq_row[0], ref.state[0]["row"])
    close(opt.exp_avg_sq[1], ref.state[1]["v"])
    assert opt.step.asnumpy().tolist() == [float(len(GRADS))]


def test_misc_errors():
    with pytest.raises(TypeError):
        nn.Rprop(make_params(), etas=[0.5, 1.2])
    with pytest.raises(ValueError):
        nn.Rprop(make_params(), etas=(0.5, 1.2, 2.0))
    with pytest.raises(ValueError):
        nn.Rprop(make_params(), etas=(0.5, 1.0))
    with pytest.raises(ValueError):
        nn.Rprop(make_params(), etas=(1.5, 2.0))
    with pytest.raises(ValueError):
        nn.Rprop(make_params(), step_sizes=(1.0, 0.1))
    with pytest.raises(TypeError):
        nn.ASGD(make_params(), lambd=1)
    with pytest.raises(TypeError):
        nn.ASGD(make_params(), t0=100)
    with pytest.raises(ValueError):
        nn.AdaFactor(make_params(), learning_rate=0.1)
    with pytest.raises(ValueError):
        nn.AdaFactor(make_params(), relative_step=False)
    with pytest.raises(ValueError):
        nn.AdaFactor(make_params(), learning_rate=0.1, relative_step=False, warmup_init=True)
    with pytest.raises(ValueError):
        nn.AdaFactor(make_params(), eps=(1e-30,))
    with pytest.raises(ValueError):
        nn.AdaFactor(make_params(), decay_rate=1.5)
    with pytest.raises(TypeError):
        nn.AdaFactor(make_params(), scale_parameter=1)
