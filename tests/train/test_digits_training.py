"""End to end: LeNet5 learns scikit-learn's handwritten digits through ``Model.train`` / ``Model.eval``.

Every step is one compiled graph (forward, loss, gradients, Momentum update); the held-out
accuracy is checked by numpy on the network's own predictions as well as by the metric. The MindSpore 2.x
script with default initializers (15 epochs, through the ``mindspore`` aliases) is test_ms2_digits_script.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn
from aotnn.common.initializer import HeUniform, initializer
from aotnn.models import LeNet5
from aotnn.train import Callback, Model
from tests.tools.script_loader import loaded_script

BATCH = 32
EPOCHS = 8


@pytest.fixture(scope="module")
def data():
    yield from loaded_script("digits_data")


class EpochLoss(Callback):
    """The mean training loss of each epoch."""

    def __init__(self):
        self.means: list[float] = []
        self._losses: list[float] = []

    def on_train_step_end(self, run_context) -> None:
        self._losses.append(float(run_context.original_args().net_outputs.asnumpy()))

    def on_train_epoch_end(self, run_context) -> None:
        self.means.append(float(np.mean(self._losses)))
        self._losses = []


def test_lenet5_learns_digits_to_95_percent(data):
    images, labels = data.digits()
    train, test = data.split(len(labels))

    aotnn.set_seed(0)
    net = LeNet5(num_class=10, num_channel=1)
    # The zoo keeps MindSpore 1.x's Normal(0.01) default weights, which leave a 5-layer net at
    # chance for many epochs; start from MindSpore 2.x's default (HeUniform) instead.
    for param in net.trainable_params():
        if param.name.endswith("weight"):
            param.set_data(initializer(HeUniform(), param.shape))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    model = Model(net, loss, optimizer, metrics={"acc"})

    history = EpochLoss()
    model.train(EPOCHS, data.ShuffledBatches(images[train], labels[train], BATCH, seed=1), callbacks=history)

    assert len(history.means) == EPOCHS
    assert history.means[0] < 2.2 and history.means[-1] < 0.25 * history.means[0], history.means
    held_out = [(Tensor(images[test]), Tensor(labels[test]))]
    metric_accuracy = model.eval(held_out)["acc"]
    logits = model.predict(Tensor(images[test])).asnumpy()
    assert logits.shape == (len(test), 10)
    accuracy = float(np.mean(np.argmax(logits, axis=1) == labels[test]))
    assert accuracy >= 0.95, f"held-out accuracy {accuracy:.3f} (epoch losses {history.means})"
    assert metric_accuracy == pytest.approx(accuracy, abs=1e-12)

