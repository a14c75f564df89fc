"""Deep convolutions over small maps prefetch the next weight block (schedules/defaults/weight_prefetch.py)."""
import numpy as np
import pytest
import torch.nn.functional as F

from aotnn import Tensor, nn, ops
from aotnn.jit.compiled import capture_function
from default_schedule_helpers import assert_close, randomize, t
from schedules import pipeline, target as targets
from schedules.build import _kernel_module
import schedules.defaults as defaults

pytestmark = pytest.mark.usefixtures("cpu_target")  # rules depend on the ISA: pinned, both run


class Project(nn.Cell):
    """A 3x3 convolution, then a 1x1 one on its channels-last result (the second one is the subject)."""

    def __init__(self, cin, cout):
        super().__init__()
        self.first = nn.Conv2d(cin, cin, 3, pad_mode="pad", padding=1, has_bias=True)
        self.second = nn.Conv2d(cin, cout, 1, has_bias=True)

    def construct(self, x):
        return ops.relu(self.second(self.first(x)))


def _scheduled_1x1(net, shape):
    """(TVMScript, rule) of the kernel whose packed weight is [blocks, 1, 1, in channels, lanes]."""
    mod, _, _, _ = capture_function(lambda v: net(v), [("x", shape, "float32")])
    target = targets.to_tvm(targets.resolve(None))
    kernels = _kernel_module(pipeline.lower_to_kernels(mod, target))
    cpu = defaults.cpu_info(target)
    one_by_one = f"T.int64(1), T.int64(1), T.int64({shape[1]}), T.int64("
    for gv, func in kernels.functions.items():
        if "pack" not in gv.name_hint and one_by_one in func.script():
            scheduled, rule = defaults.schedule_with_rule(func, cpu, target)
            return scheduled.script(), rule
    raise AssertionError("no 1x1 convolution kernel")


@pytest.mark.parametrize("size, prefetches", [(7, True), (28, False)], ids=["7x7_map", "28x28_map"])
def test_only_one_task_per_weight_block_kernels_prefetch_and_results_hold(size, prefetches):
    cin, cout = 64, 256
    net = randomize(Project(cin, cout))
    x = np.random.default_rng(2).standard_normal((1, cin, size, size)).astype(np.float32)
    p = {name: t(param.asnumpy()) for name, param in net.parameters_and_names()}
    want = F.relu(F.conv2d(F.conv2d(t(x), p["first.weight"], p["first.bias"], 1, 1), p["second.weight"], p["second.bias"]))
    assert_close(net(Tensor(x)), want)
    text, rule = _scheduled_1x1(net, x.shape)
    assert rule == "conv2d"
    assert ("T.prefetch" in text) == prefetches
