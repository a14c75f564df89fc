"""Merged convolution kernels whose epilogue reads the result twice (Swish/SiLU ``x * sigmoid(x)``,
HSwish ``x * relu6(x + 3) / 6``: EfficientNet's and MobileNetV3's activations) against PyTorch, and
which rule schedules them: the merged-block rules, not a generic one (a Swish expansion/depthwise
pair fell to a row-reduction schedule, EfficientNet-B0 at 848 ms)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, ops
from default_schedule_helpers import assert_close, batch_norm, randomize, t, torch_params
from test_default_inverted_residual import InvertedResidual, kernel_rules

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


def swish(x):
    return x * ops.sigmoid(x)


def hswish(x):
    return x * ops.clip_by_value(x + 3.0, 0.0, 6.0) / 6.0


ACTIVATIONS = {"swish": (swish, F.silu), "hswish": (hswish, F.hardswish)}


class ActivatedResidual(InvertedResidual):
    """InvertedResidual with ``act`` after the expansion and the depthwise convolution."""

    def __init__(self, act, *args):
        super().__init__(*args)
        self.act = act

    def construct(self, x):
        x = self.stem(x)
        e = self.act(self.bn0(self.expand(x)))
        z = self.act(self.bn1(self.depthwise(e)))
        y = self.bn2(self.project(z))
        return y + x if self.residual else y


def reference(net, x, act, stride):
    p = torch_params(net)
    expanded = p["depthwise.weight"].shape[0]
    s = F.conv2d(t(x), p["stem.weight"], None, 1, 1)
    e = act(batch_norm(F.conv2d(s, p["expand.weight"]), p, "bn0"))
    z = act(batch_norm(F.conv2d(e, p["depthwise.weight"], None, stride, 1, 1, expanded), p, "bn1"))
    y = batch_norm(F.conv2d(z, p["project.weight"]), p, "bn2")
    return y + s if net.residual else y


@pytest.mark.parametrize("activation", list(ACTIVATIONS))
def test_expansion_and_depthwise_with_a_dag_epilogue_stay_merged(activation):
    ours, theirs = ACTIVATIONS[activation]
    # MobileNetV2's 7x7 block shape: the expansion tiled flat, merged with its depthwise convolution
    net = randomize(ActivatedResidual(ours, 160, 960, 160, 1), seed=7)
    net.set_train(False)
    x = np.random.default_rng(5).standard_normal((1, 3, 7, 7)).astype(np.float32)
    with torch.no_grad():
        want = reference(net, x, theirs, 1)
    assert_close(net(Tensor(x)), want)
    rules = kernel_rules(net, x)
    merged = [name for name, rule in rules.items() if "conv2d" in name and "dwconv2d" in name]
    assert merged and all(rules[name] == "expand_depthwise" for name in merged), rules
