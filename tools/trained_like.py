"""Give a random-weight classifier the activation statistics of a trained one (for int8 agreement benchmarks).

A network with random weights and random BatchNorm statistics is a poor stand-in for a trained one when
int8 is compared with float32: its activations are neither centred nor normalized, so after global
pooling every input gives nearly the same features and the classifier's argmax is one of a few classes
with tiny margins, which any rounding flips. A trained network normalizes every layer: its BatchNorms'
moving statistics are the statistics of the data reaching them. :func:`reestimate_batchnorms` does the
same with a set of inputs of its own (neither the calibration nor the held-out inputs): one call in
which each BatchNorm2d, just before it runs, takes as moving mean and variance the per-channel mean and
variance of its input over the batch (each layer sees the layers before it already re-estimated). The
random gammas and betas stay: every channel comes out with mean ``beta`` and standard deviation
``gamma``, as after training. Weights are unchanged (the zoo initializes convolutions He-scaled).
"""
from __future__ import annotations

import numpy as np

from aotnn import Tensor, nn
from aotnn.compression.quant.watch import WatchedNetwork


def reestimate_batchnorms(net: nn.Cell, inputs: np.ndarray) -> int:
    """Set every BatchNorm2d's moving statistics to those of its input when ``net`` runs on ``inputs``.

    Args:
        net (Cell): the network (put in inference mode).
        inputs (numpy.ndarray): one batch of network inputs, (N, C, H, W).

    Returns:
        int: how many BatchNorm2d cells were re-estimated.

    Raises:
        ValueError: ``inputs`` is not a 4-D float array.
    """
    if not isinstance(inputs, np.ndarray) or inputs.ndim != 4 or inputs.dtype.kind != "f":
        raise ValueError(f"inputs: expected a 4-D float numpy array, got "
                         f"{getattr(inputs, 'shape', type(inputs).__name__)} {getattr(inputs, 'dtype', '')}")
    net.set_train(False)
    batchnorms = [(name, cell) for name, cell in net.cells_and_names() if isinstance(cell, nn.BatchNorm2d)]
    # in training mode a BatchNorm normalizes with its input's batch statistics: one call of the network
    # with only its BatchNorms training gives every BatchNorm the input it has after those before it
    # were re-estimated (one compiled graph; forward hooks would compile every cell on its own)
    for _, cell in batchnorms:
        cell.set_train(True)
    try:
        _, calls = WatchedNetwork(net, batchnorms, outputs_of=[])(Tensor(inputs.astype(np.float32)))
    finally:
        net.set_train(False)
    cells = dict(batchnorms)
    done: set[str] = set()
    for call in calls:
        if call.name in done:
            continue
        cell = cells[call.name]
        x = call.x.astype(np.float64)
        axes = (0, 2, 3) if getattr(cell, "format", "NCHW") != "NHWC" else (0, 1, 2)
        dtype = cell.moving_mean.asnumpy().dtype
        cell.moving_mean.set_data(Tensor(x.mean(axis=axes).astype(dtype)))
        cell.moving_variance.set_data(Tensor(x.var(axis=axes).astype(dtype)))
        done.add(call.name)
    return len(done)
