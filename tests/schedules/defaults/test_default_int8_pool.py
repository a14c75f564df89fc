"""int8/uint8 pooling and the int8 add take op-class schedules (not the generic fallback) on NHWC maps."""
from __future__ import annotations

import pytest

from aotnn import nn, ops

from default_schedule_helpers import rules_used


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("make", [lambda: nn.MaxPool2d(3, 2, pad_mode="same", data_format="NHWC"),
                                  lambda: nn.AvgPool2d(2, 2, data_format="NHWC")], ids=["max", "avg"])
def test_nhwc_8_bit_pools_take_the_reduction_rule(dtype, make):
    rules = rules_used(lambda v: make()(v), [("x", (1, 14, 14, 32), dtype)])
    pools = {name: rule for name, rule in rules.items() if "pool" in name}
    assert pools and set(pools.values()) == {"reduction"}, rules


def test_int8_add_is_one_element_wise_kernel():
    rules = rules_used(lambda a, b: ops.int8_add(a, b, 0.5, 0.25, 3, -2, 1),
                       [("a", (1, 14, 14, 32), "int8"), ("b", (1, 14, 14, 32), "int8")])
    assert list(rules.values()) == ["elementwise"], rules
