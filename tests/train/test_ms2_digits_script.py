"""The issue's MindSpore 2.x digits script, run unmodified through the ``mindspore`` aliases.

A LeNet5 written against ``mindspore.nn`` with every initializer left at its default, trained with
``nn.Momentum(learning_rate=0.01, momentum=0.9)`` and ``SoftmaxCrossEntropyWithLogits(sparse=True,
reduction='mean')`` by ``mindspore.train.Model`` for 15 epochs on scikit-learn's digits upscaled to 32x32,
reaches at least 95% held-out accuracy (MindSpore 2.10 reaches it too; 1.x's Normal(0.01) defaults stay at
chance). The accuracy is computed by numpy from the network's predictions.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tools.script_loader import loaded_script

EPOCHS = 15
BATCH = 32


@pytest.fixture(scope="module")
def data():
    yield from loaded_script("digits_data")



def _lenet5(nn):
    """LeNet5 as a MindSpore 2.x user writes it: no weight_init, no bias_init anywhere."""

    class LeNet5(nn.Cell):
        def __init__(self, num_class: int = 10, num_channel: int = 1):
            super().__init__()
            self.conv1 = nn.Conv2d(num_channel, 6, 5, pad_mode="valid")
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
            self.fc1 = nn.Dense(16 * 5 * 5, 120)
            self.fc2 = nn.Dense(120, 84)
            self.fc3 = nn.Dense(84, num_class)
            self.relu = nn.ReLU()
            self.max_pool2d = nn.MaxPool2d(kernel_size=2, stride=2)
            self.flatten = nn.Flatten()

        def construct(self, x):
            x = self.max_pool2d(self.relu(self.conv1(x)))
            x = self.max_pool2d(self.relu(self.conv2(x)))
            x = self.flatten(x)
            x = self.relu(self.fc1(x))
            x = self.relu(self.fc2(x))
            return self.fc3(x)

    return LeNet5()


def test_default_initialized_lenet5_script_reaches_95_percent(ms, data):
    from mindspore import nn
    from mindspore.train import Model

    images, labels = data.digits()
    train, test = data.split(len(labels))
    ms.set_seed(0)
    net = _lenet5(nn)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
    model = Model(net, loss, optimizer, metrics={"accuracy"})
    model.train(EPOCHS, data.ShuffledBatches(images[train], labels[train], BATCH, seed=1))

    logits = model.predict(ms.Tensor(images[test])).asnumpy()
    assert logits.shape == (len(test), 10)
    accuracy = float(np.mean(np.argmax(logits, axis=1) == labels[test]))
    assert accuracy >= 0.95, f"held-out accuracy {accuracy:.3f}"
    assert model.eval([(ms.Tensor(images[test]), ms.Tensor(labels[test]))])["accuracy"] == pytest.approx(accuracy)
