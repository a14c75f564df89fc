"""Model.train / eval / predict, and loss-scaled training steps."""
from __future__ import annotations

import numpy as np

import aotnn
from aotnn import Tensor, nn
from aotnn.train import LossMonitor, Model

from .training_cells import MeanSquare, PlainSGD


def _linear_data(rng, n=8):
    x = rng.standard_normal((n, 3)).astype(np.float32)
    return x, (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def test_model_train_follows_plain_gradient_descent(capsys):
    rng = np.random.default_rng(0)
    net = nn.Dense(3, 1)
    w, b = net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)
    batches = [_linear_data(rng) for _ in range(3)]
    model = Model(net, MeanSquare(), PlainSGD(net.trainable_params(), 0.1))
    model.train(2, batches, callbacks=LossMonitor(1))
    for _ in range(2):
        for x, t in batches:  # the same updates in float64 numpy
            err = x @ w.T + b - t
            w, b = w - 0.1 * 2 * (err.T @ x) / err.size, b - 0.1 * 2 * err.sum(axis=0) / err.size
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-5)
    assert capsys.readouterr().out.count("loss is") == 6
    prediction = model.predict(Tensor(batches[0][0])).asnumpy()
    np.testing.assert_allclose(prediction, batches[0][0] @ w.T + b, rtol=1e-4, atol=1e-5)


def test_model_eval_with_loss_metric():
    rng = np.random.default_rng(1)
    net = nn.Dense(3, 1)
    data = [_linear_data(rng) for _ in range(2)]
    result = Model(net, MeanSquare(), metrics={"loss"}).eval(data)
    expected = np.mean([((x @ net.weight.asnumpy().T + net.bias.asnumpy() - t) ** 2).mean() for x, t in data])
    np.testing.assert_allclose(result["loss"], expected, rtol=1e-5)


def test_dynamic_loss_scale_grows_and_overflow_skips_update():
    net = nn.Dense(3, 2)
    manager = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0 ** 10, scale_factor=2, scale_window=2)
    step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, MeanSquare()),
                                            PlainSGD(net.trainable_params(), 0.1), manager)
    x, t = np.ones((2, 3), np.float32), np.zeros((2, 2), np.float32)
    w = net.weight.asnumpy().astype(np.float64)
    b = net.bias.asnumpy().astype(np.float64)
    scales = []
    for _ in range(3):
        err = x @ w.T + b - t
        w, b = w - 0.1 * 2 * (err.T @ x) / err.size, b - 0.1 * 2 * err.sum(axis=0) / err.size
        _, overflow, _ = step(Tensor(x), Tensor(t))
        assert not bool(overflow.asnumpy())
        scales.append(float(step.scale_sense.asnumpy()[0]))
    assert scales == [1024.0, 2048.0, 2048.0]  # grows after scale_window steps without overflow
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-6)
    before = net.weight.asnumpy().copy()
    x[0, 0] = np.inf
    _, overflow, _ = step(Tensor(x), Tensor(t))
    assert bool(overflow.asnumpy())
    np.testing.assert_array_equal(net.weight.asnumpy(), before)
    assert float(step.scale_sense.asnumpy()[0]) == 1024.0


def test_parameter_update_and_fixed_scale():
    p = aotnn.Parameter(Tensor(np.zeros(3, np.float32)), name="p")
    nn.ParameterUpdate(p)(Tensor(np.arange(3, dtype=np.float32)))
    np.testing.assert_array_equal(p.asnumpy(), [0, 1, 2])
    assert nn.FixedLossScaleUpdateCell(128).get_loss_scale() == 128
