"""Checkpoints of a CellList network between MindSpore 2.10 and aotnn, both directions.

Run with a MindSpore 2.x python; ``--aotnn-python`` names the python that imports aotnn (default: python3):

    python tools/mindspore_celllist_ckpt.py --aotnn-python python3

1. MindSpore builds tests/train/celllist_net.py, sets seeded weights, saves
   tests/train/fixtures/celllist_mindspore.ckpt and the output for the fixture input
   (tests/train/fixtures/celllist_mindspore_output.npy).
2. aotnn (a subprocess, through the mindspore aliases) builds the same network with other seeded weights and
   saves a checkpoint and its output; MindSpore loads that checkpoint into its own network and records in
   tests/train/fixtures/celllist_aotnn_in_mindspore.json what load_param_into_net returned, the names in the
   file, and how far MindSpore's output with those weights is from aotnn's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from fixture_files import atomic_file  # tools/ is on sys.path when a tool runs

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "train", "fixtures")

_AOTNN_SIDE = """
import sys
import numpy as np
sys.path[:0] = [{root!r}, {runtime!r}, {tests!r}]
from aotnn.compat import install_mindspore_aliases
install_mindspore_aliases()
import mindspore, celllist_net
net = celllist_net.build()
celllist_net.set_weights(net, 2)
mindspore.save_checkpoint(net, {ckpt!r})
np.save({out!r}, net(mindspore.Tensor(celllist_net.net_input())).asnumpy())
"""


_atomic = atomic_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aotnn-python", default="python3", help="a python that imports aotnn")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "tests", "train"))
    import mindspore
    import celllist_net

    os.makedirs(FIXTURES, exist_ok=True)
    net = celllist_net.build()
    celllist_net.set_weights(net, 1)
    net.set_train(False)
    _atomic(os.path.join(FIXTURES, "celllist_mindspore.ckpt"), lambda p: mindspore.save_checkpoint(net, p))
    output = net(mindspore.Tensor(celllist_net.net_input())).asnumpy()
    _atomic(os.path.join(FIXTURES, "celllist_mindspore_output.npy"), lambda p: np.save(p, output))

    with tempfile.TemporaryDirectory() as work:
        ckpt, out = os.path.join(work, "aotnn.ckpt"), os.path.join(work, "aotnn_out.npy")
        code = _AOTNN_SIDE.format(root=ROOT, runtime=os.path.join(ROOT, "runtime"),
                                  tests=os.path.join(ROOT, "tests", "train"), ckpt=ckpt, out=out)
        subprocess.run([args.aotnn_python, "-c", code], check=True)
        twin = celllist_net.build()
        twin.set_train(False)
        file_names = list(mindspore.load_checkpoint(ckpt))
        param_not_load, ckpt_not_load = mindspore.load_param_into_net(twin, mindspore.load_checkpoint(ckpt))
        ms_output = twin(mindspore.Tensor(celllist_net.net_input())).asnumpy()
        record = {"mindspore": mindspore.__version__, "names_in_aotnn_file": file_names,
                  "param_not_load": param_not_load, "ckpt_not_load": ckpt_not_load,
                  "max_abs_diff_mindspore_vs_aotnn_output": float(np.abs(ms_output - np.load(out)).max())}
    path = os.path.join(FIXTURES, "celllist_aotnn_in_mindspore.json")
    _atomic(path, lambda p: open(p, "w").write(json.dumps(record, indent=1)))
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
