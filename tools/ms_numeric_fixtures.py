"""Writes the MindSpore 2.10 reference fixtures the numeric tests compare aotnn against.

Run it with a Python that has MindSpore 2.10 installed (not aotnn's environment), from the repository root:

    DNNL_MAX_CPU_ISA=AVX2 python tools/ms_numeric_fixtures.py

It writes (all small, committed):
    tests/nn/optim/fixtures/ms_ftrl_proximal_adagrad.npz  FTRL and ProximalAdagrad over 5 steps of fixed gradients
    tests/train/fixtures/ms_bn_step.npz                    a Conv+BatchNorm2d+Dense TrainOneStepCell, 3 steps
                                                           (also with the BatchNorm applied twice)
    tests/train/fixtures/ms_{momentum,adam}_state.ckpt     save_checkpoint(train_net) after 2 steps
    tests/train/fixtures/ms_optimizer_state.npz            the data, initial weights and the 3rd step's parameters
    tests/train/metrics/fixtures/ms_roc.json               nn.ROC (multi-class and binary) on a fixed input

The nets here are repeated in the tests (written with aotnn); the weights travel in the fixtures. Every
file is written atomically (temporary file in the same folder, then os.replace).
"""
from __future__ import annotations

import json
import os
import sys

from fixture_files import atomic_file  # tools/ is on sys.path when a tool runs

import numpy as np
import mindspore as ms
from mindspore import Parameter, Tensor, nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTIM_DIR = os.path.join(ROOT, "tests", "nn", "optim", "fixtures")
TRAIN_DIR = os.path.join(ROOT, "tests", "train", "fixtures")
METRICS_DIR = os.path.join(ROOT, "tests", "train", "metrics", "fixtures")


_atomic = atomic_file


def _save_npz(path: str, arrays: dict) -> None:
    def write(temp):
        with open(temp, "wb") as f:
            np.savez(f, **arrays)
    _atomic(path, write)


# -- 1. FTRL and ProximalAdagrad --------------------------------------------------------------------
OPTIM_CONFIGS = {
    "ftrl_l1_l2": (nn.FTRL, dict(initial_accum=0.3, learning_rate=0.5, lr_power=-0.7, l1=0.02, l2=0.05)),
    "ftrl_l1_half_power": (nn.FTRL, dict(learning_rate=0.2, l1=0.05, l2=0.0)),
    "ftrl_plain": (nn.FTRL, dict(learning_rate=0.1)),
    "proximal_l1_l2": (nn.ProximalAdagrad, dict(accum=0.2, learning_rate=0.5, l1=0.05, l2=0.1)),
    "proximal_l2": (nn.ProximalAdagrad, dict(learning_rate=0.3, l2=0.2)),
}


def optimizer_fixture() -> None:
    rng = np.random.default_rng(11)
    init = [rng.standard_normal(s).astype(np.float32) for s in [(2, 3), (3,)]]
    grads = [[rng.standard_normal(a.shape).astype(np.float32) for a in init] for _ in range(5)]
    arrays = {"init_w": init[0], "init_b": init[1],
              "grads_w": np.stack([g[0] for g in grads]), "grads_b": np.stack([g[1] for g in grads]),
              "configs": np.array(json.dumps({k: v[1] for k, v in OPTIM_CONFIGS.items()}))}
    for key, (cls, kwargs) in OPTIM_CONFIGS.items():
        params = [Parameter(Tensor(a.copy()), name=n) for a, n in zip(init, "wb")]
        opt = cls(params, **kwargs)
        steps = []
        for step_grads in grads:
            opt(tuple(Tensor(g) for g in step_grads))
            steps.append([p.asnumpy().copy() for p in params])
        arrays[f"{key}.w"] = np.stack([s[0] for s in steps])
        arrays[f"{key}.b"] = np.stack([s[1] for s in steps])
    _save_npz(os.path.join(OPTIM_DIR, "ms_ftrl_proximal_adagrad.npz"), arrays)


# -- 2. a BatchNorm training step -------------------------------------------------------------------
class ConvBnDense(nn.Cell):
    """Conv2d(3->5, 3x3, 'same', no bias) -> BatchNorm2d(5) -> ReLU -> Flatten -> Dense(5*6*6 -> 3); with
    ``twice`` the BatchNorm is applied a second time (its moving statistics update twice per step)."""

    def __init__(self, w: dict, twice: bool = False):
        super().__init__()
        self.twice = twice
        self.conv = nn.Conv2d(3, 5, 3, pad_mode="same", has_bias=False, weight_init=Tensor(w["conv.weight"]))
        self.bn = nn.BatchNorm2d(5, momentum=0.9, gamma_init=Tensor(w["bn.gamma"]), beta_init=Tensor(w["bn.beta"]))
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(180, 3, weight_init=Tensor(w["fc.weight"]), bias_init=Tensor(w["fc.bias"]))

    def construct(self, x):
        h = self.bn(self.conv(x))
        if self.twice:
            h = self.bn(h)
        return self.fc(self.flatten(self.relu(h)))


def bn_step_fixture() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    y = np.array([0, 1, 2, 1], np.int32)
    w = {"conv.weight": (rng.standard_normal((5, 3, 3, 3)) * 0.3).astype(np.float32),
         "bn.gamma": (1 + 0.1 * rng.standard_normal(5)).astype(np.float32),
         "bn.beta": (0.1 * rng.standard_normal(5)).astype(np.float32),
         "fc.weight": (rng.standard_normal((3, 180)) * 0.1).astype(np.float32),
         "fc.bias": (0.1 * rng.standard_normal(3)).astype(np.float32)}
    arrays = {"x": x, "y": y}
    arrays.update({f"init.{k}": v for k, v in w.items()})
    for opt_name in ("momentum", "sgd", "momentum_bn_twice"):
        net = ConvBnDense(w, twice=opt_name.endswith("twice"))
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        params = net.trainable_params()
        opt = nn.SGD(params, 0.1) if opt_name == "sgd" else nn.Momentum(params, 0.1, 0.9)
        train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
        train.set_train()
        losses = []
        for step in range(3):
            losses.append(float(train(Tensor(x), Tensor(y)).asnumpy()))
            for name, param in net.parameters_and_names():
                arrays[f"{opt_name}.step{step}.{name}"] = param.asnumpy().copy()
        arrays[f"{opt_name}.loss"] = np.array(losses, np.float32)
    _save_npz(os.path.join(TRAIN_DIR, "ms_bn_step.npz"), arrays)


# -- 3. optimizer state in checkpoints --------------------------------------------------------------
def _state_train_net(opt_name: str, weight: np.ndarray, bias: np.ndarray):
    net = nn.Dense(6, 3, weight_init=Tensor(weight), bias_init=Tensor(bias))
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    params = net.trainable_params()
    opt = nn.Momentum(params, 0.1, 0.9) if opt_name == "momentum" else nn.Adam(params, 0.01)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    train.set_train()
    return net, train


def optimizer_state_fixture() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    y = np.array([0, 1, 2, 1], np.int32)
    weight = (rng.standard_normal((3, 6)) * 0.3).astype(np.float32)
    bias = (0.1 * rng.standard_normal(3)).astype(np.float32)
    arrays = {"x": x, "y": y, "init.weight": weight, "init.bias": bias}
    for opt_name in ("momentum", "adam"):
        net, train = _state_train_net(opt_name, weight, bias)
        for _ in range(2):
            train(Tensor(x), Tensor(y))
        path = os.path.join(TRAIN_DIR, f"ms_{opt_name}_state.ckpt")
        _atomic(path, lambda temp, t=train: ms.save_checkpoint(t, temp))
        arrays[f"{opt_name}.step3.loss"] = np.float32(train(Tensor(x), Tensor(y)).asnumpy())
        for name, param in train.parameters_and_names():
            arrays[f"{opt_name}.step3.{param.name}"] = param.asnumpy().copy()
    _save_npz(os.path.join(TRAIN_DIR, "ms_optimizer_state.npz"), arrays)


# -- 4. ROC -----------------------------------------------------------------------------------------
def roc_fixture() -> None:
    rng = np.random.default_rng(3)
    scores = np.round(rng.random((10, 3)), 2).astype(np.float32)
    labels = np.array([0, 1, 2, 0, 1, 2, 2, 1, 0, 0], np.int32)
    metric = nn.ROC(class_num=3)
    metric.clear()
    metric.update(Tensor(scores), Tensor(labels))
    fpr, tpr, thresholds = metric.eval()
    binary = nn.ROC(pos_label=1)
    binary.clear()
    binary.update(Tensor(scores[:, 1]), Tensor((labels == 1).astype(np.int32)))
    bfpr, btpr, bthresholds = binary.eval()
    as_lists = lambda arrays: [np.asarray(a, np.float64).tolist() for a in arrays]
    record = {"scores": scores.tolist(), "labels": labels.tolist(),
              "multiclass": {"fpr": as_lists(fpr), "tpr": as_lists(tpr), "thresholds": as_lists(thresholds)},
              "binary": {"fpr": as_lists([bfpr])[0], "tpr": as_lists([btpr])[0],
                         "thresholds": as_lists([bthresholds])[0]}}

    def write(temp):
        with open(temp, "w") as f:
            json.dump(record, f, indent=1)
    _atomic(os.path.join(METRICS_DIR, "ms_roc.json"), write)


def main() -> int:
    if not ms.__version__.startswith("2.10"):
        print(f"warning: the fixtures are MindSpore 2.10's; this is MindSpore {ms.__version__}", file=sys.stderr)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    optimizer_fixture()
    bn_step_fixture()
    optimizer_state_fixture()
    roc_fixture()
    return 0


if __name__ == "__main__":
    sys.exit(main())
