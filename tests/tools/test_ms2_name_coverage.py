"""tools/ms2_name_coverage.py: the scan of MindSpore name uses and the Markdown it writes (the MindSpore probe
itself needs a MindSpore install and is not run here)."""
import pytest

from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def tool():
    yield from loaded_script("ms2_name_coverage")


def test_scan_finds_aliased_uses_and_from_imports(tool, tmp_path):
    (tmp_path / "model.py").write_text(
        "import mindspore.numpy as mnp\n"
        "from mindspore import nn, ops\n"
        "from mindspore.ops import operations as P\n"
        "from mindspore.nn.optim.optimizer import opt_init_args_register\n"
        "from mindspore.ops import (constexpr,\n    ReduceOp)\n"
        "x = nn.Dense(1, 2); y = P.Tile()(x); z = mnp.arange(3); w = ops.split(x, 2)\n"
        "import numpy\n")
    (tmp_path / "plain.py").write_text("import numpy\nnumpy.arange(3)\n")  # no mindspore: skipped
    used = tool.scan(tmp_path)
    assert used["nn"] == {"Dense"}
    assert used["nn.optim.optimizer"] == {"opt_init_args_register"}
    assert used["ops"] == {"Tile", "split", "constexpr", "ReduceOp", "operations"}
    assert used["numpy"] == {"arange"}


def test_markdown_lists_covered_and_missing_names(tool):
    table = {"nn": {"Dense": {"users": ["a"], "aotnn": True}, "Fold": {"users": ["a", "b"], "aotnn": False}}}
    text = tool.markdown(table)
    assert "mindspore.nn: 1 of 2 used names covered" in text
    assert "Covered: `Dense`" in text
    assert "| `Fold` | a, b |" in text
