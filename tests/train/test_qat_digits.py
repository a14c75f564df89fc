"""Quantization-aware training on scikit-learn's digits, deployed with int8 kernels, keeps the float accuracy.

The float LeNet5 and a LeNet5 of Conv2dQuant/DenseQuant/ActQuant layers train the same way
(tools/bench_quant.py); the QAT network converted to int8 kernels, and the float network quantized after
training from 320 training images (PostTrainingQuantization), must classify the held-out split within
one point of the float network, and agree on the top-1 class of at least 99% of it with the float network
each deploys.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.tools.script_loader import loaded_script

pytest.importorskip("sklearn")

EPOCHS = 5


@pytest.fixture(scope="module")
def bench_quant():
    yield from loaded_script("bench_quant")


def test_int8_lenet5_keeps_float_accuracy(bench_quant):
    result = bench_quant.train_all(EPOCHS)
    acc = result["accuracy"]
    assert acc["float"] >= 0.93, acc
    assert acc["int8"] >= acc["float"] - 0.01, acc
    assert abs(acc["int8"] - acc["qat"]) <= 0.01, acc
    from aotnn.compression.quant.export_int8 import Int8Layer

    layers = [c for _, c in result["int8"].cells_and_names() if isinstance(c, Int8Layer)]
    assert len(layers) == 5 and all(layer.weight.asnumpy().dtype == np.int8 for layer in layers)
    assert [layer.fused for layer in layers] == [False, True, True, True, False]
    assert acc["ptq"] >= acc["float"] - 0.01, acc
    # PTQ: the input's calibrated grid feeds the first layer, integers travel between all five layers
    ptq_layers = [c for _, c in result["ptq"].cells_and_names() if isinstance(c, Int8Layer)]
    assert [layer.fused for layer in ptq_layers] == [True, True, True, True, False]
    assert [layer.integer_input for layer in ptq_layers] == [False, True, True, True, True]
    # top-1 agreement on the held-out digits: each int8 network against the float network it deploys
    # (PTQ: the float LeNet5; QAT: the trained fake-quant network)
    test_x = result["test"][0]

    def top1(net):
        return np.argmax(net(bench_quant.Tensor(test_x)).asnumpy(), axis=1)

    assert np.mean(top1(result["ptq"]) == top1(result["float"])) >= 0.99
    assert np.mean(top1(result["int8"]) == top1(result["qat"])) >= 0.99
