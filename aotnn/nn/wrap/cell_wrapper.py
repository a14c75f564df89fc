"""Wrappers that turn a network into a loss, a gradient or one compiled training step."""
from __future__ import annotations

from ... import ops
from ...ops.grad_ops import GradOperation, _differentiate
from ..cell import Cell
from ..container import _check_cell
from . import _host_step

__all__ = ["WithLossCell", "WithEvalCell", "WithGradCell", "ForwardValueAndGrad", "TrainOneStepCell"]


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``; adds no prefix to parameter names.

    Args:
        backbone: the network.
        loss_fn: the loss Cell.
    """

    def __init__(self, backbone: Cell, loss_fn: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = _check_cell(backbone, "backbone")
        self._loss_fn = _check_cell(loss_fn, "loss_fn")

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self) -> Cell:
        return self._backbone


class WithEvalCell(Cell):
    """Returns ``(loss, outputs, label)`` for evaluation.

    Args:
        network: the network.
        loss_fn: the loss Cell.
        add_cast_fp32: cast outputs and label to float32 first.
    """

    def __init__(self, network: Cell, loss_fn: Cell, add_cast_fp32: bool = False):
        super().__init__(auto_prefix=False)
        self._network = _check_cell(network, "network")
        self._loss_fn = _check_cell(loss_fn, "loss_fn")
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            outputs, label = outputs.astype("float32"), label.astype("float32")
        return self._loss_fn(outputs, label), outputs, label


class WithGradCell(Cell):
    """Gradients of the network's loss with respect to its trainable parameters.

    Args:
        network: the network.
        loss_fn: applied to the network's output and the label when given.
        sens: scale of the output's gradient (default 1).
    """

    def __init__(self, network: Cell, loss_fn: Cell | None = None, sens=None):
        super().__init__(auto_prefix=False)
        self.network = _check_cell(network, "network")
        self.loss_fn = loss_fn
        self.weights = list(network.trainable_params())
        self.sens = sens
        self.network_with_loss = WithLossCell(network, loss_fn) if loss_fn is not None else network

    def construct(self, *inputs):
        grad = GradOperation(get_by_list=True, sens_param=self.sens is not None)
        fn = grad(self.network_with_loss, self.weights)
        if self.sens is None:
            return fn(*inputs)
        return fn(*inputs, ops.fill("float32", (), float(self.sens)))


class ForwardValueAndGrad(Cell):
    """The network's output and its gradients (inputs and/or weights), as MindSpore's.

    Args:
        network: the network.
        weights: Parameters for ``get_by_list``.
        get_all: gradients for all inputs.
        get_by_list: gradients for ``weights``.
        sens_param: the last input is the output's sensitivity.
    """

    def __init__(self, network: Cell, weights=None, get_all: bool = False, get_by_list: bool = False,
                 sens_param: bool = False):
        super().__init__(auto_prefix=False)
        if get_by_list and weights is None:
            raise TypeError("weights: must be given when get_by_list is True")
        self.network = _check_cell(network, "network")
        self.weights = list(weights) if weights is not None else []
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def construct(self, *inputs):
        sens = None
        if self.sens_param:
            *inputs, sens = inputs
        tensor_positions = [i for i, a in enumerate(inputs) if hasattr(a, "shape")]
        positions = tensor_positions if self.get_all else ([] if self.get_by_list else tensor_positions[:1])
        outputs, input_grads, weight_grads = _differentiate(self.network, inputs, positions,
                                                            self.weights if self.get_by_list else [], sens)
        value = outputs[0] if len(outputs) == 1 else tuple(outputs)
        if self.get_all and self.get_by_list:
            return value, (tuple(input_grads), tuple(weight_grads))
        if self.get_by_list:
            return value, tuple(weight_grads)
        return value, (tuple(input_grads) if self.get_all else input_grads[0])


def _identity(grads):
    return grads


def _data_parallel_reducer(weights):
    """(reducer_flag, grad_reducer) from the auto-parallel context, as MindSpore's TrainOneStepCell."""
    from ...context import ParallelMode, get_auto_parallel_context
    if get_auto_parallel_context("parallel_mode") not in (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL):
        return False, _identity
    from .grad_reducer import DistributedGradReducer
    return True, DistributedGradReducer(weights, get_auto_parallel_context("gradients_mean"),
                                        get_auto_parallel_context("device_num"))


class TrainOneStepCell(Cell):
    """One training step as ONE compiled graph: forward, loss, gradients, optimizer update.

    Parameters and optimizer state are written back in place after every call. In data-parallel mode
    (``set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)``) the gradients go through a
    ``DistributedGradReducer``; with more than one process the step then runs as two compiled graphs (loss and
    gradients; optimizer update) with the MPI all-reduce between them, and the parameters are broadcast from
    rank 0 before the first step so that every rank starts from the same weights.

    Args:
        network: a Cell returning the loss (e.g. ``WithLossCell``).
        optimizer: the optimizer Cell; its ``parameters`` are differentiated.
        sens: scale of the loss's gradient (for loss scaling); None means 1.0. Default: None.
        return_grad (bool): also return the gradients, as a dict parameter name -> gradient (MindSpore 2.x).
            Default: False.
    Returns:
        the loss, from calling the cell; with `return_grad`, ``(loss, {name: gradient})``.
    Raises:
        ValueError: `sens` is 0.
        TypeError: `return_grad` is not a bool.
    """

    def __init__(self, network: Cell, optimizer: Cell, sens: float | None = None, return_grad: bool = False):
        super().__init__(auto_prefix=False)
        self.network = _check_cell(network, "network")
        self.network.set_grad()
        self.optimizer = _check_cell(optimizer, "optimizer")
        self.weights = list(getattr(optimizer, "parameters", network.trainable_params()))
        if sens is not None and float(sens) == 0:
            raise ValueError("TrainOneStepCell: the argument 'sens' can not be 0.")
        self.sens = 1.0 if sens is None else float(sens)
        if not isinstance(return_grad, bool):
            raise TypeError(f"TrainOneStepCell: return_grad must be a bool, got {type(return_grad).__name__}")
        self.return_grad = return_grad
        self.weights_name = [param.name for param in self.weights]
        self.reducer_flag, self.grad_reducer = _data_parallel_reducer(self.weights)

    def __call__(self, *inputs):
        # Collectives over MPI (gradient all-reduce, AdaSum) run on the host between compiled parts.
        if _host_step.needed(self):
            return _host_step.run(self, inputs)
        return super().__call__(*inputs)

    def construct(self, *inputs):
        outputs, grads = self._loss_and_grads(*inputs)
        return self._apply_update(outputs, self.grad_reducer(grads))

    # The two halves of the step (separate graphs when a host collective runs between them).
    def _loss_and_grads(self, *inputs):
        sens = None if self.sens == 1.0 else ops.fill("float32", (), self.sens)
        outputs, _, grads = _differentiate(self.network, inputs, [], self.weights, sens)
        return tuple(outputs), tuple(grads)

    def _apply_update(self, outputs, grads):
        self.optimizer(grads)
        loss = outputs[0] if len(outputs) == 1 else tuple(outputs)
        if self.return_grad:
            return loss, dict(zip(self.weights_name, grads))
        return loss
