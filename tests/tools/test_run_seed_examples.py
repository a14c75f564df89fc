"""The seed-example runner on tiny example files written here (never the shared examples)."""
import sys

import pytest

from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def runner():
    yield from loaded_script("run_seed_examples")


EXAMPLES = {
    # doctest globals (np, nn, Tensor, mindspore) come from the runner's preamble; a bare expression echoes
    "000_Good_1.py": """# Source seed : test
net = nn.Flatten()
x = Tensor(np.arange(8).reshape(2, 2, 2), mindspore.float32)
output = net(x)
print(output)
# expected: [[0. 1. 2. 3.]
# expected:  [4. 5. 6. 7.0000001]]
output.shape
# expected: (2, 4)
print(x.shape)
""",
    "000_Wrong_1.py": """import numpy as np
import mindspore.nn as nn
from mindspore import Tensor
print(Tensor(np.array([1.0, 2.0], np.float32)) * 2)
# expected: [2. 5.]
""",
    "000_Raises_1.py": """x = Tensor(np.ones((2, 3), np.float32))
print('before')
# expected: before
nn.Dense(4, 2)(x)
print('never')
# expected: never
""",
    "001_Tiny_1.py": """from tinyms import layers, primitives as P
print(type(layers.Flatten()).__name__, P.ReLU.__name__)
# expected: Flatten ReLU
""",
    "001_Broken_1.py": "print((1, 2]\n",
}


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    directory = tmp_path_factory.mktemp("examples")
    for name, text in EXAMPLES.items():
        (directory / name).write_text(text)
    return directory


def test_blocks_attach_to_the_statement_before_them(runner):
    body, blocks = runner.statements_and_blocks(EXAMPLES["000_Good_1.py"])
    assert len(body) == 6
    assert [(b.statement, b.text) for b in blocks] == [(3, "[[0. 1. 2. 3.]\n [4. 5. 6. 7.0000001]]\n"),
                                                       (4, "(2, 4)\n")]


def test_compare_is_numeric_and_structural(runner):
    assert runner.compare("[1.0000001 2.]\n", "[1. 2.]", 1e-4, 1e-5) is None
    assert runner.compare("[-1 0 0 1]", "[-1.  0.  0.  1.]", 1e-4, 1e-5) is None
    assert runner.compare("[1. 2.]", "[1. 2.1]", 1e-4, 1e-5).startswith("token 2")
    assert runner.compare("[[1. 2.]]", "[1. 2.]", 1e-4, 1e-5) is not None         # shapes differ
    assert runner.compare("[nan inf]", "[nan inf]", 1e-4, 1e-5) is None
    wrapped = "Tensor(shape=[2], dtype=Float32, value=\n[1. 2.])"
    assert runner.compare(wrapped, "[1. 2.]", 1e-4, 1e-5) is None                  # wrapper on one side only
    assert runner.compare(wrapped, "Tensor(shape=[2], dtype=Int32, value= [1, 2])", 1e-4, 1e-5) is not None


def test_runs_examples_and_tabulates(runner, examples, capsys):
    status = runner.main(["--examples", str(examples), "--timeout", "240", "--jobs", "2"])
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.endswith(".py") or ".py " in line}
    assert "ran" in rows["000_Good_1.py"] and "2/2" in rows["000_Good_1.py"]
    assert "mismatch" in rows["000_Wrong_1.py"] and "line 5" in rows["000_Wrong_1.py"]
    assert "failed" in rows["000_Raises_1.py"] and "1/2" in rows["000_Raises_1.py"]
    assert "line 4: ValueError" in rows["000_Raises_1.py"]
    assert "ran" in rows["001_Tiny_1.py"] and "1/1" in rows["001_Tiny_1.py"]
    assert "failed" in rows["001_Broken_1.py"] and "SyntaxError" in rows["001_Broken_1.py"]
    assert "total 5: ran 2, mismatch 1, failed 2" in out
    assert status == 1


def test_names_filter_timeout_and_json(runner, examples, tmp_path, capsys):
    slow = tmp_path / "ex"
    slow.mkdir()
    (slow / "000_Slow_1.py").write_text("import time\ntime.sleep(30)\n")
    (slow / "000_Other_1.py").write_text("print(1)\n")
    report = tmp_path / "r.json"
    status = runner.main(["--examples", str(slow), "--names", "Slow", "--timeout", "3", "--json", str(report)])
    out = capsys.readouterr().out
    assert "000_Other_1.py" not in out and "timeout after 3 s" in out and status == 1
    assert '"status": "failed"' in report.read_text()


def test_missing_directory_is_a_usage_error(runner, tmp_path):
    with pytest.raises(SystemExit):
        runner.main(["--examples", str(tmp_path / "nope")])


def test_mindspore_aliases_resolve_to_aotnn():
    import aotnn
    from aotnn.compat import install_mindspore_aliases, uninstall_mindspore_aliases
    install_mindspore_aliases()
    try:
        import mindspore
        import mindspore.nn as msnn
        import tinyms
        from mindspore.common.initializer import initializer
        from mindspore.ops import operations as P
        from tinyms import layers
        assert mindspore is aotnn and msnn is aotnn.nn and P.MatMul is aotnn.ops.MatMul
        assert initializer is aotnn.initializer and layers.SequentialLayer is aotnn.nn.SequentialCell
        assert tinyms.ones is aotnn.ops.ones and aotnn.nn.__spec__.name == "aotnn.nn"
        with pytest.raises(ImportError):
            import mindspore.no_such_module  # noqa: F401
    finally:
        uninstall_mindspore_aliases()
    assert not [name for name in sys.modules if name.split(".")[0] in ("mindspore", "tinyms")]
