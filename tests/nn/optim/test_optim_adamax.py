"""nn.AdaMax against a numpy version of MindSpore's documented ApplyAdaMax rule; its state names; and
opt_init_args_register, which mindcv's optimizers use."""
from __future__ import annotations

import numpy as np
import pytest

from aotnn import Tensor, nn
from aotnn.nn.optim.optimizer import opt_init_args_register

from .optim_reference import Reference, check, close, make_params, run


def adamax_rule(b1=0.9, b2=0.999, eps=1e-8):
    """m = b1 m + (1 - b1) g; v = max(b2 v, |g|); w -= lr / (1 - b1^t) * m / (v + eps)."""
    def update(i, w, g, s, t, lr):
        s["m"] = b1 * s["m"] + (1 - b1) * g
        s["v"] = np.maximum(b2 * s["v"], np.abs(g))
        return w - lr / (1 - b1 ** t) * s["m"] / (s["v"] + eps)
    return update, lambda w: {"m": np.zeros_like(w), "v": np.zeros_like(w)}


@pytest.mark.parametrize("kwargs", [dict(), dict(learning_rate=0.05, beta1=0.8, beta2=0.95, eps=1e-3,
                                                 weight_decay=0.1, loss_scale=4.0)])
def test_adamax_matches_formula(kwargs):
    params = make_params()
    opt = nn.AdaMax(params, **kwargs)
    assert [p.name for p in opt.moment1] == ["moment1.w", "moment1.b"]
    assert [p.name for p in opt.moment2] == ["moment2.w", "moment2.b"]
    assert opt.beta1_power.name == "beta1_power" and opt.beta1_power.shape == (1,)
    from .optim_reference import GRADS
    scale = kwargs.get("loss_scale", 1.0)
    grads = [[g * scale for g in step] for step in GRADS]
    rule = adamax_rule(kwargs.get("beta1", 0.9), kwargs.get("beta2", 0.999), kwargs.get("eps", 1e-8))
    ref = Reference(*rule, lr=kwargs.get("learning_rate", 0.001), wd=kwargs.get("weight_decay", 0.0), scale=scale)
    check(run(opt, params, grads), ref.run(grads), rtol=2e-5)
    close(opt.moment1[0], ref.state[0]["m"])
    close(opt.moment2[1], ref.state[1]["v"])
    close(opt.beta1_power, [kwargs.get("beta1", 0.9) ** len(GRADS)])


@pytest.mark.parametrize("bad, error", [(dict(beta1=1.0), ValueError), (dict(beta2=1), TypeError),
                                        (dict(eps=0.0), ValueError)])
def test_adamax_argument_checks(bad, error):
    with pytest.raises(error):
        nn.AdaMax(make_params(), **bad)


def test_opt_init_args_register_records_arguments():
    class Recorded(nn.Optimizer):
        @opt_init_args_register
        def __init__(self, params, learning_rate=0.1, beta=0.5, *, flag=True):
            super().__init__(learning_rate, params)
            self.beta = beta

    params = make_params()
    opt = Recorded(params, Tensor(np.float32(0.25)), flag=False)
    assert opt.init_params == {"params": params}
    assert opt.init_learning_rate == pytest.approx(0.25)
    assert opt.init_args == {"beta": 0.5, "flag": False}
    assert opt.beta == 0.5
    with pytest.raises(TypeError):
        Recorded(params, 0.1, 0.5, 1)
