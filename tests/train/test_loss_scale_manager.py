"""Loss-scale managers (Fixed/Dynamic) and Model's training step built from them."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.train import DynamicLossScaleManager, FixedLossScaleManager, LossScaleManager, Model

LR, MOMENTUM = 0.1, 0.9
W0 = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6]], np.float32)
B0 = np.array([0.05, -0.1], np.float32)


def _batches(n: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32))
            for _ in range(n)]


def _momentum_reference(batches) -> tuple[np.ndarray, np.ndarray]:
    """Dense(3, 2) + mean squared error + Momentum, in float64 numpy."""
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    vw, vb = np.zeros_like(w), np.zeros_like(b)
    for x, t in batches:
        err = x @ w.T + b - t
        gw, gb = 2 * err.T @ x / err.size, 2 * err.sum(axis=0) / err.size
        vw, vb = MOMENTUM * vw + gw, MOMENTUM * vb + gb
        w, b = w - LR * vw, b - LR * vb
    return w, b


def _model(manager, optimizer_loss_scale: float = 1.0):
    net = nn.Dense(3, 2, weight_init=Tensor(W0), bias_init=Tensor(B0))
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM, loss_scale=optimizer_loss_scale)
    return net, Model(net, nn.MSELoss(), opt, loss_scale_manager=manager)


def _as_tensors(batches):
    return [(Tensor(x), Tensor(t)) for x, t in batches]


def test_fixed_manager_getters_and_update_cell():
    manager = FixedLossScaleManager()
    assert isinstance(manager, LossScaleManager)
    assert manager.get_loss_scale() == 128.0 and manager.get_drop_overflow_update() is True
    manager.update_loss_scale(True)
    manager.update_loss_scale(False)
    assert manager.get_loss_scale() == 128.0
    cell = manager.get_update_cell()
    assert isinstance(cell, nn.FixedLossScaleUpdateCell) and cell.get_loss_scale() == 128.0
    keep = FixedLossScaleManager(1024, False)
    assert keep.get_loss_scale() == 1024 and keep.get_drop_overflow_update() is False
    assert keep.get_update_cell() is None


def test_dynamic_manager_update_sequence():
    manager = DynamicLossScaleManager(init_loss_scale=8, scale_factor=2, scale_window=3)
    assert manager.get_drop_overflow_update() is True
    flags = [False, False, False, True, False, False, False, False, True, True]
    # by hand: growth on the 3rd clean step since the last overflow, halving on each overflow
    expected = [8, 8, 16, 8, 8, 8, 16, 16, 8, 4]
    got = []
    for overflow in flags:
        manager.update_loss_scale(overflow)
        got.append(manager.get_loss_scale())
    assert got == expected
    floor = DynamicLossScaleManager(init_loss_scale=2, scale_factor=4, scale_window=1)
    floor.update_loss_scale(True)
    assert floor.get_loss_scale() == 1  # never below 1
    floor.update_loss_scale(False)
    assert floor.get_loss_scale() == 4  # window 1: every clean step grows
    defaults = DynamicLossScaleManager()
    assert defaults.get_loss_scale() == 2 ** 24
    cell = defaults.get_update_cell()
    assert isinstance(cell, nn.DynamicLossScaleUpdateCell)
    assert cell.get_loss_scale() == 2 ** 24 and cell.scale_factor == 2 and cell.scale_window == 2000


def test_dynamic_manager_stops_after_too_many_overflows():
    manager = DynamicLossScaleManager(init_loss_scale=4)
    for _ in range(1000):
        manager.update_loss_scale(True)
    with pytest.raises(RuntimeError):
        manager.update_loss_scale(True)


def test_top_level_and_amp_exports():
    assert aotnn.FixedLossScaleManager is FixedLossScaleManager
    assert aotnn.amp.DynamicLossScaleManager is DynamicLossScaleManager
    assert aotnn.LossScaleManager is aotnn.amp.LossScaleManager is LossScaleManager


def test_fixed_manager_without_drop_scales_loss_and_optimizer_divides_back():
    batches = _batches(2)
    net, model = _model(FixedLossScaleManager(128, False), optimizer_loss_scale=128)
    train = model.train_network
    assert type(train) is nn.TrainOneStepCell and train.sens == 128.0
    model.train(1, _as_tensors(batches))
    w, b = _momentum_reference(batches)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-5)


def test_fixed_manager_with_drop_trains_like_no_scaling():
    batches = _batches(2, seed=1)
    net, model = _model(FixedLossScaleManager(64.0))
    assert isinstance(model.train_network, nn.TrainOneStepWithLossScaleCell)
    model.train(1, _as_tensors(batches))
    w, b = _momentum_reference(batches)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-5)
    assert model.train_network.scale_sense.asnumpy().item() == 64.0


def test_dynamic_manager_skips_overflowing_step_and_lowers_scale():
    clean = _batches(2, seed=2)
    poisoned = clean[0][0].copy()
    poisoned[1, 2] = np.inf
    net, model = _model(DynamicLossScaleManager(init_loss_scale=2 ** 10, scale_factor=2, scale_window=2))
    train = model.train_network
    assert isinstance(train, nn.TrainOneStepWithLossScaleCell)
    model.train(1, _as_tensors([(poisoned, clean[0][1])]))
    np.testing.assert_array_equal(net.weight.asnumpy(), W0)  # update skipped
    np.testing.assert_array_equal(net.bias.asnumpy(), B0)
    assert train.scale_sense.asnumpy().item() == 2 ** 9
    scales = []
    for x, t in clean:
        _, overflow, _ = train(Tensor(x), Tensor(t))
        assert not bool(overflow.asnumpy())
        scales.append(train.scale_sense.asnumpy().item())
    # clean steps 2 and 3 after the overflow at step 1: the scale grows once the window (2) is reached
    assert scales == [2 ** 9, 2 ** 10]
    w, b = _momentum_reference(clean)  # momentum state untouched by the skipped step
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-5)


def test_dynamic_manager_finds_a_scale_float16_gradients_fit():
    # amp_level O2 runs the Dense in float16: a large scale overflows its gradients (max 65504)
    batch = _batches(1)[0]
    assert np.abs(batch[0] @ W0.T + B0 - batch[1]).max() > 2  # so the step at 2**17 overflows
    net = nn.Dense(3, 2, weight_init=Tensor(W0), bias_init=Tensor(B0))
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM)
    model = Model(net, nn.MSELoss(), opt, amp_level="O2",
                  loss_scale_manager=DynamicLossScaleManager(init_loss_scale=2 ** 17, scale_window=1000))
    train = model.train_network
    scale, flags = 2.0 ** 17, []
    while not flags or flags[-1]:
        _, overflow, _ = train(Tensor(batch[0]), Tensor(batch[1]))
        flags.append(bool(overflow.asnumpy()))
        if flags[-1]:  # skipped, and the scale halves
            scale /= 2
            np.testing.assert_array_equal(net.weight.asnumpy(), W0)
        assert train.scale_sense.asnumpy().item() == scale
        assert len(flags) < 8
    assert flags[0] and scale >= 2 ** 10
    train(Tensor(batch[0]), Tensor(batch[1]))
    assert train.scale_sense.asnumpy().item() == scale  # clean steps keep it (window 1000)
    w, b = _momentum_reference([batch, batch])
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=5e-3, atol=2e-3)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=5e-3, atol=2e-3)


@pytest.mark.parametrize("make, error, word", [
    (lambda: FixedLossScaleManager(0.5), ValueError, "loss_scale"),
    (lambda: FixedLossScaleManager("128"), TypeError, "loss_scale"),
    (lambda: FixedLossScaleManager(128, drop_overflow_update=1), TypeError, "drop_overflow_update"),
    (lambda: DynamicLossScaleManager(init_loss_scale=0.5), ValueError, "init_loss_scale"),
    (lambda: DynamicLossScaleManager(scale_factor=0), ValueError, "scale_factor"),
    (lambda: DynamicLossScaleManager(scale_window=0), ValueError, "scale_window"),
    (lambda: DynamicLossScaleManager(scale_window=1.5), TypeError, "scale_window"),
])
def test_manager_invalid_arguments(make, error, word):
    with pytest.raises(error, match=word):
        make()


def test_model_rejects_bad_loss_scale_arguments():
    net = nn.Dense(3, 2)
    opt = nn.Momentum(net.trainable_params(), LR, MOMENTUM)
    with pytest.raises(TypeError, match="loss_scale_manager"):
        Model(net, nn.MSELoss(), opt, loss_scale_manager=128.0)
    with pytest.raises(ValueError, match="unknown_option"):
        Model(net, nn.MSELoss(), opt, unknown_option=1)
    with pytest.raises(ValueError, match="boost_level"):
        Model(net, nn.MSELoss(), opt, boost_level="O9")
    Model(net, nn.MSELoss(), opt, boost_level="O1", keep_batchnorm_fp32=False)  # accepted
