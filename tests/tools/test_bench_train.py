"""tools/bench_train.py on LeNet5 with a couple of steps: it runs, prints its table and the losses agree."""
import json

import pytest

from tests.tools.script_loader import loaded_script


@pytest.fixture(scope="module")
def bench_train():
    yield from loaded_script("bench_train")


def test_lenet5_training_step_runs_and_losses_agree(bench_train, tmp_path, capsys):
    results = tmp_path / "results.json"
    code = bench_train.main(["--models", "lenet5", "--repeats", "2", "--warmup", "0", "--threads", "1",
                             "--profile", "3", "--reuse-cache", "--json", str(results)])
    out = capsys.readouterr().out
    assert code == 0, out
    (row,) = json.loads(results.read_text())
    assert row["model"] == "lenet5" and row["batch"] == [32, 1, 32, 32] and row["threads"] == 1
    aotnn_losses, torch_losses = row["losses"]["aotnn"], row["losses"]["torch"]
    assert len(aotnn_losses) == len(torch_losses) == 2
    # the first loss checks the forward pass, the second the gradients and the Momentum update
    assert aotnn_losses == pytest.approx(torch_losses, rel=1e-3)
    assert abs(torch_losses[0] - 2.302585) > 1e-2  # re-initialised weights: not the log(10) of near-zero logits
    assert torch_losses[1] < torch_losses[0]
    assert row["ms"]["aotnn"] > 0 and row["ms"]["torch"] > 0 and row["compile_s"] >= 0
    assert len(row["kernels"]) == 3 and row["kernel_count"] >= 3
    assert "| lenet5 | 32x1x32x32 |" in out and "aotnn/torch" in out and "kernel launches" in out


def test_unknown_model_is_refused(bench_train):
    with pytest.raises(SystemExit):
        bench_train.main(["--models", "alexnet"])
