"""tools/bench.py on LeNet5 with a few calls: outputs agree with both peers, rounds are reported."""
import json
import re

import numpy as np
import pytest

from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def bench():
    yield from loaded_script("bench")


def test_lenet5_agrees_with_both_peers_over_rounds(bench, tmp_path, capsys):
    results = tmp_path / "results.json"
    code = bench.main(["lenet5", "--repeat", "3", "--warmup", "0", "--threads", "1", "--rounds", "3",
                       "--json", str(results)])
    out = capsys.readouterr().out
    assert code == 0, out
    (row,) = json.loads(results.read_text())
    assert row["model"] == "lenet5" and row["threads"] == 1
    # onnxruntime and PyTorch run the same weights: the outputs agree within float32 rounding
    assert set(row["errors"]) == {"onnxruntime", "torch"}
    assert all(0.0 <= err < 1e-5 for err in row["errors"].values())
    assert len(row["rounds"]) == 3
    for engine in ("aotnn", "onnxruntime", "torch"):
        per_round = [times[engine] for times in row["rounds"]]
        assert all(ms > 0 for ms in per_round)
        assert row["ms"][engine] == pytest.approx(float(np.median(per_round)))
    assert "| lenet5 |" in out and "medians of 3 rounds" in out
    for peer in ("onnxruntime", "torch"):
        line = next(l for l in out.splitlines() if l.startswith(f"lenet5 aotnn/{peer} per round"))
        printed = [float(v) for v in line.split(": ")[-1].split(", ")]
        expected = [times["aotnn"] / times[peer] for times in row["rounds"]]
        assert printed == pytest.approx(expected, abs=0.006)  # printed with two decimals
        median = float(re.search(r"median ([0-9.]+)x", line).group(1))
        assert median == pytest.approx(float(np.median(expected)), abs=0.006)


def test_one_round_prints_no_round_lines(bench, capsys):
    assert bench.main(["lenet5", "--repeat", "2", "--warmup", "0", "--threads", "1", "--vs", "onnxruntime"]) == 0
    out = capsys.readouterr().out
    assert "per round" not in out and "rounds" not in out
    assert re.search(r"\| lenet5 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \|", out)


@pytest.mark.parametrize("argv", [["lenet5", "--rounds", "0"], ["lenet5", "--repeat", "0"],
                                  ["lenet5", "--round-pause", "-1"], ["lenet5", "--threads", "-2"],
                                  ["alexnet"], ["lenet5", "--vs", "tflite"]],
                         ids=["no_rounds", "no_calls", "negative_pause", "negative_threads", "unknown_model",
                              "unknown_peer"])
def test_bad_arguments_are_refused(bench, argv, capsys):
    with pytest.raises(SystemExit) as raised:
        bench.main(argv)
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert argv[-1] in err or "alexnet" in err
