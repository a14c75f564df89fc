"""THOR optimizer: three training steps of a small Dense net against a numpy/PyTorch reference."""
import numpy as np
import pytest
import torch

import aotnn
from aotnn import Tensor, nn
from aotnn.nn.optim.thor import ThorGpu

B = 6


class _Net(nn.Cell):
    def __init__(self, w1, b1, w2):
        super().__init__()
        self.fc1 = nn.Dense(4, 5, Tensor(w1), Tensor(b1), activation="relu")
        self.fc2 = nn.Dense(5, 3, Tensor(w2), has_bias=False)

    def construct(self, x):
        return self.fc2(self.fc1(x))


def _inv(m):
    return np.linalg.inv(m.astype(np.float64))


def _reference(w1, b1, w2, batches, lr, damping, momentum, weight_decay, loss_scale, frequency, nesterov=False,
               clip=False):
    """The THOR update written from MindSpore's documented formulas (GPU variant)."""
    params = [w1.astype(np.float64), b1.astype(np.float64), w2.astype(np.float64)]
    moments = [np.zeros_like(p) for p in params]
    a_inv = [None, None]
    g_inv = [None, None]
    losses = []
    for step, (x, label) in enumerate(batches):
        tp = [torch.tensor(p, requires_grad=True) for p in params]
        xt = torch.tensor(x, dtype=torch.float64)
        z1 = xt @ tp[0].T
        z1.retain_grad()
        h = torch.relu(z1 + tp[1])
        z2 = h @ tp[2].T
        z2.retain_grad()
        loss = torch.nn.functional.cross_entropy(z2, torch.tensor(label, dtype=torch.long))
        (loss * loss_scale).backward()
        losses.append(float(loss.detach()))
        grads = [t.grad.numpy() / loss_scale for t in tp]
        inputs = [x.astype(np.float64), h.detach().numpy()]
        douts = [z1.grad.numpy(), z2.grad.numpy()]   # loss-scaled, as the layers see them
        d = damping[min(step, len(damping) - 1)]
        if step % frequency == 0:
            for k in range(2):
                a = inputs[k].T @ inputs[k] / B
                g = douts[k].T @ douts[k] / B * (B * B) / loss_scale ** 2
                a_inv[k] = _inv(a + np.sqrt(d) * np.eye(a.shape[0]))
                g_inv[k] = _inv(g + np.sqrt(d) * np.eye(g.shape[0]))
        grads[0] = g_inv[0] @ grads[0] @ a_inv[0]
        grads[2] = g_inv[1] @ grads[2] @ a_inv[1]
        grads = [g + weight_decay * p for g, p in zip(grads, params)]
        if clip:  # ClipByNorm to 1.0
            grads = [g / max(np.linalg.norm(g), 1.0) for g in grads]
        rate = lr[min(step, len(lr) - 1)]
        for i in range(3):
            moments[i] = momentum * moments[i] + grads[i]
            if nesterov:
                params[i] = params[i] - (grads[i] * rate + moments[i] * momentum * rate)
            else:
                params[i] = params[i] - rate * moments[i]
    return params, losses


def _data(seed):
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0, 0.5, (5, 4)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (5,)).astype(np.float32)
    w2 = rng.normal(0, 0.5, (3, 5)).astype(np.float32)
    batches = [(rng.normal(size=(B, 4)).astype(np.float32), rng.integers(0, 3, B).astype(np.int32))
               for _ in range(3)]
    return w1, b1, w2, batches


@pytest.mark.parametrize("config", [
    dict(lr=[0.1, 0.05, 0.02], damping=[0.3, 0.2, 0.1], momentum=0.9, weight_decay=0.0, loss_scale=1.0,
         nesterov=False, clip=False),
    dict(lr=[0.05], damping=[0.5, 0.1], momentum=0.5, weight_decay=0.01, loss_scale=8.0, nesterov=True, clip=True),
])
def test_thor_three_steps_match_reference(config):
    w1, b1, w2, batches = _data(3)
    net = _Net(w1, b1, w2)
    lr = Tensor(np.array(config["lr"], np.float32)) if len(config["lr"]) > 1 else Tensor(config["lr"][0],
                                                                                       aotnn.float32)
    opt = nn.thor(net, lr, Tensor(np.array(config["damping"], np.float32)), config["momentum"],
                  weight_decay=config["weight_decay"], loss_scale=config["loss_scale"], batch_size=B,
                  use_nesterov=config["nesterov"], enable_clip_grad=config["clip"], frequency=2)
    assert isinstance(opt, ThorGpu) and isinstance(net.fc1, nn.DenseThor) and opt.get_frequency() == 2
    assert [p.name for p in opt.parameters] == ["fc1.weight", "fc1.bias", "fc2.weight"]
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt, sens=config["loss_scale"])
    step.set_train()
    losses = [float(step(Tensor(x), Tensor(y)).asnumpy()) for x, y in batches]
    params, ref_losses = _reference(w1, b1, w2, batches, config["lr"], config["damping"], config["momentum"],
                                    config["weight_decay"], config["loss_scale"], 2, config["nesterov"],
                                    config["clip"])
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-4, atol=1e-5)
    for got, want in zip([net.fc1.weight, net.fc1.bias, net.fc2.weight], params):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-3, atol=2e-4)
    assert int(opt.cov_step.asnumpy()[0]) == 3


def test_thor_inverse_blocks_beyond_split_dim():
    from aotnn.ops._dispatch import apply
    rng = np.random.default_rng(0)
    n = 7
    x = rng.normal(size=(20, n))
    a = (x.T @ x / 20 + 0.1 * np.eye(n)).astype(np.float32)
    got = apply("thor_inverse", Tensor(a), split_dim=3).asnumpy()
    want = np.zeros((n, n))
    for i in range(0, n, 3):
        j = min(n, i + 3)
        want[i:j, i:j] = _inv(a[i:j, i:j])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    full = apply("thor_inverse", Tensor(a)).asnumpy()
    np.testing.assert_allclose(full, _inv(a), rtol=1e-4, atol=1e-5)


def test_thor_converts_layers_and_keeps_parameters():
    w1, b1, w2, _ = _data(1)
    net = _Net(w1, b1, w2)
    weight = net.fc1.weight
    nn.thor(net, Tensor(0.1, aotnn.float32), Tensor(0.1, aotnn.float32), 0.9)
    assert isinstance(net.fc1, nn.DenseThor) and isinstance(net.fc2, nn.DenseThor)
    assert net.fc1.weight is weight and net.fc1.weight.name == "fc1.weight"
    np.testing.assert_allclose(net.fc1.weight.asnumpy(), w1)
    names = [p.name for p in net.get_parameters()]
    assert "fc1.matrix_a" in names and "fc2.matrix_g" in names


@pytest.mark.parametrize("kwargs, error", [
    (dict(learning_rate=0.1), TypeError),
    (dict(momentum=1), TypeError),
    (dict(momentum=-0.5), ValueError),
    (dict(frequency=1), ValueError),
    (dict(frequency=2.0), TypeError),
    (dict(loss_scale=0.0), ValueError),
    (dict(weight_decay=-1.0), ValueError),
    (dict(use_nesterov=1), TypeError),
])
def test_thor_invalid_arguments(kwargs, error):
    w1, b1, w2, _ = _data(2)
    args = dict(net=_Net(w1, b1, w2), learning_rate=Tensor(0.1, aotnn.float32), damping=Tensor(0.1, aotnn.float32),
                momentum=0.9)
    args.update(kwargs)
    with pytest.raises(error):
        nn.thor(**args)


class _ConvNet(nn.Cell):
    def __init__(self, wc, wf):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, pad_mode="valid", weight_init=Tensor(wc))
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(27, 3, Tensor(wf), has_bias=False)

    def construct(self, x):
        return self.fc(self.flatten(self.conv(x)))


class _EmbeddingNet(nn.Cell):
    def __init__(self, table, wf):
        super().__init__()
        self.emb = nn.Embedding(6, 3, embedding_table=Tensor(table))
        self.norm = nn.LayerNorm((3,), begin_norm_axis=-1, begin_params_axis=-1)
        self.fc = nn.Dense(6, 3, Tensor(wf), has_bias=False)

    def construct(self, ids):
        return self.fc(self.norm(self.emb(ids)).reshape((ids.shape[0], 6)))


def _one_step(net, x, label, lr=0.1, damping=0.2, momentum=0.9):
    opt = nn.thor(net, Tensor(lr, aotnn.float32), Tensor(damping, aotnn.float32), momentum, batch_size=B,
                  frequency=2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train()
    step(Tensor(x), Tensor(label))
    return opt


def _damped_inv(m, damping):
    return _inv(m + np.sqrt(damping) * np.eye(m.shape[0]))


def test_thor_conv_layer_step():
    rng = np.random.default_rng(5)
    wc = rng.normal(0, 0.3, (3, 2, 3, 3)).astype(np.float32)
    wf = rng.normal(0, 0.3, (3, 27)).astype(np.float32)
    x = rng.normal(size=(B, 2, 5, 5)).astype(np.float32)
    label = rng.integers(0, 3, B).astype(np.int32)
    net = _ConvNet(wc, wf)
    opt = _one_step(net, x, label)
    assert isinstance(net.conv, nn.Conv2dThor) and opt.matrix_a[0].shape == (18, 18)
    tc, tf = torch.tensor(wc.astype(np.float64), requires_grad=True), torch.tensor(wf.astype(np.float64),
                                                                                  requires_grad=True)
    xt = torch.tensor(x, dtype=torch.float64)
    z = torch.nn.functional.conv2d(xt, tc)
    z.retain_grad()
    h = z.reshape(B, 27)
    out = h @ tf.T
    out.retain_grad()
    torch.nn.functional.cross_entropy(out, torch.tensor(label, dtype=torch.long)).backward()
    patches = torch.nn.functional.unfold(xt, 3).numpy().transpose(0, 2, 1).reshape(-1, 18)
    dz = z.grad.numpy().transpose(0, 2, 3, 1).reshape(-1, 3)
    a_conv = patches.T @ patches / patches.shape[0]
    g_conv = dz.T @ dz / dz.shape[0] * B * B
    hn, dout = h.detach().numpy(), out.grad.numpy()
    grad_c = _damped_inv(g_conv, 0.2) @ tc.grad.numpy().reshape(3, 18) @ _damped_inv(a_conv, 0.2)
    grad_f = _damped_inv(dout.T @ dout / B * B * B, 0.2) @ tf.grad.numpy() @ _damped_inv(hn.T @ hn / B, 0.2)
    np.testing.assert_allclose(net.conv.weight.asnumpy(), wc - 0.1 * grad_c.reshape(wc.shape), rtol=2e-3,
                               atol=2e-4)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), wf - 0.1 * grad_f, rtol=2e-3, atol=2e-4)


def test_thor_embedding_and_layernorm_step():
    rng = np.random.default_rng(6)
    table = rng.normal(size=(6, 3)).astype(np.float32)
    wf = rng.normal(0, 0.5, (3, 6)).astype(np.float32)
    ids = rng.integers(0, 6, (B, 2)).astype(np.int32)
    label = rng.integers(0, 3, B).astype(np.int32)
    net = _EmbeddingNet(table, wf)
    _one_step(net, ids, label)
    assert isinstance(net.emb, nn.EmbeddingThor)
    tt = torch.tensor(table.astype(np.float64), requires_grad=True)
    tg = torch.ones(3, dtype=torch.float64, requires_grad=True)
    tb = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    tf = torch.tensor(wf.astype(np.float64), requires_grad=True)
    rows = tt[torch.tensor(ids, dtype=torch.long).reshape(-1)]
    rows.retain_grad()
    h = torch.nn.functional.layer_norm(rows, (3,), tg, tb, 1e-7).reshape(B, 6)
    out = h @ tf.T
    out.retain_grad()
    torch.nn.functional.cross_entropy(out, torch.tensor(label, dtype=torch.long)).backward()
    d = np.sqrt(0.2)
    counts = np.bincount(ids.ravel(), minlength=6)
    drows = rows.grad.numpy()
    g_emb = drows.T @ drows / drows.shape[0] * B * B
    grad_t = (1.0 / (counts / B + d))[:, None] * tt.grad.numpy() @ _damped_inv(g_emb, 0.2)
    np.testing.assert_allclose(net.emb.embedding_table.asnumpy(), table - 0.1 * grad_t, rtol=2e-3, atol=2e-4)
    for param, grad, init in [(net.norm.gamma, tg.grad.numpy(), 1.0), (net.norm.beta, tb.grad.numpy(), 0.0)]:
        np.testing.assert_allclose(param.asnumpy(), init - 0.1 * grad / (grad * grad / B + d), rtol=2e-3, atol=2e-4)
    hn, dout = h.detach().numpy(), out.grad.numpy()
    grad_f = _damped_inv(dout.T @ dout / B * B * B, 0.2) @ tf.grad.numpy() @ _damped_inv(hn.T @ hn / B, 0.2)
    np.testing.assert_allclose(net.fc.weight.asnumpy(), wf - 0.1 * grad_f, rtol=2e-3, atol=2e-4)


def test_convert_to_thor_model_trains_like_the_reference():
    from aotnn.train import ConvertModelUtils, Model
    w1, b1, w2, batches = _data(3)
    net = _Net(w1, b1, w2)
    lr, damping = [0.1, 0.05, 0.02], [0.3, 0.2, 0.1]
    opt = nn.thor(net, Tensor(np.array(lr, np.float32)), Tensor(np.array(damping, np.float32)), 0.9,
                  batch_size=B, frequency=2)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    model = Model(net, loss_fn=loss, optimizer=opt, metrics={"acc"})
    thor_model = ConvertModelUtils.convert_to_thor_model(model=model, network=net, loss_fn=loss, optimizer=opt,
                                                         metrics={"acc"})
    assert isinstance(thor_model, Model)
    thor_model.train(1, [(Tensor(x), Tensor(y)) for x, y in batches])
    params, _ = _reference(w1, b1, w2, batches, lr, damping, 0.9, 0.0, 1.0, 2)
    for got, want in zip([net.fc1.weight, net.fc1.bias, net.fc2.weight], params):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=2e-3, atol=2e-4)
    plain = Model(net, loss_fn=loss, optimizer=nn.Momentum(net.trainable_params(), 0.1, 0.9))
    assert ConvertModelUtils.convert_to_thor_model(plain, net, loss, plain._optimizer) is plain
