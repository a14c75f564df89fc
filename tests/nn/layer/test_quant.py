"""Quantization-aware layers against numpy written from MindSpore's fake-quant formulas (and torch conv)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from aotnn.common import dtype as mstype
from aotnn.compression.common import QuantDtype
from aotnn.compression.quant import create_quant_config

RNG = np.random.default_rng(7)
F32 = np.float32


# -- numpy reference ---------------------------------------------------------------------------------
def np_nudge(mn, mx, qmin, qmax, symmetric=False):
    """MindSpore's Nudge in float32: (nudged_min, nudged_max, scale)."""
    mn, mx = np.asarray(mn, F32), np.asarray(mx, F32)
    if symmetric:
        mx = np.where(np.abs(mn) < mx, mx, -mn).astype(F32)
        mn = np.where(np.abs(mn) < mx, -mx, mn).astype(F32)
    scale = ((mx - mn) / F32(qmax - qmin)).astype(F32)
    zp_from_min = (F32(qmin) - mn / scale).astype(F32)
    zp = np.where(zp_from_min <= qmin, F32(qmin),
                  np.where(zp_from_min >= qmax, F32(qmax), np.floor(zp_from_min + F32(0.5)))).astype(F32)
    return ((F32(qmin) - zp) * scale).astype(F32), ((F32(qmax) - zp) * scale).astype(F32), scale


def np_fake_quant(x, mn, mx, qmin=-128, qmax=127, symmetric=False, axis=None):
    x = np.asarray(x, F32)
    nmin, nmax, scale = np_nudge(mn, mx, qmin, qmax, symmetric)
    view = [1] * x.ndim
    if axis is not None:
        view[axis] = -1
    nmin, nmax, scale = (t.reshape(view) for t in (nmin, nmax, scale))
    clamped = np.clip(x, nmin, nmax)
    return (np.floor((clamped - nmin) / scale + F32(0.5)) * scale + nmin).astype(F32)


def np_ste_mask(x, mn, mx, qmin=-128, qmax=127, symmetric=False, axis=None):
    nmin, nmax, _ = np_nudge(mn, mx, qmin, qmax, symmetric)
    view = [1] * x.ndim
    if axis is not None:
        view[axis] = -1
    return ((x >= nmin.reshape(view)) & (x <= nmax.reshape(view))).astype(F32)


def np_observe(x, mn, mx, ema=False, decay=0.999, axis=None):
    """MinMaxUpdate: batch range (per channel), optionally averaged, widened to include 0."""
    axes = None if axis is None else tuple(i for i in range(x.ndim) if i != axis)
    bmin = np.asarray(x.min(axis=axes), F32).reshape(-1)
    bmax = np.asarray(x.max(axis=axes), F32).reshape(-1)
    if ema:
        bmin = F32(decay) * mn + F32(1 - decay) * bmin
        bmax = F32(decay) * mx + F32(1 - decay) * bmax
    return np.minimum(bmin, 0).astype(F32), np.maximum(bmax, 0).astype(F32)


def t_conv(x, w, b=None, stride=1, padding=0):
    out = F.conv2d(torch.tensor(x), torch.tensor(w), None if b is None else torch.tensor(b), stride, padding)
    return out.numpy()


def normal(*shape, scale=1.0):
    return (RNG.normal(size=shape) * scale).astype(F32)


# -- the fake-quant op ---------------------------------------------------------------------------------
X4 = normal(2, 3, 4, 5, scale=2.0)


@pytest.mark.parametrize("qmin, qmax, symmetric, mn, mx", [
    (-128, 127, False, [-3.1], [4.7]),        # INT8
    (-8, 7, False, [-2.5], [1.3]),            # INT4
    (-127, 127, True, [-3.3], [2.1]),         # INT8 symmetric, narrow range
    (-8, 7, True, [-0.7], [2.9]),             # INT4 symmetric
    (0, 255, False, [0.0], [5.0]),            # UINT8, range starting at 0
])
def test_fake_quant_per_layer(qmin, qmax, symmetric, mn, mx):
    mn, mx = np.array(mn, F32), np.array(mx, F32)
    out = ops.fake_quant(Tensor(X4), Tensor(mn), Tensor(mx), qmin, qmax, symmetric).asnumpy()
    np.testing.assert_allclose(out, np_fake_quant(X4, mn, mx, qmin, qmax, symmetric), rtol=1e-5, atol=1e-6)
    # every value lies on the grid of at most qmax - qmin + 1 levels
    assert len(np.unique(out)) <= qmax - qmin + 1


@pytest.mark.parametrize("qmin, qmax, symmetric", [(-128, 127, False), (-7, 7, True)])
def test_fake_quant_per_channel(qmin, qmax, symmetric):
    mn, mx = np.array([-1.0, -4.0, 0.5], F32), np.array([2.0, 1.5, 3.0], F32)
    out = ops.fake_quant(Tensor(X4), Tensor(mn), Tensor(mx), qmin, qmax, symmetric, channel_axis=1).asnumpy()
    np.testing.assert_allclose(out, np_fake_quant(X4, mn, mx, qmin, qmax, symmetric, axis=1), rtol=1e-5, atol=1e-6)


def test_fake_quant_float16():
    x = X4.astype(np.float16)
    mn, mx = np.array([-3.0], F32), np.array([3.0], F32)
    out = ops.fake_quant(Tensor(x), Tensor(mn), Tensor(mx))
    assert out.dtype == mstype.float16
    _, _, scale = np_nudge(mn, mx, -128, 127)
    np.testing.assert_allclose(out.asnumpy().astype(F32), np_fake_quant(x.astype(F32), mn, mx),
                               atol=float(scale[0]) + 1e-2)


def test_observer_training_on_float16():
    fq = nn.FakeQuantWithMinMaxObserver()
    fq.set_train()
    x = (X4 * 0.5).astype(np.float16)
    out = fq(Tensor(x))
    assert out.dtype == mstype.float16 and fq.minq.dtype == mstype.float32
    mn, mx = np_observe(x.astype(F32), None, None)
    np.testing.assert_allclose(fq.minq.asnumpy(), mn, rtol=1e-3)
    _, _, scale = np_nudge(mn, mx, -128, 127)
    np.testing.assert_allclose(out.asnumpy().astype(F32), np_fake_quant(x.astype(F32), mn, mx),
                               atol=float(scale[0]) + 1e-2)


def test_minmax_update_op():
    mn, mx = np.array([-6.0], F32), np.array([6.0], F32)
    new_min, new_max = ops.minmax_update(Tensor(X4), Tensor(mn), Tensor(mx), True, 0.9)
    ref_min, ref_max = np_observe(X4, mn, mx, True, 0.9)
    np.testing.assert_allclose(new_min.asnumpy(), ref_min, rtol=1e-6)
    np.testing.assert_allclose(new_max.asnumpy(), ref_max, rtol=1e-6)


# -- the observer ----------------------------------------------------------------------------------------
def test_observer_inference_uses_its_range():
    fq = nn.FakeQuantWithMinMaxObserver(min_init=-2.5, max_init=4, quant_dtype=QuantDtype.INT4)
    out = fq(Tensor(X4)).asnumpy()
    np.testing.assert_allclose(out, np_fake_quant(X4, [-2.5], [4.0], -8, 7), rtol=1e-5, atol=1e-6)


def test_observer_ema_over_three_training_calls():
    fq = nn.FakeQuantWithMinMaxObserver(ema=True, ema_decay=0.8, narrow_range=True)
    fq.set_train()
    mn, mx = np.array([-6.0], F32), np.array([6.0], F32)
    for i in range(3):
        x = normal(2, 3, 4, 5, scale=1.0 + i)
        out = fq(Tensor(x)).asnumpy()
        mn, mx = np_observe(x, mn, mx, True, 0.8)
        np.testing.assert_allclose(fq.minq.asnumpy(), mn, rtol=1e-5)
        np.testing.assert_allclose(fq.maxq.asnumpy(), mx, rtol=1e-5)
        np.testing.assert_allclose(out, np_fake_quant(x, mn, mx, -127, 127), rtol=1e-5, atol=1e-5)


def test_observer_per_channel_training_without_ema():
    fq = nn.FakeQuantWithMinMaxObserver(per_channel=True, channel_axis=0, num_channels=4, symmetric=True,
                                        min_init=[-1.0, -2.0, -3.0, -4.0], max_init=[1.0, 2.0, 3.0, 4.0])
    fq.set_train()
    w = normal(4, 3, 2, 2)
    w[2] = np.abs(w[2])  # a channel with no negative values: its minimum widens to 0
    out = fq(Tensor(w)).asnumpy()
    mn, mx = np_observe(w, None, None, axis=0)
    assert mn[2] == 0.0
    np.testing.assert_allclose(fq.minq.asnumpy(), mn)
    np.testing.assert_allclose(fq.maxq.asnumpy(), mx)
    np.testing.assert_allclose(out, np_fake_quant(w, mn, mx, -128, 127, True, axis=0), rtol=1e-5, atol=1e-6)


def test_observer_quant_delay():
    fq = nn.FakeQuantWithMinMaxObserver(quant_delay=2)
    fq.set_train()
    x = normal(2, 3, 4, 5)
    outs = [fq(Tensor(x)).asnumpy() for _ in range(3)]
    np.testing.assert_array_equal(outs[0], x)
    np.testing.assert_array_equal(outs[1], x)
    mn, mx = np_observe(x, None, None)
    np.testing.assert_allclose(outs[2], np_fake_quant(x, mn, mx), rtol=1e-5, atol=1e-6)
    assert int(fq.step.asnumpy()[0]) == 3


# -- straight-through gradients ----------------------------------------------------------------------------
def test_dense_quant_train_step_uses_straight_through_gradient():
    w = np.array([[0.3, -1.2, 2.5], [0.05, 0.7, -0.4]], F32)
    b = np.array([0.1, -0.2], F32)
    net = nn.DenseQuant(3, 2, weight_init=Tensor(w), bias_init=Tensor(b))
    lr = 0.1
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), learning_rate=lr))
    step.set_train()
    x, y = normal(4, 3), normal(4, 2)
    loss = float(step(Tensor(x), Tensor(y)).asnumpy())

    mn, mx = np_observe(w, None, None)
    wq = np_fake_quant(w, mn, mx)
    mask = np_ste_mask(w, mn, mx)
    assert mask.min() == 0.0  # 2.5 lies above the nudged maximum: no gradient reaches it
    pred = x @ wq.T + b
    np.testing.assert_allclose(loss, np.mean((pred - y) ** 2), rtol=1e-5)
    d_pred = 2 * (pred - y) / pred.size
    np.testing.assert_allclose(net.weight.asnumpy(), w - lr * (d_pred.T @ x) * mask, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), b - lr * d_pred.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.fake_quant_weight.minq.asnumpy(), mn)


def test_act_quant_gradient_is_masked_by_the_range():
    net = nn.ActQuant(nn.ReLU(), quant_config=create_quant_config())
    x = np.array([[-1.0, 0.5, 3.0, 7.0], [0.2, 5.9, 6.5, -0.1]], F32)
    grad = ops.GradOperation()(net)(Tensor(x)).asnumpy()
    # inference range [-6, 6] nudged: [-128, 127] * 12 / 255; ReLU's gradient times the STE mask
    mask = np_ste_mask(np.maximum(x, 0), np.array([-6.0], F32), np.array([6.0], F32))
    np.testing.assert_array_equal(grad, mask * (x > 0))


# -- layers -------------------------------------------------------------------------------------------
def test_conv2d_quant_eval_and_train_per_channel():
    config = create_quant_config(per_channel=(True, False), symmetric=(True, False))
    w, b = normal(4, 2, 3, 3, scale=0.5), normal(4)
    net = nn.Conv2dQuant(2, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True, weight_init=Tensor(w),
                         bias_init=Tensor(b), quant_config=config)
    x = normal(2, 2, 7, 7)
    six = np.full(4, 6.0, F32)
    wq = np_fake_quant(w, -six, six, symmetric=True, axis=0)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), t_conv(x, wq, b, 2, 1), rtol=1e-4, atol=1e-5)
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    mn, mx = np_observe(w, None, None, axis=0)
    wq = np_fake_quant(w, mn, mx, symmetric=True, axis=0)
    np.testing.assert_allclose(out, t_conv(x, wq, b, 2, 1), rtol=1e-4, atol=1e-5)


def test_dense_quant_with_activation():
    w = normal(5, 3)
    net = nn.DenseQuant(3, 5, weight_init=Tensor(w), has_bias=False, activation="relu")
    x = normal(4, 3)
    ref = np.maximum(x @ np_fake_quant(w, [-6.0], [6.0]).T, 0)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-5)


def test_add_and_mul_quant_train_with_ema_observers():
    x1, x2 = normal(3, 4, scale=3), normal(3, 4)
    add, mul = nn.TensorAddQuant(ema_decay=0.5), nn.MulQuant()
    add.set_train()
    mul.set_train()
    for net, value, decay in ((add, x1 + x2, 0.5), (mul, x1 * x2, 0.999)):
        out = net(Tensor(x1), Tensor(x2)).asnumpy()
        mn, mx = np_observe(value, np.array([-6.0], F32), np.array([6.0], F32), True, decay)
        np.testing.assert_allclose(net.fake_quant_act.minq.asnumpy(), mn, rtol=1e-5)
        np.testing.assert_allclose(out, np_fake_quant(value, mn, mx), rtol=1e-5, atol=1e-5)


def test_act_quant_fake_before():
    net = nn.ActQuant(nn.ReLU6(), fake_before=True)
    x = normal(2, 6, scale=4)
    inner = np_fake_quant(x, [-6.0], [6.0])
    ref = np_fake_quant(np.clip(inner, 0, 6), [-6.0], [6.0])
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref, rtol=1e-5, atol=1e-6)
    assert net.get_origin() is net.act


BN_INIT = dict(gamma=np.array([1.5, 0.5, 2.0], F32), beta=np.array([0.1, -0.3, 0.2], F32),
               mean=np.array([0.2, -0.1, 0.4], F32), var=np.array([1.2, 0.6, 2.0], F32))


def _bn_kwargs():
    return dict(gamma_init=Tensor(BN_INIT["gamma"]), beta_init=Tensor(BN_INIT["beta"]),
                mean_init=Tensor(BN_INIT["mean"]), var_init=Tensor(BN_INIT["var"]))


def _batch_stats(y):
    mean = y.mean(axis=(0, 2, 3))
    var = y.var(axis=(0, 2, 3))
    count = y.size // y.shape[1]
    return mean, var, var * count / (count - 1)


def _per_c(v):
    return v.reshape(1, -1, 1, 1)


def test_conv2d_bn_fold_quant_train_eval_and_freeze():
    w, x, eps, mom = normal(3, 2, 3, 3, scale=0.4), normal(4, 2, 6, 6), 1e-5, 0.9
    g, beta, mm, mv = BN_INIT["gamma"], BN_INIT["beta"], BN_INIT["mean"], BN_INIT["var"]
    net = nn.Conv2dBnFoldQuant(2, 3, 3, pad_mode="valid", momentum=mom, weight_init=Tensor(w), freeze_bn=1,
                               **_bn_kwargs())
    rstd = np.sqrt(mv + eps)
    folded = w * (g / rstd).reshape(-1, 1, 1, 1)
    # inference: running statistics folded into the weight and a bias
    ref = t_conv(x, np_fake_quant(folded, [-6.0], [6.0])) + _per_c(beta - g * mm / rstd)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), ref, rtol=1e-4, atol=1e-4)
    # training step 0: corrected to the batch statistics, moving statistics updated
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    bmean, bvar, unbiased = _batch_stats(t_conv(x, w))
    bstd = np.sqrt(bvar + eps)
    mn, mx = np_observe(folded, None, None)
    conv_q = t_conv(x, np_fake_quant(folded, mn, mx))
    ref = conv_q * _per_c(rstd / bstd) + _per_c(beta - g * bmean / bstd)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    new_mm, new_mv = mom * mm + (1 - mom) * bmean, mom * mv + (1 - mom) * unbiased
    np.testing.assert_allclose(net.moving_mean.asnumpy(), new_mm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(net.moving_variance.asnumpy(), new_mv, rtol=1e-5, atol=1e-6)
    # step 1 >= freeze_bn: the (updated) moving statistics are used and stay
    out = net(Tensor(x)).asnumpy()
    rstd = np.sqrt(new_mv + eps)
    folded = w * (g / rstd).reshape(-1, 1, 1, 1)
    mn, mx = np_observe(folded, None, None)
    ref = t_conv(x, np_fake_quant(folded, mn, mx)) + _per_c(beta - g * new_mm / rstd)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(net.moving_mean.asnumpy(), new_mm, rtol=1e-5, atol=1e-6)
    assert int(net.step.asnumpy()[0]) == 2


def test_conv2d_bn_fold_quant_one_conv_train_and_eval():
    w, x, eps = normal(3, 2, 3, 3, scale=0.4), normal(4, 2, 6, 6), 1e-3
    g, beta, mm, mv = BN_INIT["gamma"], BN_INIT["beta"], BN_INIT["mean"], BN_INIT["var"]
    config = create_quant_config(per_channel=(True, False))
    net = nn.Conv2dBnFoldQuantOneConv(2, 3, 3, pad_mode="same", eps=eps, weight_init=Tensor(w), quant_config=config,
                                      **_bn_kwargs())
    rstd = np.sqrt(mv + eps)
    sf = g / rstd
    folded = w * sf.reshape(-1, 1, 1, 1)
    six = np.full(3, 6.0, F32)
    conv = t_conv(x, np_fake_quant(folded, -six, six, axis=0), padding=1)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), conv + _per_c(beta - g * mm / rstd), rtol=1e-4, atol=1e-4)
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    mn, mx = np_observe(folded, None, None, axis=0)
    conv_orig = t_conv(x, np_fake_quant(folded, mn, mx, axis=0), padding=1) / _per_c(sf)
    bmean, bvar, unbiased = _batch_stats(conv_orig)
    ref = (conv_orig - _per_c(bmean)) / _per_c(np.sqrt(bvar + eps)) * _per_c(g) + _per_c(beta)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(net.moving_variance.asnumpy(), 0.997 * mv + 0.003 * unbiased, rtol=1e-5)


def test_conv2d_bn_without_fold_quant_train_and_eval():
    w, x, eps = normal(3, 2, 2, 2, scale=0.4), normal(4, 2, 5, 5), 1e-5
    net = nn.Conv2dBnWithoutFoldQuant(2, 3, 2, pad_mode="valid", has_bias=True, momentum=0.9, weight_init=Tensor(w),
                                      bias_init=Tensor(BN_INIT["beta"]))
    b = BN_INIT["beta"]
    conv = t_conv(x, np_fake_quant(w, [-6.0], [6.0]), b)
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), conv / np.sqrt(1 + eps), rtol=1e-4, atol=1e-5)
    net.set_train()
    out = net(Tensor(x)).asnumpy()
    mn, mx = np_observe(w, None, None)
    conv = t_conv(x, np_fake_quant(w, mn, mx), b)
    bmean, bvar, unbiased = _batch_stats(conv)
    np.testing.assert_allclose(out, (conv - _per_c(bmean)) / _per_c(np.sqrt(bvar + eps)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(net.batchnorm.moving_mean.asnumpy(), 0.1 * bmean, rtol=1e-5, atol=1e-6)


# -- the documented examples (MindSpore's outputs came from Ascend float16: rtol 1e-3) ---------------------
CONV_EXPECTED = np.array([[[[5.9296875, 13.8359375], [11.859375, 17.78125]]]], F32)
SEED_X = np.array([[[[1, 0, 3], [1, 4, 7], [2, 5, 2]]]], F32)


@pytest.mark.parametrize("cls", ["Conv2dQuant", "Conv2dBnFoldQuant", "Conv2dBnFoldQuantOneConv",
                                 "Conv2dBnWithoutFoldQuant"])
def test_seed_conv_examples(cls):
    net = getattr(nn, cls)(1, 1, kernel_size=(2, 2), stride=(1, 1), pad_mode="valid", weight_init="ones",
                           quant_config=create_quant_config())
    np.testing.assert_allclose(net(Tensor(SEED_X)).asnumpy(), CONV_EXPECTED, rtol=1e-3)


def test_seed_elementwise_examples():
    x = np.array([[1, 2, 1], [-2, 0, -1]], F32)
    np.testing.assert_allclose(nn.FakeQuantWithMinMaxObserver()(Tensor(x)).asnumpy(),
                               [[0.9882355, 1.9764705, 0.9882355], [-1.9764705, 0, -0.9882355]], rtol=1e-5, atol=1e-6)
    qconfig = create_quant_config()
    act = nn.ActQuant(nn.ReLU(), quant_config=qconfig)(Tensor(np.array([[1, 2, -1], [-2, 0, -1]], F32)))
    np.testing.assert_allclose(act.asnumpy(), [[0.9882355, 1.9764705, 0], [0, 0, 0]], rtol=1e-5, atol=1e-6)
    add = nn.TensorAddQuant(quant_config=qconfig)(Tensor(x), Tensor(np.ones((2, 3), F32)))
    np.testing.assert_allclose(add.asnumpy(), [[1.9764705, 3.011765, 1.9764705], [-0.9882355, 0.9882355, 0]],
                               rtol=1e-5, atol=1e-6)
    mul = nn.MulQuant(quant_config=qconfig)(Tensor(x), Tensor(np.ones((2, 3), F32) * 2))
    np.testing.assert_allclose(mul.asnumpy(), [[1.9764705, 4.0000005, 1.9764705], [-4, 0, -1.9764705]],
                               rtol=1e-5, atol=1e-6)
    dense = nn.DenseQuant(2, 1, weight_init="ones", quant_config=qconfig)
    assert dense(Tensor(np.array([[1, 5], [3, 4]], F32))).shape == (2, 1)


def test_parameters_and_repr():
    net = nn.Conv2dBnFoldQuant(1, 6, kernel_size=(2, 2), pad_mode="valid")
    names = [p.name for p in net.get_parameters()]
    for name in ("weight", "gamma", "beta", "moving_mean", "moving_variance", "fake_quant_weight.minq",
                 "fake_quant_weight.maxq"):
        assert name in names
    assert [p.name for p in net.trainable_params()] == ["weight", "gamma", "beta"]
    assert "freeze_bn=100000" in repr(net) and "quant_delay=0" in repr(net)
    fq = nn.FakeQuantWithMinMaxObserver(per_channel=True, num_channels=3)
    assert fq.minq.shape == (3,) and "per_channel=True(1, 3)" in fq.extend_repr()
    assert nn.ActQuant(nn.ReLU()).fake_quant_act.quant_dtype is QuantDtype.INT8


# -- invalid arguments ---------------------------------------------------------------------------------
@pytest.mark.parametrize("make, error", [
    (lambda: nn.FakeQuantWithMinMaxObserver(min_init=1, max_init=1), ValueError),
    (lambda: nn.FakeQuantWithMinMaxObserver(min_init="a"), TypeError),
    (lambda: nn.FakeQuantWithMinMaxObserver(quant_delay=-1), ValueError),
    (lambda: nn.FakeQuantWithMinMaxObserver(quant_delay=1.5), TypeError),
    (lambda: nn.FakeQuantWithMinMaxObserver(mode="OTHER"), ValueError),
    (lambda: nn.FakeQuantWithMinMaxObserver(mode="LEARNED_SCALE"), ValueError),
    (lambda: nn.FakeQuantWithMinMaxObserver(mode="LEARNED_SCALE", symmetric=True, narrow_range=True),
     NotImplementedError),
    (lambda: nn.FakeQuantWithMinMaxObserver(per_channel=True, num_channels=2, min_init=[-1.0]), ValueError),
    (lambda: nn.FakeQuantWithMinMaxObserver().reset(), ValueError),
    (lambda: nn.ActQuant("relu"), TypeError),
    (lambda: nn.ActQuant(nn.ReLU(), fake_before=1), TypeError),
    (lambda: nn.Conv2dQuant(0, 2, 3), ValueError),
    (lambda: nn.Conv2dQuant(2, 2, 3, pad_mode="full"), ValueError),
    (lambda: nn.Conv2dQuant(2, 2, 3, quant_config=None), TypeError),
    (lambda: nn.Conv2dBnFoldQuant(2, 2, 3, freeze_bn=-1), ValueError),
    (lambda: nn.Conv2dBnFoldQuant(2, 2, 3, fake=1), TypeError),
    (lambda: nn.Conv2dBnFoldQuantOneConv(2, 2, 3, momentum=1.5), ValueError),
    (lambda: nn.DenseQuant(2, 2, has_bias=1), TypeError),
    (lambda: nn.DenseQuant(2, 2, activation=3), TypeError),
    (lambda: nn.DenseQuant(2, 3, weight_init=Tensor(np.ones((2, 3), F32))), ValueError),
    (lambda: nn.MulQuant(quant_dtype="INT8"), TypeError),
])
def test_invalid_arguments(make, error):
    with pytest.raises(error):
        make()


def test_fake_quant_op_rejects_mismatched_ranges():
    with pytest.raises(ValueError):
        ops.fake_quant(Tensor(X4), Tensor(np.zeros(2, F32)), Tensor(np.ones(2, F32)))
    with pytest.raises(ValueError):
        ops.fake_quant(Tensor(X4), Tensor(np.zeros(2, F32)), Tensor(np.ones(2, F32)), channel_axis=1)
    with pytest.raises(TypeError):
        ops.fake_quant(Tensor(X4.astype(np.int32)), Tensor(np.zeros(1, F32)), Tensor(np.ones(1, F32)))
