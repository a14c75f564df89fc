"""A training step split around host collectives: compiled loss and gradients, MPI on the host, compiled update.

A compiled graph cannot wait for other processes, so when ``TrainOneStepCell`` (or a subclass keeping its
``construct``) must all-reduce gradients over more than one process, or its optimizer combines updates
across processes (the AdaSum wrappers), it runs (1) ``_loss_and_grads`` as one graph, (2) the reduction on
the host, (3) ``_apply_update`` as a second graph taking the gradients as inputs (op by op when the
optimizer itself exchanges data over MPI).
"""
from __future__ import annotations

from ...communication import _collective
from ...communication.management import GlobalComm
from ..cell import Cell


class _Half(Cell):
    """One half of ``owner``'s step (the method ``name``) as a Cell that compiles on its own."""

    def __init__(self, owner: Cell, name: str):
        super().__init__(auto_prefix=False)
        self.owner = owner
        object.__setattr__(self, "method", name)

    def construct(self, *args):
        return getattr(self.owner, self.method)(*args)


def _group_of(cell) -> str:
    return getattr(cell.grad_reducer, "group", GlobalComm.WORLD_COMM_GROUP)


def needed(cell) -> bool:
    """Whether ``cell`` (a TrainOneStepCell) must run its step around host collectives."""
    import relay_frontend
    from .cell_wrapper import TrainOneStepCell
    if relay_frontend.current() is not None:
        return False
    if type(cell).construct is not TrainOneStepCell.construct:
        return False  # a step of its own: a cell holding a multi-process reducer runs op by op
    return getattr(cell.grad_reducer, "group_size", 1) > 1 or getattr(cell.optimizer, "host_collective", False)


def _broadcast_parameters(cell) -> None:
    """Every parameter and optimizer state of ``cell`` takes rank 0's value (the ranks' initial weights
    may differ: MindSpore relies on equal seeds, broadcasting makes it certain)."""
    if not GlobalComm.INITED:
        return
    params = list(cell.get_parameters())
    arrays = [p.asnumpy().copy() for p in params]
    _collective.broadcast_(arrays, _group_of(cell), root=0)
    for param, array in zip(params, arrays):
        param.set_data(array)


def run(cell, inputs: tuple):
    """One step of ``cell``; the first one broadcasts the parameters from rank 0."""
    from ...jit.cell_call import call_compiled
    halves = cell.__dict__.get("_step_halves")
    if halves is None:
        _broadcast_parameters(cell)
        halves = (_Half(cell, "_loss_and_grads"), _Half(cell, "_apply_update"))
        object.__setattr__(cell, "_step_halves", halves)
    # call_compiled, not Cell.__call__: the owner holds the reducer, which would make its caller run op by op.
    outputs, grads = call_compiled(halves[0], inputs, {})
    grads = cell.grad_reducer(tuple(grads))
    if getattr(cell.optimizer, "host_collective", False):
        return cell._apply_update(tuple(outputs), grads)  # the optimizer exchanges data itself: op by op
    return call_compiled(halves[1], (tuple(outputs), grads), {})
