"""Outputs of mindcv models on MindSpore, for tests/models/test_mindcv_models.py.

Run with a python that has MindSpore 2.x and mindcv 0.3.0:

    python tools/mindcv_fixtures.py resnet18 mobilenet_v2_100 regnet_x_200mf pit_ti swin_tiny

For each model (pretrained=False), every parameter is set from tests/models/mindcv_weights.py (seeded by its
name), the model runs in inference mode on the seeded 1x3x224x224 input, and
tests/models/fixtures/mindcv/<model>.npz gets the logits and the model's (key, Parameter.name) pairs.
No weights are stored: the test regenerates them the same way.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "models", "fixtures", "mindcv")


def _save(path: str, **arrays) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".npz")
    os.close(fd)
    np.savez_compressed(tmp, **arrays)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="mindcv model names")
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
        logits = net(mindspore.Tensor(mindcv_weights.model_input())).asnumpy()
        path = os.path.join(OUT_DIR, f"{name}.npz")
        _save(path, logits=logits.astype(np.float32), names=np.array(pairs, dtype=str),
              versions=np.array([mindspore.__version__, mindcv.__version__]))
        print(f"{name}: {len(pairs)} parameters, logits {logits.shape} |max| {np.abs(logits).max():.3g} -> {path}")


if __name__ == "__main__":
    main()
