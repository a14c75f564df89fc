"""Parameter names follow MindSpore 2.10's rules (fixture recorded on MindSpore by
tools/mindspore_param_names.py from the networks in naming_scenarios.py)."""
import json
import os

import pytest

from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases

from . import naming_scenarios

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "mindspore_param_names.json")
with open(FIXTURE) as _f:
    EXPECTED = json.load(_f)["scenarios"]


@pytest.fixture(scope="module")
def built():
    install_mindspore_aliases()
    try:
        yield {name: build() for name, build in naming_scenarios.scenarios().items()}
    finally:
        uninstall_mindspore_aliases()


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_names_match_mindspore(built, scenario):
    assert naming_scenarios.names_of(built[scenario]) == EXPECTED[scenario]


def test_duplicate_names_become_paths_on_first_call():
    import numpy as np
    from aotnn import Tensor, nn

    class Twice(nn.Cell):
        def __init__(self):
            super().__init__()
            self.insert_child_to_cell("a", nn.Dense(2, 2))
            self.insert_child_to_cell("b", nn.Dense(2, 2))

        def construct(self, x):
            return self.b(self.a(x))

    net = Twice()
    assert [p.name for p in net.get_parameters()] == ["weight", "bias", "weight", "bias"]
    net(Tensor(np.ones((1, 2), np.float32)))
    assert [p.name for p in net.get_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]
