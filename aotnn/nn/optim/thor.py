"""THOR: the second-order optimizer of MindSpore (``nn.thor``), its GPU/CPU variant ``ThorGpu``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter
from ...common.tensor import Tensor
from ...ops._dispatch import apply
from ...ops.functional import _latest_value
from ..cell import Cell
from ..layer.normalization import LayerNorm
from ..layer.thor_layer import Conv2dThor, DenseThor, EmbeddingLookupThor, EmbeddingThor
from . import _validator as validator
from .momentum import apply_momentum
from .optimizer import Optimizer, _state

__all__ = ["thor", "ThorGpu"]

# MindSpore's GPU kernels invert covariance matrices blockwise, in diagonal blocks of this size.
_SPLIT_DIM = 128


def _check_param(momentum: Any, frequency: Any, lr: Any, cls_name: str) -> None:
    validator.check_value_type("momentum", momentum, [float], cls_name)
    if momentum < 0.0:
        raise ValueError(f"For 'thor', the argument 'momentum' must be at least 0.0, but got 'momentum' {momentum}.")
    validator.check_value_type("frequency", frequency, [int], cls_name)
    if frequency < 2:
        raise ValueError(f"For 'thor', the argument 'frequency' must be at least 2, but got 'frequency' {frequency}.")
    validator.check_value_type("learning rate", lr, [Tensor], cls_name)


def _latest(param: Parameter) -> Tensor:
    """``param``'s value as written earlier in the graph being captured (e.g. the covariances the THOR
    layers saved in this step's forward and backward passes), else its value before the call."""
    return _latest_value(param)


def _damping_values(damping: Any) -> np.ndarray:
    values = damping.asnumpy() if isinstance(damping, Tensor) else np.asarray(damping)
    if values.dtype.kind not in "fiu" or values.size == 0:
        raise TypeError(f"For 'thor', the 'damping' must be a Tensor or numbers, but got {damping!r}.")
    return values.astype(np.float32).reshape(-1)


class _ThorLayer:
    """Where one THOR layer's statistics and inverses live."""

    def __init__(self, kind: str, cell: Cell, a_inv: Parameter, g_inv: Parameter):
        self.kind, self.cell, self.a_inv, self.g_inv = kind, cell, a_inv, g_inv

    @property
    def matrix_a(self) -> Parameter:
        return self.cell.matrix_a_cov if self.kind == "conv" else self.cell.matrix_a

    @property
    def matrix_g(self) -> Parameter:
        return self.cell.matrix_g_cov if self.kind == "conv" else self.cell.matrix_g


class ThorGpu(Optimizer):
    r"""THOR as MindSpore runs it on GPU (and here on every target): a natural-gradient step with
    Kronecker-factored curvature, then Momentum.

    Every ``frequency`` steps (the first step included) the inverses
    :math:`(A + \sqrt{\lambda} I)^{-1}` and :math:`(G s^{-2} b^2 + \sqrt{\lambda} I)^{-1}` are recomputed
    from the covariances the THOR layers saved in that step (:math:`\lambda` the damping of the step,
    :math:`s` the loss scale, :math:`b` ``batch_size``; matrices larger than 128 are inverted in diagonal
    blocks of 128, as MindSpore's GPU kernels); the other steps reuse the stored inverses. A Dense or
    Conv2d weight gradient :math:`g` (reshaped to (out, in*kh*kw)) becomes :math:`G^{-1} g A^{-1}`; an
    embedding table's becomes :math:`\mathrm{diag}(1 / (c / b + \sqrt{\lambda})) g G^{-1}` (:math:`c` the
    id counts); a LayerNorm parameter's becomes :math:`g / (g^2 / b + \sqrt{\lambda})`. Then weight decay
    (``weight_decay * w`` added where ``decay_filter`` is True), optional gradient clipping (each gradient
    to norm 1) and the Momentum update :math:`v = \mu v + g`, :math:`w = w - lr\, v`.

    The refresh is decided inside the compiled step (the graph computes both branches and selects), so
    one compiled training step serves every step. Use :func:`thor` to create it.
    """
    _steps_every_call = True

    def __init__(self, net: Cell, learning_rate: Any, damping: Any, momentum: float, weight_decay: Any = 0.0,
                 loss_scale: float = 1.0, batch_size: int = 32, use_nesterov: bool = False,
                 decay_filter=lambda x: x.name not in [], split_indices=None, enable_clip_grad: bool = False,
                 frequency: int = 100):
        params = [p for p in net.get_parameters() if p.requires_grad]
        _check_param(momentum, frequency, learning_rate, "ThorGpu")
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _state(momentum, "momentum")
        self.params = self._parameters
        self.use_nesterov = validator.check_bool(use_nesterov, "use_nesterov", self.cls_name)
        validator.check_value_type("batch_size", batch_size, [int], self.cls_name)
        self.enable_clip_grad = validator.check_bool(enable_clip_grad, "enable_clip_grad", self.cls_name)
        self.moments = self._clone_state("moments", "zeros")
        self.batch_size = float(batch_size)
        self.g_scale = float(batch_size) ** 2 / (float(loss_scale) ** 2)
        self.damping = Parameter(Tensor(_damping_values(damping)), name="damping", requires_grad=False)
        self.cov_step = _state(np.zeros((1,)), "cov_step", mstype.int32)
        self.frequency = frequency
        self.split_indices = split_indices
        self.net = net
        # applied to the unscaled, preconditioned gradients (the base class pre-multiplies by the loss scale)
        self.weight_decay = float(weight_decay)
        self.decay_flags = tuple(bool(decay_filter(p)) for p in self._parameters)
        self.thor = True
        self._layers = self._find_layers(net)
        self.matrix_a = self._state_tuple([layer.a_inv for layer in self._layers.values() if layer is not None])
        self.matrix_g = self._state_tuple([layer.g_inv for layer in self._layers.values() if layer is not None])

    def _find_layers(self, net: Cell) -> dict[int, Any]:
        """Map id(parameter) -> its _ThorLayer (THOR weights) or None (LayerNorm parameters)."""
        layers: dict[int, Any] = {}
        count = 0
        for _, cell in net.cells_and_names():
            if isinstance(cell, (DenseThor, Conv2dThor, EmbeddingThor, EmbeddingLookupThor)):
                table = isinstance(cell, (EmbeddingThor, EmbeddingLookupThor))
                weight = cell.embedding_table if table else cell.weight
                if not weight.requires_grad:
                    continue
                kind = "embedding" if table else ("conv" if isinstance(cell, Conv2dThor) else "fc")
                a_dim = cell.matrix_a_dim if kind == "conv" else (cell.vocab_size if table else cell.in_channels)
                g_dim = cell.embedding_size if table else cell.out_channels
                a_shape = [a_dim] if table else [a_dim, a_dim]
                a_inv = Parameter(Tensor(np.zeros(a_shape, np.float32)), name=f"matrix_a_inv_{count}",
                                  requires_grad=False)
                g_inv = Parameter(Tensor(np.zeros([g_dim, g_dim], np.float32)), name=f"matrix_g_inv_{count}",
                                  requires_grad=False)
                layers[id(weight)] = _ThorLayer(kind, cell, a_inv, g_inv)
                count += 1
            elif isinstance(cell, LayerNorm):
                layers[id(cell.gamma)] = None
                layers[id(cell.beta)] = None
        return layers

    def get_frequency(self) -> int:
        """The number of steps between two refreshes of the inverses."""
        return self.frequency

    def _damped_inverse(self, matrix: Tensor, sqrt_damping: Tensor) -> Tensor:
        eye = Tensor(np.eye(matrix.shape[0], dtype=np.float32))
        return apply("thor_inverse", matrix + sqrt_damping * eye, split_dim=_SPLIT_DIM)

    def _precondition(self, layer: _ThorLayer, grad: Tensor, sqrt_damping: Tensor, refresh: Tensor) -> Tensor:
        matrix_a = _latest(layer.matrix_a)
        matrix_g = _latest(layer.matrix_g) * self.g_scale
        if layer.kind == "embedding":
            new_a = 1.0 / (matrix_a * (1.0 / self.batch_size) + sqrt_damping)
        else:
            new_a = self._damped_inverse(matrix_a, sqrt_damping)
        new_g = self._damped_inverse(matrix_g, sqrt_damping)
        a_inv = ops.where(refresh, new_a, layer.a_inv)
        g_inv = ops.where(refresh, new_g, layer.g_inv)
        ops.assign(layer.a_inv, a_inv)
        ops.assign(layer.g_inv, g_inv)
        if layer.kind == "embedding":
            return ops.matmul(ops.expand_dims(a_inv, 1) * grad, g_inv)
        rows = ops.reshape(grad, (grad.shape[0], -1))
        return ops.reshape(ops.matmul(ops.matmul(g_inv, rows), a_inv), grad.shape)

    def _clip(self, grad: Tensor) -> Tensor:
        norm = ops.sqrt(ops.reduce_sum(grad * grad))
        return grad * (1.0 / ops.maximum(norm, 1.0))

    def construct(self, gradients):
        gradients = self.scale_grad(self.flatten_gradients(gradients))
        step = self.cov_step
        last = self.damping.shape[0] - 1
        index = ops.minimum(step, last) if last > 0 else step * 0
        damping = ops.reshape(ops.gather(self.damping, index, 0), ())
        sqrt_damping = ops.sqrt(damping)
        refresh = ops.reshape(ops.equal(ops.mod(step, self.frequency), 0), ())
        new_grads = []
        for param, grad in zip(self._parameters, gradients):
            layer = self._layers.get(id(param), False)
            if isinstance(layer, _ThorLayer):
                grad = self._precondition(layer, grad, sqrt_damping, refresh)
            elif layer is None:  # LayerNorm gamma/beta: a diagonal curvature from the squared gradient
                grad = grad / (grad * grad * (1.0 / self.batch_size) + sqrt_damping)
            new_grads.append(grad)
        ops.assign(self.cov_step, step + 1)
        if self.weight_decay > 0:
            new_grads = [grad + param * self.weight_decay if flag else grad
                         for param, grad, flag in zip(self._parameters, new_grads, self.decay_flags)]
        if self.enable_clip_grad:
            new_grads = [self._clip(grad) for grad in new_grads]
        lr = self.get_lr()
        for param, moment, grad in zip(self._parameters, self.moments, new_grads):
            apply_momentum(param, moment, grad, lr, self.momentum, self.use_nesterov)
        return True


def thor(net, learning_rate, damping, momentum, weight_decay=0.0, loss_scale=1.0, batch_size=32,
         use_nesterov=False, decay_filter=lambda x: x.name not in [], split_indices=None, enable_clip_grad=False,
         frequency=100):
    r"""Updates gradients by second-order algorithm--THOR.

    THOR (Trace-based Hardware-driven layer-ORiented Natural Gradient Descent Computation) updates

    .. math::
        w_{i}^{(k+1)} \leftarrow w_{i}^{(k)}-\gamma\left(\left(A_{i-1}^{(k)}+\lambda I\right)^{-1}
        \otimes\left(G_{i}^{(k)}+\lambda I\right)^{-1}\right) \nabla_{w_{i}} J^{(k)}

    with :math:`A_{i-1}` the covariance of the i-th layer's input and :math:`G_i` that of the gradient of
    its output. ``net``'s Dense, Conv2d, Embedding and EmbeddingLookup layers are first replaced by their
    THOR versions (:class:`ConvertNetUtils`), which save A and G; see :class:`ThorGpu` for the update.

    Args:
        net (Cell): The training network.
        learning_rate (Tensor): The learning rate: a scalar, or one value per step.
        damping (Tensor): The damping :math:`\lambda`: a scalar, or one value per step (the last one is kept
            after the end).
        momentum (float): The momentum, at least 0.0.
        weight_decay (int, float): Weight decay (L2 penalty), at least 0.0. Default: 0.0.
        loss_scale (float): The loss scale, greater than 0.0. Default: 1.0.
        batch_size (int): The size of a batch. Default: 32.
        use_nesterov (bool): Enable Nesterov momentum. Default: False.
        decay_filter (function): Which parameters weight decay applies to. Default: lambda x: x.name not in [].
        split_indices (list): All-reduce fusion groups of A/G layers in distributed training (kept only).
            Default: None.
        enable_clip_grad (bool): Whether to clip the gradients. Default: False.
        frequency (int): The update interval of A/G and :math:`A^{-1}/G^{-1}`, at least 2. Default: 100.

    Returns:
        ThorGpu, the optimizer Cell.

    Raises:
        TypeError: If `learning_rate` is not Tensor.
        TypeError: If `loss_scale` or `momentum` is not a float, or `frequency` is not an int.
        TypeError: If `weight_decay` is neither float nor int, or `use_nesterov` is not a bool.
        ValueError: If `loss_scale` is less than or equal to 0.
        ValueError: If `weight_decay` or `momentum` is less than 0.
        ValueError: If `frequency` is less than 2.
    """
    from ...train.train_thor import ConvertNetUtils
    _check_param(momentum, frequency, learning_rate, "thor")
    ConvertNetUtils().convert_to_thor_net(net)
    return ThorGpu(net, learning_rate, damping, momentum, weight_decay, loss_scale, batch_size, use_nesterov,
                   decay_filter, split_indices, enable_clip_grad, frequency)
