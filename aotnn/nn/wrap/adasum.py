"""AdaSum: combining the updates of data-parallel processes by Adaptive Summation, over MPI on the host."""
from __future__ import annotations

import numpy as np

import relay_frontend

from ...common.tensor import Tensor
from ...communication import _collective
from ...communication.management import GlobalComm
from ..cell import Cell

__all__ = ["AdaSumByGradWrapCell", "AdaSumByDeltaWeightWrapCell"]


def adasum_pair(g1: np.ndarray, g2: np.ndarray) -> np.ndarray:
    """``(1 - g2.g1 / (2|g1|^2)) g1 + (1 - g1.g2 / (2|g2|^2)) g2`` (a zero vector keeps coefficient 1)."""
    a, b = g1.astype(np.float64).ravel(), g2.astype(np.float64).ravel()
    dot, n1, n2 = float(a @ b), float(a @ a), float(b @ b)
    c1 = 1.0 - dot / (2.0 * n1) if n1 > 0 else 1.0
    c2 = 1.0 - dot / (2.0 * n2) if n2 > 0 else 1.0
    return (c1 * g1.astype(np.float64) + c2 * g2.astype(np.float64)).astype(g1.dtype)


def _adasum_on_host(arrays: list[np.ndarray], group: str) -> list[np.ndarray]:
    """AdaSum of every array over the ranks of `group`, per array, by recursive doubling: at distance
    1, 2, 4, ... each rank exchanges its vectors with ``rank ^ distance`` and both combine them (the lower
    rank's vector as g1), so all ranks end with the same result."""
    rank, size = _collective.group_rank_size(group)
    arrays = [np.ascontiguousarray(a) for a in arrays]
    distance = 1
    while distance < size:
        peer = rank ^ distance
        fused = np.concatenate([a.reshape(-1).astype(np.float64) for a in arrays])
        other = _collective.exchange(fused, peer, group)
        combined, offset = [], 0
        for array in arrays:
            theirs = other[offset:offset + array.size].reshape(array.shape).astype(array.dtype)
            offset += array.size
            combined.append(adasum_pair(array, theirs) if rank < peer else adasum_pair(theirs, array))
        arrays = combined
        distance *= 2
    return arrays


class _AdaSumWrapCell(Cell):
    """Shared checks and state of the two AdaSum wrappers."""
    host_collective = True  # TrainOneStepCell runs the step around the host exchange

    def __init__(self, optimizer: Cell):
        super().__init__(auto_prefix=False)
        if not isinstance(optimizer, Cell):
            raise TypeError(f"optimizer: expected a Cell (an optimizer), got {type(optimizer).__name__}")
        from ...context import ParallelMode, get_auto_parallel_context
        if get_auto_parallel_context("parallel_mode") == ParallelMode.STAND_ALONE:
            raise RuntimeError(f"{type(self).__name__}: AdaSum needs a distributed parallel_mode, "
                               f"got 'stand_alone'; set one with context.set_auto_parallel_context")
        if not GlobalComm.INITED:
            raise RuntimeError(f"{type(self).__name__}: call aotnn.communication.init() first")
        _, size = _collective.group_rank_size(GlobalComm.WORLD_COMM_GROUP)
        if size & (size - 1):
            raise RuntimeError(f"{type(self).__name__}: the number of processes must be a power of 2, got {size}")
        self.optimizer = optimizer
        self.parameters = optimizer.parameters
        self.group_size = size

    @property
    def _eager_only(self) -> bool:
        # Several processes: a cell containing this wrapper runs op by op, the exchange on the host.
        return self.group_size > 1

    def _in_graph(self, grads):
        if self.group_size > 1:
            raise relay_frontend.CaptureError(
                f"{type(self).__name__}: updates of several processes cannot be combined inside a compiled graph; "
                "use it as the optimizer of TrainOneStepCell or call it on concrete gradients")
        return self.optimizer(grads)  # AdaSum of a single process is its own update

    def construct(self, grads):
        return self._in_graph(grads)


class AdaSumByGradWrapCell(_AdaSumWrapCell):
    """Adaptive Summation (AdaSum) of the gradients of the data-parallel processes, then `optimizer`.

    .. math::
        w_{t+1} = w_t - \\alpha \\cdot [(1 - \\frac{g_2^T g_1}{2\\|g_1\\|^2}) g_1
                  + (1 - \\frac{g_1^T g_2}{2\\|g_2\\|^2}) g_2]

    where :math:`g_i` is process i's gradient; per parameter, combined pairwise by recursive doubling over
    the processes (MPI, on the host, between the compiled gradient and update graphs). MindSpore requires
    at least 16 devices; here any power of 2 works.

    Args:
        optimizer (Cell): the optimizer updating the weights; called with the combined gradients.

    Inputs:
        - **grads** (tuple[Tensor]) - the gradients of `optimizer`'s parameters.

    Outputs:
        the optimizer's output.

    Raises:
        TypeError: `optimizer` is not a Cell.
        RuntimeError: `parallel_mode` is 'stand_alone', ``communication.init()`` was not called, or the number
            of processes is not a power of 2.
    """

    def __call__(self, grads):
        if relay_frontend.current() is not None:
            return self._in_graph(grads)
        combined = _adasum_on_host([g.asnumpy() for g in grads], GlobalComm.WORLD_COMM_GROUP)
        return self.optimizer(tuple(Tensor._from_numpy(a) for a in combined))


class AdaSumByDeltaWeightWrapCell(_AdaSumWrapCell):
    """Adaptive Summation (AdaSum) of the weight changes the processes' optimizers make.

    Each process runs `optimizer` on its own gradients (its optimizer state stays local); the changes of
    the weights, :math:`g_i = w^{new}_i - w_t`, are combined by the AdaSum formula

    .. math::
        w_{t+1} = w_t + [(1 - \\frac{g_2^T g_1}{2\\|g_1\\|^2}) g_1 + (1 - \\frac{g_1^T g_2}{2\\|g_2\\|^2}) g_2]

    per parameter, pairwise by recursive doubling over the processes (MPI, on the host). MindSpore
    requires at least 16 devices; here any power of 2 works.

    Args:
        optimizer (Cell): the optimizer; it must take the gradients as its only input.

    Inputs:
        - **grads** (tuple[Tensor]) - the gradients of `optimizer`'s parameters.

    Outputs:
        the optimizer's output.

    Raises:
        TypeError: `optimizer` is not a Cell.
        RuntimeError: `parallel_mode` is 'stand_alone', ``communication.init()`` was not called, or the number
            of processes is not a power of 2.
    """

    def __call__(self, grads):
        if relay_frontend.current() is not None:
            return self._in_graph(grads)
        params = list(self.parameters)
        before = [p.asnumpy().copy() for p in params]
        result = self.optimizer(tuple(grads))
        deltas = [p.asnumpy() - old for p, old in zip(params, before)]
        combined = _adasum_on_host(deltas, GlobalComm.WORLD_COMM_GROUP)
        for param, old, delta in zip(params, before, combined):
            param.set_data(old + delta)
        return result
