"""Adagrad, RMSProp (plain and centered), ProximalAdagrad and FTRL against numpy versions of MindSpore's
update rules; their accumulators' initial values."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import nn
from .optim_reference import (GRADS, Reference, adagrad_rule, check, close, ftrl_rule, make_params,
                              proximal_adagrad_rule, rmsprop_rule, run)


@pytest.mark.parametrize("kwargs", [dict(), dict(accum=0.5, learning_rate=0.1, update_slots=False, weight_decay=0.1)])
def test_adagrad_matches_formula(kwargs):
    params = make_params()
    opt = nn.Adagrad(params, **kwargs)
    assert [p.name for p in opt.accum] == ["accum.w", "accum.b"]
    np.testing.assert_allclose(opt.accum[0].asnumpy(), np.full((2, 3), kwargs.get("accum", 0.1)), rtol=1e-7)
    ref = Reference(*adagrad_rule(kwargs.get("accum", 0.1), kwargs.get("update_slots", True)),
                    lr=kwargs.get("learning_rate", 0.001), wd=kwargs.get("weight_decay", 0.0))
    check(run(opt, params), ref.run())
    close(opt.accum[1], ref.state[1]["h"])


@pytest.mark.parametrize("kwargs", [dict(learning_rate=0.01),
                                    dict(learning_rate=0.01, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True,
                                         loss_scale=2.0)])
def test_rmsprop_matches_formula(kwargs):
    params = make_params()
    opt = nn.RMSProp(params, **kwargs)
    assert [p.name for p in opt.ms] == ["mean_square.w", "mean_square.b"]
    assert [p.name for p in opt.moment] == ["moment.w", "moment.b"]
    np.testing.assert_array_equal(opt.ms[0].asnumpy(), np.ones((2, 3)))  # mean square starts at ones
    if kwargs.get("centered"):
        assert [p.name for p in opt.mg] == ["mean_grad.w", "mean_grad.b"]
    scale = kwargs.get("loss_scale", 1.0)
    grads = [[g * scale for g in step] for step in GRADS]
    rule = rmsprop_rule(kwargs.get("decay", 0.9), kwargs.get("momentum", 0.0), kwargs.get("epsilon", 1e-10),
                        kwargs.get("centered", False))
    ref = Reference(*rule, lr=0.01, scale=scale)
    check(run(opt, params, grads), ref.run(grads))
    close(opt.ms[0], ref.state[0]["ms"])
    close(opt.moment[1], ref.state[1]["mom"])
    assert opt.global_step.asnumpy().tolist() == [len(GRADS)]  # RMSProp counts its steps


@pytest.mark.parametrize("kwargs", [dict(learning_rate=0.1), dict(accum=0.2, learning_rate=0.5, l1=0.05, l2=0.1)])
def test_proximal_adagrad_matches_formula(kwargs):
    params = make_params()
    opt = nn.ProximalAdagrad(params, **kwargs)
    assert [p.name for p in opt.accum] == ["accum.w", "accum.b"]
    rule = proximal_adagrad_rule(kwargs.get("accum", 0.1), kwargs.get("l1", 0.0), kwargs.get("l2", 0.0))
    ref = Reference(*rule, lr=kwargs["learning_rate"])
    check(run(opt, params), ref.run())
    close(opt.accum[0], ref.state[0]["h"])


@pytest.mark.parametrize("kwargs", [dict(learning_rate=0.1), dict(initial_accum=0.3, learning_rate=0.5,
                                                                  lr_power=-0.7, l1=0.02, l2=0.05)])
def test_ftrl_matches_formula(kwargs):
    params = make_params()
    opt = nn.FTRL(params, **kwargs)
    assert [p.name for p in opt.moments] == ["moments.w", "moments.b"]
    assert [p.name for p in opt.linear] == ["linear.w", "linear.b"]
    np.testing.assert_allclose(opt.moments[0].asnumpy(), np.full((2, 3), kwargs.get("initial_accum", 0.1)), rtol=1e-7)
    rule = ftrl_rule(kwargs.get("initial_accum", 0.1), kwargs.get("lr_power", -0.5), kwargs.get("l1", 0.0),
                     kwargs.get("l2", 0.0))
    ref = Reference(*rule, lr=kwargs["learning_rate"])
    check(run(opt, params), ref.run())
    close(opt.linear[0], ref.state[0]["u"], atol=1e-5)
    close(opt.moments[1], ref.state[1]["m"])


def test_ftrl_decays_every_parameter():
    params = make_params(["w", "bn.gamma"])
    opt = nn.FTRL(params, learning_rate=0.1, weight_decay=0.1)
    assert opt.decay_flags == (True, True)


def test_adaptive_errors():
    with pytest.raises(ValueError):
        nn.Adagrad(make_params(), accum=-0.1)
    with pytest.raises(TypeError):
        nn.Adagrad(make_params(), accum=1)
    with pytest.raises(TypeError):
        nn.Adagrad(make_params(), update_slots=1)
    with pytest.raises(ValueError):
        nn.RMSProp(make_params(), epsilon=0.0)
    with pytest.raises(ValueError):
        nn.RMSProp(make_params(), decay=-0.9)
    with pytest.raises(TypeError):
        nn.RMSProp(make_params(), centered="no")
    with pytest.raises(ValueError):
        nn.ProximalAdagrad(make_params(), l1=-1.0)
    with pytest.raises(TypeError):
        nn.ProximalAdagrad(make_params(), l2=0)
    with pytest.raises(ValueError):
        nn.FTRL(make_params(), lr_power=0.5)
    with pytest.raises(ValueError):
        nn.FTRL(make_params(), initial_accum=-0.1)
    with pytest.raises(ValueError):
        nn.FTRL(make_params(), learning_rate=[0.1, 0.2])
    with pytest.raises(TypeError):
        nn.FTRL(make_params(), learning_rate=1)
