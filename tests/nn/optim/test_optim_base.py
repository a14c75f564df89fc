"""The Optimizer base class: parameter groups, weight-decay rules, loss scale, learning rates as float, Tensor,
list or schedule, get_lr / get_lr_parameter, state, checkpoints, inlining into a larger graph, argument errors,
TinyMS names and the seed examples."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn as ms
from aotnn import Parameter, Tensor, nn, ops
from .optim_reference import (GRADS, INIT, Reference, adam_rule, check, close, make_params, momentum_rule,
                              run)

RNG = np.random.default_rng(3)
K_INIT = RNG.standard_normal((2, 16)).astype(np.float32)
K_GRADS = [RNG.standard_normal((2, 16)).astype(np.float32) for _ in GRADS]


class HalvingLR(nn.Cell):
    """A tiny learning-rate schedule: 0.2 * 0.5 ** step."""

    def construct(self, global_step):
        return 0.2 * ops.pow(0.5, ops.cast(global_step, ms.float32))


class GrowingDecay(nn.Cell):
    """A tiny weight-decay schedule: 0.01 * (step + 1)."""

    def construct(self, global_step):
        return 0.01 * (ops.cast(global_step, ms.float32) + 1.0)


def _momentum_steps(params, grads, lrs, wds, u=0.9, centralize=(), scale=1.0):
    """Numpy Momentum over explicit per-step, per-parameter learning rates and weight decays."""
    ws = [p.asnumpy().astype(np.float64) for p in params]
    vs = [np.zeros_like(w) for w in ws]
    trajectory = []
    for step, step_grads in enumerate(grads):
        for i, g in enumerate(step_grads):
            g = g.astype(np.float64) + wds[step][i] * scale * ws[i]
            if i in centralize:
                g = g - g.mean(axis=tuple(range(1, g.ndim)), keepdims=True)
            g = g / scale
            vs[i] = vs[i] * u + g
            ws[i] = ws[i] - lrs[step][i] * vs[i]
        trajectory.append([w.copy() for w in ws])
    return trajectory


def test_group_params_lr_weight_decay_order_and_centralization():
    w, b = make_params()
    k = Parameter(Tensor(K_INIT), name="k")
    groups = [{"params": [w, k], "lr": 0.05, "weight_decay": 0.01, "grad_centralization": True},
              {"params": [b]},
              {"order_params": [k, b, w]}]
    opt = nn.Momentum(groups, learning_rate=0.1, momentum=0.9, weight_decay=0.0)
    assert [p.name for p in opt.parameters] == ["k", "b", "w"]
    assert [p.name for p in opt.moments] == ["moments.k", "moments.b", "moments.w"]
    assert opt.decay_flags == (True, False, True) and opt.grad_centralization_flags == (True, False, True)
    conv_lr = opt.get_lr_parameter(w)
    assert conv_lr.name == "learning_rate_group_0" and float(conv_lr.asnumpy()) == pytest.approx(0.05)
    assert [p.name for p in opt.get_lr_parameter([b, k])] == ["learning_rate", "learning_rate_group_0"]
    grads = [[kg, g[1], g[0]] for kg, g in zip(K_GRADS, GRADS)]
    params = [k, b, w]
    traj = run(opt, params, grads)
    # k (2, 16) is centralized; w (2, 3) is not: MindSpore centralizes only when shape[1] % 16 == 0
    expected = _momentum_steps([Parameter(Tensor(K_INIT)), *make_params()[::-1]], grads,
                               [[0.05, 0.1, 0.05]] * len(GRADS), [[0.01, 0.0, 0.01]] * len(GRADS), centralize=(0,))
    check(traj, expected)


def test_weight_decay_skips_beta_and_gamma_when_not_grouped():
    init = INIT + [np.linspace(-1, 1, 3).astype(np.float32)]
    params = make_params(["fc.weight", "bn.gamma", "bn.beta"], init=init)
    opt = nn.Momentum(params, 0.1, 0.9, weight_decay=0.1)
    assert opt.decay_flags == (True, False, False)
    grads = [step + [step[1] * 0.5] for step in GRADS]
    expected = Reference(*momentum_rule(0.9), lr=0.1, wd=0.1, decay=[True, False, False], init=init).run(grads)
    check(run(opt, params, grads), expected)


@pytest.mark.parametrize("learning_rate", [[0.1, 0.05, 0.02], Tensor(np.array([0.1, 0.05, 0.02], np.float32))])
def test_learning_rate_per_step(learning_rate):
    params = make_params()
    opt = nn.Momentum(params, learning_rate, 0.9)
    assert opt.dynamic_lr and opt.get_lr_parameter(params[0]).shape == (3,)
    traj = run(opt, params)
    # step i takes item i; after the end the last value repeats (MindSpore would read past the end)
    check(traj, Reference(*momentum_rule(0.9), lr=[0.1, 0.05, 0.02]).run())
    assert opt.global_step.dtype == ms.int32 and opt.global_step.asnumpy().tolist() == [len(GRADS)]
    close(opt.get_lr(), 0.02)  # get_lr reads the current step's rate and advances the step
    assert opt.global_step.asnumpy().tolist() == [len(GRADS) + 1]


def test_learning_rate_schedule_and_scalar_tensor():
    params = make_params()
    opt = nn.Momentum(params, HalvingLR(), 0.9)
    check(run(opt, params), Reference(*momentum_rule(0.9), lr=[0.2 * 0.5 ** i for i in range(len(GRADS))]).run())
    params = make_params()
    opt = nn.Momentum(params, Tensor(np.float32(0.05)), 0.9)
    assert not opt.dynamic_lr and opt.learning_rate.name == "learning_rate" and opt.learning_rate.shape == ()
    close(opt.get_lr(), 0.05)
    check(run(opt, params), Reference(*momentum_rule(0.9), lr=0.05).run())


def test_group_dynamic_lr_and_dynamic_weight_decay():
    w, b = make_params()
    opt = nn.Momentum([{"params": [w], "lr": [0.1, 0.05, 0.02]}, {"params": [b], "weight_decay": GrowingDecay()}],
                      learning_rate=0.1, momentum=0.9)
    assert opt.is_group_lr and opt.dynamic_lr and opt.dynamic_weight_decay
    assert opt.get_lr_parameter(b).name == "learning_rate"
    traj = run(opt, [w, b])
    lrs = [[[0.1, 0.05, 0.02][min(s, 2)], 0.1] for s in range(len(GRADS))]
    wds = [[0.0, 0.01 * (s + 1)] for s in range(len(GRADS))]
    check(traj, _momentum_steps(make_params(), GRADS, lrs, wds))


def test_dynamic_weight_decay_advances_global_step():
    params = make_params()
    opt = nn.Momentum(params, 0.1, 0.9, weight_decay=GrowingDecay(), loss_scale=2.0)
    grads = [[g * 2.0 for g in step] for step in GRADS]
    traj = run(opt, params, grads)
    wds = [[0.01 * (s + 1)] * 2 for s in range(len(GRADS))]
    check(traj, _momentum_steps(make_params(), grads, [[0.1, 0.1]] * len(GRADS), wds, scale=2.0))
    assert opt.global_step.asnumpy().tolist() == [len(GRADS)]


class _StepCell(nn.Cell):
    """A graph that computes gradients and calls the optimizer inside its construct."""

    def __init__(self, optimizer):
        super().__init__(auto_prefix=False)
        self.optimizer = optimizer

    def construct(self, g0, g1):
        self.optimizer((g0 * 2.0, g1 * 2.0))
        return g0 + 1.0


def test_optimizer_inlined_in_a_larger_graph():
    params = make_params()
    step = _StepCell(nn.Adam(params, learning_rate=0.01, use_nesterov=True))
    trajectory = []
    for g0, g1 in GRADS:
        out = step(Tensor(g0 / 2), Tensor(g1 / 2))
        close(out, g0 / 2 + 1.0)
        trajectory.append([p.asnumpy() for p in params])
    check(trajectory, Reference(*adam_rule(nesterov=True), lr=0.01).run())


def test_state_is_part_of_the_cell_and_checkpoints(tmp_path):
    params = make_params()
    opt = nn.Momentum(params, 0.1, 0.9)
    names = [name for name, _ in opt.parameters_and_names()]
    assert {"global_step", "learning_rate", "momentum", "moments.w", "moments.b", "w", "b"} <= set(names)
    assert opt.learning_rate.dtype == ms.float32 and opt.global_step.shape == (1,)
    run(opt, params, GRADS[:1])
    path = str(tmp_path / "opt.ckpt")
    ms.save_checkpoint(opt, path)
    loaded = ms.load_checkpoint(path)
    assert {"moments.w", "global_step", "learning_rate", "momentum"} <= set(loaded)
    close(loaded["moments.w"], opt.moments[0].asnumpy())


def test_optimizer_argument_errors():
    w, b = make_params()
    for bad, error in [(-0.1, ValueError), ("0.1", TypeError), (None, TypeError),
                       (Tensor(np.ones((2, 2), np.float32)), ValueError)]:
        with pytest.raises(error):
            nn.Momentum([w, b], bad, 0.9)
    for bad, error in [(None, ValueError), ([], ValueError), ([1, 2], TypeError), ([w, {"params": [b]}], TypeError),
                       (5, TypeError)]:
        with pytest.raises(error):
            nn.Momentum(bad, 0.1, 0.9)
    with pytest.raises(ValueError):
        nn.Momentum([w, b], 0.1, 0.9, loss_scale=0.0)
    with pytest.raises(TypeError):
        nn.Momentum([w, b], 0.1, 0.9, loss_scale="2")
    with pytest.raises(ValueError):
        nn.Momentum([w, b], 0.1, 0.9, weight_decay=-0.1)
    with pytest.raises(TypeError):
        nn.Momentum([w, b], 0.1, 0.9, weight_decay="0.1")
    with pytest.raises(KeyError):
        nn.Momentum([{"params": [w], "foo": 1}], 0.1, 0.9)
    with pytest.raises(ValueError):
        nn.Momentum([{"params": [w]}, {"order_params": [w], "lr": 0.1}], 0.1, 0.9)
    with pytest.raises(ValueError):
        nn.Momentum([{"params": [w]}, {"params": [b]}, {"order_params": [w]}], 0.1, 0.9)
    with pytest.raises(RuntimeError):
        nn.Momentum([{"params": [w]}, {"params": [w, b]}], 0.1, 0.9)
    with pytest.raises(TypeError):
        nn.Momentum([{"params": [w, 3]}], 0.1, 0.9)
    with pytest.raises(TypeError):
        nn.Momentum([{"params": [w], "grad_centralization": 1}], 0.1, 0.9)
    with pytest.raises(ValueError):
        nn.Momentum([{"params": [w], "lr": [0.1, 0.2]}, {"params": [b], "lr": [0.1, 0.2, 0.3]}], 0.1, 0.9)
    with pytest.raises(ValueError):
        nn.Momentum([w, Parameter(Tensor(np.ones(3, np.float32)), name="w")], 0.1, 0.9)
    opt = nn.Momentum([w, b], 0.1, 0.9)
    with pytest.raises(ValueError):
        opt.get_lr_parameter(Parameter(Tensor(np.ones(3, np.float32)), name="other"))
    with pytest.raises(TypeError):
        opt.get_lr_parameter("w")
    with pytest.raises(TypeError):
        opt.unique = 1
    with pytest.raises(NotImplementedError):
        opt.target = "CPU"


def test_tinyms_names():
    from aotnn import optimizers
    names = ["Optimizer", "SGD", "Momentum", "Adam", "AdamWeightDecay", "AdamOffload", "LazyAdam", "Adagrad",
             "RMSProp", "FTRL", "Lamb", "LARS", "ProximalAdagrad", "Rprop", "ASGD", "AdaFactor"]
    for name in names:
        assert getattr(optimizers, name) is getattr(nn, name) is getattr(nn.optim, name)


class _Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 4, 3)
        self.fc = nn.Dense(4, 2)

    def construct(self, x):
        return self.fc(ops.mean(self.conv(x), (2, 3)))


def test_seed_examples_group_params():
    """The 004 seed's examples (Momentum, SGD, Adam, Adagrad...) up to the Model line, plus one update."""
    net = _Net()
    conv_params = list(filter(lambda x: "conv" in x.name, net.trainable_params()))
    no_conv_params = list(filter(lambda x: "conv" not in x.name, net.trainable_params()))
    group_params = [{"params": conv_params, "weight_decay": 0.01, "grad_centralization": True},
                    {"params": no_conv_params, "lr": 0.01},
                    {"order_params": net.trainable_params()}]
    for cls in (nn.Adam, nn.Adagrad, nn.RMSProp, nn.ProximalAdagrad, nn.LazyAdam):
        assert len(cls(group_params, learning_rate=0.1, weight_decay=0.0).parameters) == 3
    assert nn.AdaFactor([{"params": [net.conv.weight]}, {"params": [net.fc.weight]}], learning_rate=0.1,
                        weight_decay=0.0, relative_step=False).param_length == 2
    optim = nn.Momentum(group_params, learning_rate=0.1, momentum=0.9, weight_decay=0.0)
    assert [p.name for p in optim.parameters] == ["conv.weight", "fc.weight", "fc.bias"]
    assert float(optim.get_lr_parameter(conv_params)[0].asnumpy()) == pytest.approx(0.1)
    grads = [RNG.standard_normal(p.shape).astype(np.float32) for p in optim.parameters]
    before = [p.asnumpy() for p in optim.parameters]
    optim(tuple(Tensor(g) for g in grads))
    # conv.weight (4, 16, 3, 3): decayed, then centralized over all but the first axis; lr 0.1
    g = grads[0] + 0.01 * before[0]
    g = g - g.mean(axis=(1, 2, 3), keepdims=True)
    close(optim.parameters[0], before[0] - 0.1 * g, atol=1e-5)
    close(optim.parameters[2], before[2] - 0.01 * grads[2])


class _PlainSGD(nn.Optimizer):
    """An optimizer written the MindSpore way on top of the base class."""

    def __init__(self, params, learning_rate, weight_decay=0.0, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)

    def construct(self, gradients):
        gradients = self.scale_grad(self.decay_weight(gradients))
        lr = self.get_lr()
        return self.hyper_map(lambda p, g: ops.assign(p, p - lr * g), self.parameters, gradients)


def test_user_defined_optimizer_on_the_base_class():
    params = make_params(["w", "bn.beta"])
    opt = _PlainSGD(params, [0.3, 0.2], weight_decay=0.1, loss_scale=2.0)
    grads = [[g * 2.0 for g in step] for step in GRADS]
    expected = Reference(lambda i, w, g, s, t, lr: w - lr * g, lambda w: {}, lr=[0.3, 0.2], wd=0.1, scale=2.0,
                         decay=[True, False]).run(grads)
    check(run(opt, params, grads), expected)
