"""Compiled gradients of convolutions, normalizations and poolings against finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import aotnn
from aotnn import Tensor, nn

from .gradcheck_util import check_gradients, normal, spread

CONVS = [
    ("Conv1d-dilated-grouped", lambda: nn.Conv1d(2, 4, 3, stride=2, pad_mode="pad", padding=2, dilation=2, group=2,
                                                 has_bias=True, bias_init="normal"), lambda: [normal(2, 2, 9)], {}),
    ("Conv1d-same", lambda: nn.Conv1d(3, 2, 4), lambda: [normal(2, 3, 7)], {}),
    ("Conv2d", lambda: nn.Conv2d(2, 3, 3, pad_mode="valid", has_bias=True, bias_init="normal"),
     lambda: [normal(2, 2, 5, 6)], {}),
    ("Conv2d-dilated", lambda: nn.Conv2d(2, 3, 3, pad_mode="pad", padding=1, dilation=2),
     lambda: [normal(1, 2, 7, 7)], {}),
    ("Conv2d-stride-dilation-group", lambda: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), pad_mode="same",
                                                       dilation=(2, 3), group=2, has_bias=True),
     lambda: [normal(2, 4, 8, 7)], {}),
    ("Conv2d-depthwise", lambda: nn.Conv2d(3, 3, 3, stride=2, pad_mode="pad", padding=(0, 1, 1, 2), group=3),
     lambda: [normal(1, 3, 6, 6)], {}),
    ("Conv2d-NHWC", lambda: nn.Conv2d(2, 3, 2, data_format="NHWC"), lambda: [normal(1, 4, 5, 2)], {}),
    ("Conv3d", lambda: nn.Conv3d(2, 4, 2, stride=(1, 2, 1), pad_mode="pad", padding=1, dilation=(2, 1, 1), group=2,
                                 has_bias=True, bias_init="normal"), lambda: [normal(1, 2, 5, 5, 4)], {}),
    ("Conv1dTranspose", lambda: nn.Conv1dTranspose(2, 4, 3, stride=2, pad_mode="pad", padding=1, dilation=2,
                                                   group=2, has_bias=True, bias_init="normal"),
     lambda: [normal(2, 2, 5)], {}),
    ("Conv2dTranspose-same", lambda: nn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="same", dilation=2, group=2),
     lambda: [normal(1, 4, 4, 3)], {}),
    ("Conv2dTranspose-valid", lambda: nn.Conv2dTranspose(2, 3, (2, 3), stride=(2, 1), pad_mode="valid",
                                                         has_bias=True, bias_init="normal"),
     lambda: [normal(1, 2, 3, 3)], {}),
    ("Conv2dTranspose-pad", lambda: nn.Conv2dTranspose(2, 2, 3, stride=2, pad_mode="pad", padding=1),
     lambda: [normal(2, 2, 3, 3)], {}),
    ("Conv2dTranspose-kernel-is-stride", lambda: nn.Conv2dTranspose(3, 2, (2, 3), stride=(2, 3), pad_mode="same",
                                                                    has_bias=True, bias_init="normal"),
     lambda: [normal(2, 3, 3, 4)], {}),
    ("Conv3dTranspose", lambda: nn.Conv3dTranspose(2, 2, 2, stride=2, pad_mode="pad", padding=1, has_bias=True,
                                                   bias_init="normal"), lambda: [normal(1, 2, 3, 3, 2)], {}),
    ("Conv2dBnAct", lambda: nn.Conv2dBnAct(2, 3, 3, has_bias=True, has_bn=True, activation="sigmoid"),
     lambda: [normal(2, 2, 4, 4)], {"train": True}),
    ("Unfold", lambda: nn.Unfold([1, 2, 2, 1], [1, 2, 1, 1], [1, 1, 2, 1], "same"), lambda: [normal(1, 2, 5, 4)],
     {}),
]

NORMS = [
    ("BatchNorm1d-train", lambda: nn.BatchNorm1d(3, gamma_init="normal", beta_init="normal"),
     lambda: [normal(5, 3)], {"train": True}),
    ("BatchNorm1d-eval", lambda: nn.BatchNorm1d(3, gamma_init="normal", moving_mean_init="normal"),
     lambda: [normal(5, 3)], {}),
    ("BatchNorm2d-train", lambda: nn.BatchNorm2d(2, gamma_init="normal", beta_init="normal"),
     lambda: [normal(2, 2, 3, 3)], {"train": True}),
    ("BatchNorm3d-train", lambda: nn.BatchNorm3d(2, gamma_init="normal"), lambda: [normal(2, 2, 2, 3, 2)],
     {"train": True}),
    ("SyncBatchNorm-train", lambda: nn.SyncBatchNorm(2, gamma_init="normal"), lambda: [normal(2, 2, 3, 3)],
     {"train": True}),
    ("GlobalBatchNorm-train", lambda: nn.GlobalBatchNorm(2, gamma_init="normal"), lambda: [normal(2, 2, 3, 3)],
     {"train": True}),
    ("LayerNorm", lambda: nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1, gamma_init="normal",
                                       beta_init="normal"), lambda: [normal(2, 3, 4)], {}),
    ("LayerNorm-last", lambda: nn.LayerNorm((4,), gamma_init="normal"), lambda: [normal(2, 3, 4)], {}),
    ("GroupNorm", lambda: nn.GroupNorm(2, 4, gamma_init="normal", beta_init="normal"),
     lambda: [normal(2, 4, 2, 3)], {}),
    ("InstanceNorm2d-train", lambda: nn.InstanceNorm2d(2, gamma_init="normal"), lambda: [normal(2, 2, 3, 3)],
     {"train": True}),
]

POOLS = [
    ("MaxPool1d", lambda: nn.MaxPool1d(3, 2), lambda: [spread(2, 2, 9)], {}),
    ("MaxPool2d", lambda: nn.MaxPool2d(2, 2), lambda: [spread(1, 2, 5, 4)], {}),
    ("MaxPool2d-same", lambda: nn.MaxPool2d(3, 2, pad_mode="same"), lambda: [spread(1, 2, 5, 5)], {}),
    ("AvgPool1d", lambda: nn.AvgPool1d(3, 2, pad_mode="same"), lambda: [normal(2, 2, 8)], {}),
    ("AvgPool2d", lambda: nn.AvgPool2d(2, 1), lambda: [normal(1, 2, 4, 5)], {}),
    ("AvgPool2d-pad", lambda: nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, count_include_pad=False),
     lambda: [normal(1, 2, 5, 5)], {}),
    ("AdaptiveAvgPool1d", lambda: nn.AdaptiveAvgPool1d(3), lambda: [normal(2, 2, 9)], {"dtype": "float32"}),
    ("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d((2, 3)), lambda: [normal(1, 2, 5, 7)], {}),
    ("AdaptiveAvgPool3d", lambda: nn.AdaptiveAvgPool3d((2, 1, 2)), lambda: [normal(1, 2, 3, 3, 5)], {}),
    ("AdaptiveMaxPool1d", lambda: nn.AdaptiveMaxPool1d(3), lambda: [spread(2, 2, 9)], {"dtype": "float32"}),
    ("AdaptiveMaxPool2d", lambda: nn.AdaptiveMaxPool2d((2, 3)), lambda: [spread(1, 2, 5, 7)], {}),
]

CASES = CONVS + NORMS + POOLS


@pytest.mark.parametrize("make_net, make_inputs, options", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_layer_gradients_match_finite_differences(make_net, make_inputs, options):
    aotnn.set_seed(11)  # parameter initializers draw from the global seed
    check_gradients(make_net(), make_inputs(), **options)


def test_compiled_training_step_updates_every_parameter_and_lowers_the_loss():
    aotnn.set_seed(5)
    # one compiled step (forward, our gradient rules, SGD) through layers TVM cannot differentiate alone
    net = nn.SequentialCell([
        nn.Conv2d(2, 4, 3, dilation=2, group=2, has_bias=True), nn.BatchNorm2d(4), nn.ReLU(),
        nn.Conv2dTranspose(4, 2, 2, stride=2, dilation=1, has_bias=True), nn.GroupNorm(1, 2), nn.Tanh(),
        nn.Flatten(),
        nn.Dense(2 * 10 * 10, 3),
    ])
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params(), 0.05))
    step.set_train()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 2, 5, 5)).astype(np.float32)
    t = rng.standard_normal((4, 3)).astype(np.float32)
    before = {p.name: p.asnumpy().copy() for p in net.trainable_params()}
    losses = [float(step(Tensor(x), Tensor(t)).asnumpy()) for _ in range(5)]
    assert losses[-1] < losses[0]
    for p in net.trainable_params():
        if p.name == "0.bias":  # a bias before a training-mode batch norm: the batch mean takes it out,
            np.testing.assert_allclose(p.asnumpy(), before[p.name], atol=1e-5)  # its gradient is 0
            continue
        assert not np.allclose(p.asnumpy(), before[p.name]), f"{p.name} was not trained"
