"""Model.train/eval over aotnn.dataset pipelines with MindSpore 2.x callbacks; weights against a numpy SGD."""
import json
import os

import numpy as np

from aotnn import Tensor, dataset as ds, nn
from aotnn.train import (Callback, CheckpointConfig, LossMonitor, Model, ModelCheckpoint, SummaryRecord,
                         TimeMonitor, load_checkpoint)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
    return x, y


def _numpy_sgd(w, b, x, y, epochs, batch, lr):
    for _ in range(epochs):
        for start in range(0, len(x), batch):
            xb, yb = x[start:start + batch], y[start:start + batch]
            r = xb @ w.T + b - yb
            w = w - lr * 2 / r.size * r.T @ xb
            b = b - lr * 2 / r.size * r.sum(0)
    return w, b


class Recorder(Callback):  # old-style hook names still run (MindSpore 2.x)
    def __init__(self):
        self.events = []

    def epoch_end(self, run_context):
        params = run_context.original_args()
        self.events.append((params.cur_epoch_num, params.cur_step_num, params.batch_num))


def test_model_train_over_dataset_with_callbacks(tmp_path, capsys):
    x, y = _data()
    net = nn.Dense(3, 1)
    w0, b0 = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
    dataset = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(4)
    model = Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), learning_rate=0.1), metrics={"mse"})
    recorder = Recorder()
    checkpoints = ModelCheckpoint("lin", str(tmp_path), CheckpointConfig(save_checkpoint_steps=2, keep_checkpoint_max=2))
    model.train(3, dataset, callbacks=[LossMonitor(2), TimeMonitor(), recorder, checkpoints])
    w, b = _numpy_sgd(w0, b0, x, y, 3, 4, 0.1)
    np.testing.assert_allclose(net.weight.asnumpy(), w, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.bias.asnumpy(), b, rtol=1e-4, atol=1e-6)
    assert recorder.events == [(1, 2, 2), (2, 4, 2), (3, 6, 2)]
    printed = capsys.readouterr().out
    assert printed.count("Train epoch time:") == 3 and "loss is" in printed
    assert sorted(os.listdir(tmp_path)) == ["lin-2_2.ckpt", "lin-3_2.ckpt"]   # keep_checkpoint_max=2
    saved = load_checkpoint(str(tmp_path / "lin-3_2.ckpt"))
    np.testing.assert_allclose(saved["weight"].asnumpy(), w, rtol=1e-4, atol=1e-6)
    assert ModelCheckpoint("lin", str(tmp_path))._prefix == "lin_1"   # MindSpore: an existing prefix gets _1
    result = model.eval(ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(8))
    expected = np.mean((x @ w.T + b - y) ** 2)
    np.testing.assert_allclose(result["mse"], expected, rtol=1e-4)


def test_summary_record_writes_json_lines(tmp_path):
    with SummaryRecord(str(tmp_path / "summary")) as record:
        record.add_value("scalar", "loss", Tensor(np.array(0.5, np.float32)))
        record.record(3)
        record.add_value("tensor", "w", Tensor(np.ones((2, 2), np.float32)))
        record.record(4)
        path = record.full_file_name
    lines = [json.loads(line) for line in open(path)]
    assert lines == [{"step": 3, "mode": "train", "plugin": "scalar", "tag": "loss", "value": 0.5},
                     {"step": 4, "mode": "train", "plugin": "tensor", "tag": "w", "value": [[1.0, 1.0], [1.0, 1.0]]}]
