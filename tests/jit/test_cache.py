"""Compiled artifacts are cached: in memory per signature, and on disk across processes."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

SCRIPT = """
import numpy as np, aotnn
from aotnn.jit.compiled import STATS
aotnn.set_seed(1)
net = aotnn.models.LeNet5()
x = aotnn.Tensor(np.ones((1, 1, 32, 32), np.float32))
net(x); net(x)
print(STATS["builds"], STATS["disk_hits"], STATS["captures"])
"""


def _run(cache_dir):
    env = dict(os.environ, AOTNN_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, capture_output=True, text=True)
    return [int(v) for v in out.stdout.split()]


def test_fresh_process_reuses_disk_cache(tmp_path):
    builds, hits, captures = _run(tmp_path)
    assert (builds, hits, captures) == (1, 0, 1), "first process: one build, and the second call recaptures nothing"
    assert len(os.listdir(tmp_path / "artifacts")) == 1
    builds, hits, captures = _run(tmp_path)
    assert (builds, hits) == (0, 1), "second process must load the artifact from disk, not rebuild"


def test_same_signature_does_not_recompile():
    import aotnn
    from aotnn.jit.compiled import STATS
    net = aotnn.nn.Dense(3, 2)
    x = aotnn.Tensor(np.ones((4, 3), np.float32))
    net(x)
    before = dict(STATS)
    for _ in range(3):
        net(x)
    assert STATS == before
    net(aotnn.Tensor(np.ones((5, 3), np.float32)))
    assert STATS["captures"] == before["captures"] + 1
