"""tools/bench_quant.py --models on LeNet5 with a few inputs: PTQ and onnxruntime's int8 run side by side."""
import pytest

from tests.tools.script_loader import loaded_script

pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def bench_quant():
    yield from loaded_script("bench_quant")


def test_lenet5_ptq_beside_onnxruntime_int8(bench_quant, capsys):
    code = bench_quant.main(["--models", "lenet5", "--calibration", "8", "--held-out", "16", "--repeats", "2",
                             "--pause", "0", "--threads", "1"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| lenet5 |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert len(cells) == 15 and all(float(value) > 0 for value in cells[1:8]), row
    agree_ours, agree_ort = (float(value.rstrip("%")) for value in cells[8:10])
    assert agree_ort >= 90.0, row  # onnxruntime's int8 of the same calibration: the measure is sound
    assert agree_ours >= 90.0 and code == (0 if agree_ours >= 99.0 else 1), row
