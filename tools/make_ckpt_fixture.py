"""Write tests/train/fixtures/small_mindspore.ckpt with MindSpore: the real checkpoint the .ckpt error and
fuzz tests mutate, plus small_mindspore.npz holding the values MindSpore read back from it.

Run with a MindSpore install (not a dependency of aotnn):  python tools/make_ckpt_fixture.py
"""
from __future__ import annotations

import os

import numpy as np

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train", "fixtures")


def main() -> None:
    import mindspore as ms
    from mindspore import nn

    net = nn.Dense(3, 2)
    rng = np.random.default_rng(7)
    net.weight.set_data(ms.Tensor(rng.standard_normal((2, 3)).astype(np.float32)))
    net.bias.set_data(ms.Tensor(np.array([0.5, -1.25], np.float16).astype(np.float32)))
    path = os.path.join(FIXTURES, "small_mindspore.ckpt")
    ms.save_checkpoint(net, path, append_dict={"epoch_num": 3, "lr": 0.125, "note": "fuzz me"})
    loaded = ms.load_checkpoint(path)
    arrays = {name: (np.array(value) if isinstance(value, str) else value.asnumpy())
              for name, value in loaded.items()}
    np.savez(os.path.join(FIXTURES, "small_mindspore.npz"), **arrays)
    print({name: (a.dtype, a.shape) for name, a in arrays.items()}, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    main()
