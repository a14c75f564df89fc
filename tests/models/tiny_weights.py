"""Non-trivial BatchNorm statistics and biases for the tiny zoo models (the initializers leave them
0 and 1), shared by their PyTorch check and their microcontroller runs."""
from __future__ import annotations

import numpy as np


def randomize(net, seed: int):
    """``net`` in inference mode with random variances in [0.5, 1.5) and random gammas, means,
    betas and biases; returns ``net``."""
    rng = np.random.default_rng(seed)
    for name, param in net.parameters_and_names():
        if name.endswith("variance"):
            param.set_data(rng.uniform(0.5, 1.5, param.shape).astype(np.float32))
        elif name.endswith(("gamma", "moving_mean", "beta", "bias")):
            param.set_data((rng.normal(0.0, 0.2, param.shape) + name.endswith("gamma")).astype(np.float32))
    net.set_train(False)
    return net
