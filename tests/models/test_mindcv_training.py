"""Three training steps of mindcv models on aotnn (through the ``mindspore`` aliases) match MindSpore 2.10.

mindcv's resnet18 (10 classes, 64x64 input, BatchNorm in training mode) and a two-block ViT from mindcv's
``VisionTransformer`` (32x32, patch 8, width 32) take the steps of tests/models/mindcv_training.py
(``TrainOneStepCell(WithLossCell(net, SoftmaxCrossEntropyWithLogits(sparse, mean)), Momentum(0.01, 0.9))``,
batch 4) from weights set by name; the losses, every parameter's change (sum, sum of squares) and the full
change of a few parameters match fixtures from tools/mindcv_train_fixtures.py.
"""
import importlib.util
import os

import numpy as np
import pytest

if importlib.util.find_spec("mindcv") is None:  # importing it needs the aliases: only look it up here
    pytest.skip("mindcv is not installed", allow_module_level=True)


from . import mindcv_training, mindcv_weights  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "mindcv_train")



@pytest.mark.parametrize("case", sorted(mindcv_training.CASES))
def test_three_steps_match_mindspore(ms, case):
    import mindcv
    fixture = np.load(os.path.join(FIXTURES, f"{case}.npz"))
    ms.set_seed(0)
    net = mindcv_training.build(mindcv, case)
    mindcv_weights.set_weights(net)
    losses, changes = mindcv_training.train(ms, net, case)

    np.testing.assert_allclose(losses, fixture["losses"], rtol=1e-4, atol=1e-5)
    keys = fixture["keys"].tolist()
    assert list(changes) == keys
    squares = np.array([np.square(changes[k]).sum() for k in keys])
    sums = np.array([changes[k].sum() for k in keys])
    np.testing.assert_allclose(squares, fixture["squares"], rtol=2e-3, atol=1e-12)
    sizes = np.array([changes[k].size for k in keys])
    # a sum can cancel to ~0: bound its error by the change's L2 norm (Cauchy-Schwarz), not by itself
    sum_tolerance = 1e-3 * np.sqrt(fixture["squares"] * sizes) + 1e-9
    assert np.all(np.abs(sums - fixture["sums"]) <= sum_tolerance), [
        (k, s, r) for k, s, r, t in zip(keys, sums, fixture["sums"], sum_tolerance) if abs(s - r) > t]
    tracked = [name[len("change:"):] for name in fixture.files if name.startswith("change:")]
    assert tracked == mindcv_training.tracked(keys)
    for key in tracked:
        expected = fixture[f"change:{key}"]
        np.testing.assert_allclose(changes[key], expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max() + 1e-9,
                                   err_msg=key)
