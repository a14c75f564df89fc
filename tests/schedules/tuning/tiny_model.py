"""A two-kernel network for tuning tests that must stay quick (resume, RPC)."""
from __future__ import annotations

SOURCE = '''
from aotnn import nn


class TinyNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(256, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(128, 64)

    def construct(self, x):
        return self.fc2(self.relu(self.fc1(x)))
'''

INPUT = "x:4,256"


def write_model(directory) -> str:
    """Write the model file into ``directory``; return the MODEL argument for the CLI."""
    path = directory / "tiny_net.py"
    path.write_text(SOURCE)
    return f"{path}:TinyNet"


def capture():
    """(Relax module, input names) of TinyNet, captured in this process."""
    import aotnn
    from aotnn.jit.compiled import capture_function

    namespace: dict = {}
    exec(SOURCE, namespace)  # noqa: S102 - our own constant source
    net = namespace["TinyNet"]()
    aotnn.set_seed(0)
    mod, _, _, _ = capture_function(lambda x: net(x), [("x", (4, 256), "float32")])
    return mod, ["x"]
