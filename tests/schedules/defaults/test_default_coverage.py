"""The build names every kernel left on the generic fallback (a warning with its shapes, the
manifest's ``kernel_rules``, the line ``aotnn compile`` prints), and is silent for a model every
kernel of which an op-class rule schedules."""
import json
import logging

import numpy as np
import pytest
import torch.nn.functional as F

import aotnn
from aotnn import Tensor, nn
from aotnn.cli.compile_cmd import fallback_report
from default_schedule_helpers import assert_close, randomize, t, torch_params
from schedules.build import KERNEL_RULES_KEY

pytestmark = pytest.mark.usefixtures("cpu_target")


class Conv3dNet(nn.Cell):
    """A 3-D convolution: no op-class rule covers it (the generic fallback schedules it)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, pad_mode="valid")

    def construct(self, x):
        return self.conv(x)


def _build(net, x, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="schedules.defaults"):
        path = aotnn.export(net, Tensor(x), file_name=str(tmp_path / "model"), file_format="AOT")
    with open(f"{path}/manifest.json", encoding="utf-8") as stream:
        rules = json.load(stream)["metadata"][KERNEL_RULES_KEY]
    warnings = [r.getMessage() for r in caplog.records if "generic fallback" in r.getMessage()]
    return path, rules, warnings


def test_a_kernel_on_the_fallback_is_named(tmp_path, caplog):
    net = randomize(Conv3dNet(), seed=1)
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 6, 7)).astype(np.float32)
    path, rules, warnings = _build(net, x, tmp_path, caplog)
    p = torch_params(net)
    want = F.conv3d(t(x), p["conv.weight"], p.get("conv.bias"))
    import aotnn_runtime
    assert_close(aotnn_runtime.load(path).run(x)[0], want)
    generic = [name for name, rule in rules.items() if rule in ("fallback", None)]
    assert generic, rules
    assert len(warnings) == 1 and all(name in warnings[0] for name in generic), warnings
    assert "1x2x5x6x7" in warnings[0]  # the kernel's input shape
    line = fallback_report(path)
    assert line is not None and line.startswith(f"{len(generic)} of {len(rules)} kernels on the generic fallback")


def test_a_fully_covered_model_gets_no_warning(tmp_path, caplog):
    net = aotnn.models.lenet5()
    net.set_train(False)
    x = np.random.default_rng(0).standard_normal((1, 1, 32, 32)).astype(np.float32)
    path, rules, warnings = _build(net, x, tmp_path, caplog)
    assert rules and not any(rule in ("fallback", None) for rule in rules.values()), rules
    assert warnings == [] and fallback_report(path) is None


def test_the_row_reduction_rule_counts_as_generic_for_products_only():
    from schedules.defaults.coverage import fallback_line
    rules = {"softmax": "rows", "fused_aotnn_conv2d_sigmoid": "rows", "relu": "elementwise", "cube": "fallback"}
    assert fallback_line(rules) == "2 of 4 kernels on the generic fallback: fused_aotnn_conv2d_sigmoid, cube"
