"""Explicit padding (``nn.Pad``, lowered as spatial concatenations) stays channels-last
(layout.concat_rule), with a "valid" max pool after it, a channel concatenation and an
``AvgPool2d`` + ``Flatten`` head, against PyTorch: the pool is scheduled by the reduction rule,
not the generic fallback, and no kernel lands on the fallback."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from default_schedule_helpers import assert_close, randomize, rules_used, t, torch_params

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


class PadPoolConcat(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, pad_mode="pad", padding=1)
        self.pad = nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1)))
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="valid")
        self.left = nn.Conv2d(16, 16, 1)
        self.right = nn.Conv2d(16, 8, 3, pad_mode="same")
        self.avg = nn.AvgPool2d(kernel_size=8)
        self.flatten = nn.Flatten()

    def construct(self, x):
        y = self.pool(self.pad(ops.relu(self.stem(x))))
        z = ops.concat((ops.relu(self.left(y)), ops.relu(self.right(y))), 1)
        return self.flatten(self.avg(z))


def reference(net, x):
    p = torch_params(net)
    y = F.max_pool2d(F.pad(F.relu(F.conv2d(t(x), p["stem.weight"], None, 1, 1)), (1, 1, 1, 1)), 3, 2)
    z = torch.cat([F.relu(F.conv2d(y, p["left.weight"])), F.relu(F.conv2d(y, p["right.weight"], None, 1, 1))], 1)
    return torch.flatten(F.avg_pool2d(z, 8), 1)


def test_padding_pool_concat_head_match_torch_and_avoid_the_fallback():
    net = randomize(PadPoolConcat(), seed=4)
    net.set_train(False)
    x = np.random.default_rng(6).standard_normal((1, 3, 16, 16)).astype(np.float32)
    with torch.no_grad():
        want = reference(net, x)
    assert_close(net(Tensor(x)), want)
    rules = rules_used(lambda v: net(v), [("x", x.shape, "float32")])
    assert not [name for name, rule in rules.items() if rule in ("fallback", None)], rules
    pools = [name for name in rules if "max_pool2d" in name]
    assert pools and all(rules[name] == "reduction" for name in pools), rules
