"""Three training steps of mindcv models, built and fed the same way on MindSpore and on aotnn.

Shared by tools/mindcv_train_fixtures.py (MindSpore 2.10 side) and tests/models/test_mindcv_training.py
(aotnn side through the ``mindspore`` aliases). Weights come from :mod:`mindcv_weights` by name, batches
from a seeded numpy generator; the step is ``nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)`` with
``nn.Momentum(lr=0.001, momentum=0.9)`` and ``SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')``,
BatchNorm in training mode. numpy only at import time.
"""
import numpy as np

SEED = 20261129
BATCH = 4
STEPS = 3
NUM_CLASSES = 10
#: at 0.01 resnet18's third step is chaotic: MindSpore 2.10 itself moves its loss by 4e-4 and parameter
#: changes by 1.7% when the weights move by 1e-7 relative; at 0.001 by 1e-6 and 0.2%
LEARNING_RATE = 0.001

#: case name -> input height and width (the network is made by :func:`build`)
CASES = {
    "resnet18@64": 64,
    "vit_tiny@32": 32,
}


def build(mindcv, case: str):
    """The network of ``case`` (mindcv's own classes, pretrained=False)."""
    if case == "resnet18@64":
        return mindcv.create_model("resnet18", pretrained=False, num_classes=NUM_CLASSES)
    if case == "vit_tiny@32":
        from mindcv.models.vit import VisionTransformer
        return VisionTransformer(image_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2,
                                 num_classes=NUM_CLASSES)
    raise ValueError(f"case: expected one of {sorted(CASES)}, got {case!r}")


def batches(case: str) -> list:
    """``STEPS`` seeded (images, int32 labels) pairs for ``case``."""
    size = CASES[case]
    rng = np.random.default_rng(SEED)
    return [(rng.standard_normal((BATCH, 3, size, size)).astype(np.float32),
             rng.integers(0, NUM_CLASSES, BATCH).astype(np.int32)) for _ in range(STEPS)]


def tracked(keys: list) -> list:
    """The parameter keys whose full values the fixtures keep: the first three and the last three
    (stem, head) and the first two BatchNorm moving statistics, if any."""
    chosen = list(keys[:3]) + list(keys[-3:])
    chosen += [k for k in keys if k.endswith(("moving_mean", "moving_variance"))][:2]
    return list(dict.fromkeys(chosen))


def train(ms, net, case: str) -> tuple:
    """Run the steps with the ``mindspore`` module ``ms`` (real or aliased); returns (losses, {key: change})
    with each parameter's change over the steps (after minus before), which the initial weights don't swamp."""
    nn = ms.nn
    before = {key: p.asnumpy().copy() for key, p in net.parameters_and_names()}
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=LEARNING_RATE, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train(True)
    losses = [float(step(ms.Tensor(x), ms.Tensor(y)).asnumpy()) for x, y in batches(case)]
    changes = {key: p.asnumpy().astype(np.float64) - before[key] for key, p in net.parameters_and_names()}
    return np.array(losses, np.float64), changes
