"""A BatchNorm training step against MindSpore 2.10: a Conv2d+BatchNorm2d+ReLU+Dense net in a TrainOneStepCell
(Momentum and SGD), 3 steps from the same weights and data: the loss, every parameter, moving_mean and
moving_variance after each step; and with the BatchNorm applied twice per step (its moving statistics
update twice, the second update starting from the first's result).

Fixtures: tools/ms_numeric_fixtures.py (``bn_step_fixture``) run under MindSpore 2.10.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from aotnn import Tensor, nn

DATA = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "ms_bn_step.npz"))


class ConvBnDense(nn.Cell):
    """The fixture's net: Conv2d(3->5, 3x3, 'same', no bias) -> BatchNorm2d(5) [-> the same BatchNorm2d]
    -> ReLU -> Flatten -> Dense."""

    def __init__(self, twice=False):
        super().__init__()
        self.twice = twice
        init = lambda name: Tensor(DATA[f"init.{name}"])
        self.conv = nn.Conv2d(3, 5, 3, pad_mode="same", has_bias=False, weight_init=init("conv.weight"))
        self.bn = nn.BatchNorm2d(5, momentum=0.9, gamma_init=init("bn.gamma"), beta_init=init("bn.beta"),
                                 moving_mean_init="zeros", moving_var_init="ones")
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(180, 3, weight_init=init("fc.weight"), bias_init=init("fc.bias"))

    def construct(self, x):
        h = self.bn(self.conv(x))
        if self.twice:
            h = self.bn(h)
        return self.fc(self.flatten(self.relu(h)))


@pytest.mark.parametrize("opt_name", ["momentum", "sgd", "momentum_bn_twice"])
def test_batchnorm_training_steps_match_mindspore(opt_name):
    net = ConvBnDense(twice=opt_name.endswith("twice"))
    params = net.trainable_params()
    opt = nn.SGD(params, 0.1) if opt_name == "sgd" else nn.Momentum(params, 0.1, 0.9)
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), opt)
    train.set_train()
    names = [name for name, _ in net.parameters_and_names()]
    assert {"bn.moving_mean", "bn.moving_variance", "bn.beta"} <= set(names)
    for step in range(3):
        loss = float(train(Tensor(DATA["x"]), Tensor(DATA["y"])).asnumpy())
        np.testing.assert_allclose(loss, DATA[f"{opt_name}.loss"][step], rtol=1e-5, err_msg=f"step {step}")
        for name, param in net.parameters_and_names():
            np.testing.assert_allclose(param.asnumpy(), DATA[f"{opt_name}.step{step}.{name}"], rtol=1e-5,
                                       atol=1e-6, err_msg=f"step {step}, {name}")
