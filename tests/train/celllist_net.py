"""A network whose cells are appended to a CellList after the list was assigned (mindcv's swin/pit
pattern), so MindSpore names their parameters ``0.0.weight``... under the keys ``layers.0.0.weight``.
Written against ``mindspore``: tools/mindspore_celllist_ckpt.py runs it on MindSpore 2.10, the tests on
aotnn through the aliases."""
import zlib

import numpy as np


def build():
    from mindspore import nn

    class CellListNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stem = nn.Dense(6, 8)
            self.layers = nn.CellList()
            for _ in range(2):
                self.layers.append(nn.SequentialCell([nn.Dense(8, 8), nn.LayerNorm((8,)), nn.ReLU()]))
            self.head = nn.Dense(8, 3)

        def construct(self, x):
            x = self.stem(x)
            for layer in self.layers:
                x = layer(x)
            return self.head(x)

    return CellListNet()


def set_weights(net, seed: int) -> None:
    """Every parameter from a generator seeded by (seed, its key)."""
    import mindspore
    for key, param in net.parameters_and_names():
        rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
        param.set_data(mindspore.Tensor(rng.standard_normal(param.shape).astype(np.float32)))


def net_input() -> np.ndarray:
    return np.random.default_rng(7).standard_normal((4, 6)).astype(np.float32)
