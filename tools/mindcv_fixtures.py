"""Outputs of mindcv models on MindSpore, for tests/models/test_mindcv_models.py.

Run with a python that has MindSpore 2.x and mindcv 0.3.0:

    python tools/mindcv_fixtures.py resnet18 mobilenet_v2_100 regnet_x_200mf pit_ti swin_tiny

For each model (pretrained=False), every parameter is set from tests/models/mindcv_weights.py (seeded by its
name), the model runs in inference mode on the seeded 1x3x224x224 input (or --size), and
tests/models/fixtures/mindcv/<model>.npz (<model>@<size>.npz) gets the logits and the model's (key, Parameter.name) pairs.
No weights are stored: the test regenerates them the same way.

``--ckpt MODEL`` also builds MODEL with 10 classes (small enough to commit), sets the same weights by name and
saves MindSpore's own checkpoint of it as tests/models/fixtures/mindcv/ckpt/<MODEL>@<size>.ckpt, with the
logits of a fresh network loaded from that file in <MODEL>@<size>.npz beside it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

from fixture_files import save_npz  # tools/ is on sys.path when a tool runs

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "models", "fixtures", "mindcv")


def _save(path: str, **arrays) -> None:
    save_npz(path, **arrays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", help="mindcv model names")
    parser.add_argument("--ckpt", metavar="MODEL", help="also save MindSpore's .ckpt of MODEL (10 classes)")
    parser.add_argument("--size", type=int, default=224,
                        help="input height and width (fixtures at other sizes are named <model>@<size>.npz)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import mindcv
    import mindspore
    import mindcv_weights

    os.makedirs(OUT_DIR, exist_ok=True)
    for name in args.models:
        mindspore.set_seed(0)
        net = mindcv.create_model(name, pretrained=False)
        net.set_train(False)
        pairs = mindcv_weights.set_weights(net)
        logits = net(mindspore.Tensor(mindcv_weights.model_input(args.size))).asnumpy()
        path = os.path.join(OUT_DIR, mindcv_weights.fixture_name(name, args.size) + ".npz")
        _save(path, logits=logits.astype(np.float32), names=np.array(pairs, dtype=str),
              versions=np.array([mindspore.__version__, mindcv.__version__]))
        print(f"{name}: {len(pairs)} parameters, logits {logits.shape} |max| {np.abs(logits).max():.3g} -> {path}")
    if args.ckpt:
        _save_checkpoint_fixture(mindcv, mindspore, mindcv_weights, args.ckpt, args.size)


def _save_checkpoint_fixture(mindcv, mindspore, mindcv_weights, name: str, size: int) -> None:
    ckpt_dir = os.path.join(OUT_DIR, "ckpt")
    os.makedirs(ckpt_dir, exist_ok=True)
    stem = os.path.join(ckpt_dir, f"{name}@{size}")
    net = mindcv.create_model(name, pretrained=False, num_classes=10)
    mindcv_weights.set_weights(net)
    fd, tmp = tempfile.mkstemp(dir=ckpt_dir, suffix=".ckpt")
    os.close(fd)
    mindspore.save_checkpoint(net, tmp)
    os.chmod(tmp, 0o644)
    os.replace(tmp, stem + ".ckpt")
    fresh = mindcv.create_model(name, pretrained=False, num_classes=10)
    mindspore.load_param_into_net(fresh, mindspore.load_checkpoint(stem + ".ckpt"))
    fresh.set_train(False)
    logits = fresh(mindspore.Tensor(mindcv_weights.model_input(size))).asnumpy()
    _save(stem + ".npz", logits=logits.astype(np.float32), versions=np.array([mindspore.__version__, mindcv.__version__]))
    print(f"{name} checkpoint: {os.path.getsize(stem + '.ckpt')} bytes, logits {logits.shape} -> {stem}.ckpt")


if __name__ == "__main__":
    main()
