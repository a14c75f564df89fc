"""Three MindSpore training steps of mindcv models, for tests/models/test_mindcv_training.py.

Run with a python that has MindSpore 2.x and mindcv 0.3.0:

    python tools/mindcv_train_fixtures.py            # every case of tests/models/mindcv_training.py

Each case's parameters are set by name (tests/models/mindcv_weights.py), trained for the steps of
tests/models/mindcv_training.py, and tests/models/fixtures/mindcv_train/<case>.npz gets the losses, every
parameter's change over the steps as its sum and sum of squares, and the full change of a few tracked
parameters.
"""
from __future__ import annotations

import argparse
import os
import sys

from fixture_files import save_npz  # tools/ is on sys.path when a tool runs

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "tests", "models", "fixtures", "mindcv_train")


def _save(path: str, **arrays) -> None:
    save_npz(path, **arrays)


def main() -> None:
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import mindcv_training
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", default=sorted(mindcv_training.CASES))
    args = parser.parse_args()
    import mindcv
    import mindspore
    import mindcv_weights

    os.makedirs(OUT_DIR, exist_ok=True)
    for case in args.cases:
        mindspore.set_seed(0)
        net = mindcv_training.build(mindcv, case)
        mindcv_weights.set_weights(net)
        losses, params = mindcv_training.train(mindspore, net, case)
        keys = list(params)
        tracked = mindcv_training.tracked(keys)
        arrays = {f"change:{k}": params[k].astype(np.float32) for k in tracked}
        _save(os.path.join(OUT_DIR, f"{case}.npz"), losses=losses, keys=np.array(keys, dtype=str),
              sums=np.array([params[k].sum() for k in keys]),
              squares=np.array([np.square(params[k]).sum() for k in keys]),
              versions=np.array([mindspore.__version__, mindcv.__version__]), **arrays)
        print(f"{case}: losses {losses}, {len(keys)} parameters, tracked {tracked}")


if __name__ == "__main__":
    main()
