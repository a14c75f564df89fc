"""Optimizer: the base class of every optimizer, MindSpore's ``nn.Optimizer``.

An optimizer is a Cell. ``optimizer(gradients)`` compiles its ``construct`` (once per signature) into one
graph whose ``ops.assign`` calls become in-place updates of the parameters and of the optimizer state;
inside a larger graph being captured (a training step) the same ``construct`` is simply inlined.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import ops
from ...common import dtype as mstype
from ...common.parameter import Parameter, ParameterTuple
from ...common.tensor import Tensor
from ..cell import Cell
from ..container import CellList
from . import _validator as validator

__all__ = ["Optimizer"]

_GROUP_KEYS = ("params", "lr", "weight_decay", "order_params", "grad_centralization")


def _state(value: Any, name: str, dtype: Any = mstype.float32) -> Parameter:
    """A piece of optimizer state: a named, non-trainable Parameter."""
    array = np.asarray(value.asnumpy() if isinstance(value, Tensor) else value, dtype=mstype.to_numpy(dtype))
    return Parameter(Tensor(array), name=name, requires_grad=False)


class Optimizer(Cell):
    """Base class of the optimizers. Never used directly: instantiate one of its subclasses.

    Parameters can be grouped; each group may set its own learning rate, weight decay and gradient
    centralization. When not grouped, ``weight_decay`` applies to the parameters whose names contain neither
    'beta' nor 'gamma'.

    Args:
        learning_rate (Union[float, int, Tensor, Iterable, Cell]): a fixed value (float, int or a 0-D Tensor,
            at least 0); a 1-D Tensor or an iterable (step ``i`` uses item ``i``); or a LearningRateSchedule
            (any Cell whose ``construct(global_step)`` returns the learning rate).
        parameters (Union[list[Parameter], list[dict]]): the parameters, or groups: dicts with the keys
            "params" (required), "lr", "weight_decay", "grad_centralization", or a single "order_params".
        weight_decay (Union[float, int, Cell]): weight decay (L2 penalty), at least 0, or a Cell of the
            global step. Default: 0.0.
        loss_scale (float): the loss scale the gradients are divided by; greater than 0. Default: 1.0.

    Raises:
        TypeError: `learning_rate` not one of int, float, Tensor, Iterable, Cell; an element of `parameters`
            neither Parameter nor dict; `loss_scale` not a float; `weight_decay` neither float, int nor Cell.
        ValueError: `loss_scale` <= 0; `weight_decay` < 0; `learning_rate` a Tensor of more than 1 dimension;
            `parameters` None or empty.
        KeyError: a group dict has an unknown key.
    """
    _support_parallel_optimizer = False
    # Optimizers whose MindSpore construct advances global_step on every call, not only with a dynamic lr
    # (every built-in optimizer of MindSpore 2.10; a user's subclass advances it only with a dynamic lr).
    _steps_every_call = False
    # Optimizers whose ``target`` may be set (MindSpore's that can run their update on the host).
    _target_settable = False

    def __init__(self, learning_rate: Any, parameters: Any, weight_decay: Any = 0.0, loss_scale: float = 1.0):
        super().__init__(auto_prefix=False)
        parameters = self._parameters_base_check(parameters, "parameters")
        if not all(isinstance(x, Parameter) for x in parameters) and not all(isinstance(x, dict) for x in parameters):
            raise TypeError(f"For '{self.cls_name}', all elements of the argument 'parameters' must be 'Parameter' "
                            f"or 'dict', but got {[type(x).__name__ for x in parameters]}.")
        if isinstance(loss_scale, int) and not isinstance(loss_scale, bool):
            loss_scale = float(loss_scale)
        validator.check_positive_float(loss_scale, "loss_scale", self.cls_name)
        self.loss_scale = loss_scale
        self.dynamic_weight_decay = False
        self.grad_centralization = False
        self._unique = True
        from ... import context
        self._target = context.get_context("device_target")
        self._use_flattened_params = False
        self.dynamic_lr = False
        self.global_step = _state(np.zeros((1,)), "global_step", mstype.int32)
        self.is_group = False
        self.is_group_lr = False
        self.is_group_params_ordered = False
        self.use_parallel = False
        learning_rate = self._preprocess_single_lr(learning_rate)
        if isinstance(parameters[0], dict):
            self.is_group = True
            self.group_params: list[Parameter] = []
            self.group_lr: list[Any] = []
            self.group_weight_decay: list[Any] = []
            self.group_grad_centralization: list[bool] = []
            self._init_group_params(parameters, learning_rate, weight_decay, self.grad_centralization)
        self._init_opt_attrs(learning_rate, parameters, weight_decay)

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    # -- construction ------------------------------------------------------------------------------
    def _init_opt_attrs(self, learning_rate: Any, parameters: list, weight_decay: Any) -> None:
        weight_decay = self._preprocess_weight_decay(weight_decay)
        if self.is_group_lr:
            if self.dynamic_lr:
                self.learning_rate = CellList(self.group_lr, auto_prefix=False)
            else:
                self.learning_rate = self._track(ParameterTuple(self.group_lr))
        else:
            self.learning_rate = self._build_single_lr(learning_rate, "learning_rate")

        if self.is_group:
            self.parameters = ParameterTuple(self.group_params)
            self.decay_flags = tuple(isinstance(x, Cell) or x > 0 for x in self.group_weight_decay)
            self.dynamic_decay_flags = tuple(isinstance(x, Cell) for x in self.group_weight_decay)
            self.weight_decay = tuple(self.group_weight_decay)
            self.exec_weight_decay = any(self.decay_flags)
            self.grad_centralization_flags = tuple(self.group_grad_centralization)
        else:
            self.parameters = ParameterTuple(parameters)
            self.decay_flags = tuple("beta" not in x.name and "gamma" not in x.name for x in self.parameters)
            self.dynamic_decay_flags = isinstance(weight_decay, Cell)
            self.exec_weight_decay = isinstance(weight_decay, Cell) or weight_decay > 0
            self.weight_decay = weight_decay
        self._parameters = self.parameters
        names = [p.name for p in self._parameters]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise ValueError(f"For '{self.cls_name}', the parameters must have unique names, but {duplicated} "
                             f"appear more than once.")
        self._track(self._parameters)
        self.reciprocal_scale = float(np.float32(1.0 / self.loss_scale))
        self.need_scale = self.loss_scale != 1.0
        self.param_length = len(self._parameters)
        self.optim_filter = (True,) * self.param_length
        # MindSpore's C.Map/C.HyperMap, which optimizers written for it call in construct
        self.map_ = self.map_reverse = self.hyper_map = self.hyper_map_reverse = _hyper_map

    def _track(self, params: ParameterTuple) -> ParameterTuple:
        """Make each Parameter of a tuple part of this cell's state, keyed by its name (as MindSpore does for a
        ParameterTuple attribute), so checkpoints of a training step hold the optimizer state too."""
        for param in params:
            self._params.setdefault(param.name, param)
        return params

    def _clone_state(self, prefix: str, init: Any = "zeros") -> ParameterTuple:
        """One state Parameter per optimized parameter, named ``<prefix>.<parameter name>`` (MindSpore's
        ``ParameterTuple.clone``), filled with ``init`` and tracked as this cell's state."""
        clones = self._parameters.clone(prefix, init)
        for twin in clones:
            twin.requires_grad = False
        return self._track(clones)

    def _state_tuple(self, params: list[Parameter]) -> ParameterTuple:
        """A tuple of state Parameters tracked as this cell's state."""
        return self._track(ParameterTuple(params))

    @staticmethod
    def _parameters_base_check(parameters: Any, param_info: str) -> list:
        if parameters is None:
            raise ValueError(f"For 'Optimizer', the argument {param_info} can not be None.")
        if not isinstance(parameters, Iterable) or isinstance(parameters, (str, Tensor)):
            raise TypeError(f"For 'Optimizer', the argument {param_info} must be Iterable type, "
                            f"but got {type(parameters).__name__}.")
        parameters = list(parameters)
        if not parameters:
            raise ValueError(f"For 'Optimizer', the argument {param_info} must not be empty.")
        return parameters

    def _preprocess_weight_decay(self, weight_decay: Any) -> Any:
        """A float weight decay times the loss scale, or a Cell of the global step (dynamic weight decay)."""
        if isinstance(weight_decay, (float, int)) and not isinstance(weight_decay, bool):
            weight_decay = float(weight_decay)
            validator.check_non_negative_float(weight_decay, "weight_decay", self.cls_name)
            return weight_decay * self.loss_scale
        if isinstance(weight_decay, Cell):
            self.dynamic_weight_decay = True
            return _WrappedWeightDecay(weight_decay, self.loss_scale)
        raise TypeError(f"For '{self.cls_name}', the argument 'weight_decay' must be int, float or Cell, "
                        f"but got {type(weight_decay).__name__}.")

    @staticmethod
    def _preprocess_grad_centralization(grad_centralization: Any) -> bool:
        if not isinstance(grad_centralization, bool):
            raise TypeError(f"For 'Optimizer', the 'grad_centralization' must be bool type, "
                            f"but got {type(grad_centralization).__name__}.")
        return grad_centralization

    def _preprocess_single_lr(self, learning_rate: Any) -> Any:
        """A float, a 0-D or 1-D float32 Tensor, or a schedule Cell; sets ``dynamic_lr`` for the last two."""
        if isinstance(learning_rate, (float, int)) and not isinstance(learning_rate, bool):
            learning_rate = float(learning_rate)
            validator.check_non_negative_float(learning_rate, "learning rate", self.cls_name)
            return learning_rate
        if isinstance(learning_rate, Tensor) and learning_rate.ndim == 0:
            return Tensor(learning_rate.asnumpy().astype(np.float32))
        if isinstance(learning_rate, Tensor):
            if learning_rate.ndim > 1:
                raise ValueError(f"For '{self.cls_name}', if 'learning_rate' is Tensor type, then the dimension of it "
                                 f"should be 0 or 1, but got {learning_rate.ndim}.")
            self.dynamic_lr = True
            return Tensor(learning_rate.asnumpy().astype(np.float32))
        if isinstance(learning_rate, Cell):
            self.dynamic_lr = True
            return learning_rate
        if isinstance(learning_rate, Iterable) and not isinstance(learning_rate, (str, bytes, dict)):
            self.dynamic_lr = True
            return Tensor(np.array(list(learning_rate)).astype(np.float32))
        raise TypeError(f"For '{self.cls_name}', the argument 'learning_rate' must be int, float, Tensor, Iterable "
                        f"or LearningRateSchedule, but got {type(learning_rate).__name__}.")

    def _build_single_lr(self, learning_rate: Any, name: str) -> Any:
        """A Parameter for a fixed rate, a Cell of the global step for a dynamic one."""
        if isinstance(learning_rate, float) or (isinstance(learning_rate, Tensor) and learning_rate.ndim == 0):
            param = _state(learning_rate, name)
            if self.is_group_lr and self.dynamic_lr:
                return _ConvertToCell(param)
            return param
        if isinstance(learning_rate, Tensor) and learning_rate.ndim == 1:
            return _IteratorLearningRate(learning_rate, name)
        return learning_rate

    def _check_group_params(self, parameters: list) -> None:
        for group_param in parameters:
            invalid_key = [key for key in group_param if key not in _GROUP_KEYS]
            if invalid_key:
                raise KeyError(f"For '{self.cls_name}', the key in group params must be one of {list(_GROUP_KEYS)}, "
                               f"but got {invalid_key}.")
            if "order_params" in group_param:
                if len(group_param) > 1:
                    raise ValueError(f"For '{self.cls_name}', the order params dict in group parameters should only "
                                     f"include the 'order_params' key, but got {list(group_param)}.")
                if not isinstance(group_param["order_params"], Iterable):
                    raise TypeError(f"For '{self.cls_name}', the value of 'order_params' in group parameters must "
                                    f"be Iterable type, but got {type(group_param['order_params']).__name__}.")
                continue
            if "params" not in group_param:
                raise KeyError(f"For '{self.cls_name}', each group of parameters needs the key 'params'.")
            group = self._parameters_base_check(group_param["params"], "group `params`")
            for index, param in enumerate(group):
                if not isinstance(param, Parameter):
                    raise TypeError(f"For '{self.cls_name}', the element in group parameters must be Parameter "
                                    f"type, but got {type(param).__name__} at index {index}.")

    def _parse_group_params(self, parameters: list, learning_rate: Any) -> None:
        self._check_group_params(parameters)
        tensor_lr_length = learning_rate.size if isinstance(learning_rate, Tensor) and learning_rate.ndim == 1 else 0
        for group_param in parameters:
            if "order_params" in group_param:
                self.is_group_params_ordered = True
                continue
            if "lr" in group_param:
                self.is_group_lr = True
                group_lr = self._preprocess_single_lr(group_param["lr"])
                if isinstance(group_lr, Tensor) and group_lr.ndim == 1:
                    if tensor_lr_length == 0:
                        tensor_lr_length = group_lr.size
                    elif group_lr.size != tensor_lr_length:
                        raise ValueError(f"For '{self.cls_name}', the Tensor type dynamic learning rate in group must "
                                         f"be the same size as the argument 'learning_rate'.")

    def _init_group_params(self, parameters: list, learning_rate: Any, weight_decay: Any,
                           grad_centralization: bool) -> None:
        self._parse_group_params(parameters, learning_rate)
        default_lr = self._build_single_lr(learning_rate, "learning_rate")
        params_store: list[str] = []
        ordered_parameters = None
        for group_num, group_param in enumerate(parameters):
            if "order_params" in group_param:
                ordered_parameters = list(group_param["order_params"])
                continue
            group = list(group_param["params"])
            self.group_params += group
            if "lr" in group_param:
                lr = self._build_single_lr(self._preprocess_single_lr(group_param["lr"]),
                                           f"learning_rate_group_{group_num}")
            else:
                lr = default_lr
            weight_decay_ = self._preprocess_weight_decay(group_param.get("weight_decay", weight_decay))
            if "grad_centralization" in group_param:
                grad_centralization_ = self._preprocess_grad_centralization(group_param["grad_centralization"])
            else:
                grad_centralization_ = grad_centralization
            for param in group:
                if param.name in params_store:
                    raise RuntimeError(f"For '{self.cls_name}', the {param.name} parameter already exists, it does "
                                       f"not support repeated setting. Please check whether the optimizer parameter "
                                       f"has been set multiple times.")
                params_store.append(param.name)
                self.group_lr.append(lr)
                self.group_weight_decay.append(weight_decay_)
                self.group_grad_centralization.append(grad_centralization_)
        if self.is_group_params_ordered:
            self._order_and_adjust_group_params(ordered_parameters)

    def _order_and_adjust_group_params(self, ordered_parameters: list) -> None:
        """Reorder the group parameters (and their lr, weight decay, centralization) as ``order_params``."""
        if len(ordered_parameters) != len(self.group_params):
            raise ValueError(f"For '{self.cls_name}', the length of order parameters must be the same as the length "
                             f"of group parameters, but got order parameters' length {len(ordered_parameters)}, "
                             f"group parameters' length {len(self.group_params)}.")
        names = [param.name for param in ordered_parameters]
        positions = []
        for param in self.group_params:
            if param.name not in names:
                raise ValueError(f"For '{self.cls_name}', the parameter {param.name} is not in 'order_params'.")
            positions.append(names.index(param.name))
        order = sorted(range(len(positions)), key=positions.__getitem__)
        self.group_params = [self.group_params[i] for i in order]
        self.group_lr = [self.group_lr[i] for i in order]
        self.group_weight_decay = [self.group_weight_decay[i] for i in order]
        self.group_grad_centralization = [self.group_grad_centralization[i] for i in order]

    # -- properties -----------------------------------------------------------------------------------
    @property
    def unique(self) -> bool:
        """Whether sparse gradients are made unique in the optimizer (always dense here). Default: True."""
        return self._unique

    @unique.setter
    def unique(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"For 'Optimizer', the property 'unique' must be bool, but got {type(value).__name__}")
        self._unique = value

    @property
    def target(self) -> str:
        """Where the parameters are updated: 'CPU', 'Ascend' or 'GPU'."""
        return self._target

    @target.setter
    def target(self, value: str) -> None:
        if not self._target_settable:
            raise NotImplementedError(f"For '{self.cls_name}', the property 'target' cannot be set.")
        self._set_base_target(value)

    def _set_base_target(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"For 'Optimizer', the property 'target' must be string, but got {type(value).__name__}")
        if value not in ("CPU", "Ascend", "GPU"):
            raise ValueError(f"For 'Optimizer', the property 'target' must be one of ['CPU', 'Ascend' ,'GPU'], "
                             f"but got {value}")
        self._target = value

    # -- gradient transforms (called inside construct) ----------------------------------------------------
    def flatten_gradients(self, gradients: tuple) -> tuple:
        """Gradients as they are (parameters are never flattened into chunks here)."""
        return gradients

    def get_weight_decay(self) -> Any:
        """The weight decay of the current step: a float, a Tensor, or one of those per parameter when grouped."""
        if self.dynamic_weight_decay:
            if self.is_group:
                return tuple(_scalar(wd(self.global_step)) if dynamic else wd
                             for wd, dynamic in zip(self.weight_decay, self.dynamic_decay_flags))
            return _scalar(self.weight_decay(self.global_step))
        return self.weight_decay

    def decay_weight(self, gradients: tuple) -> tuple:
        """Add ``weight_decay * parameter`` to the gradients of the parameters that decay.

        Args:
            gradients (tuple[Tensor]): the gradients of ``self.parameters``.
        Returns:
            tuple[Tensor], the gradients after weight decay.
        """
        if not self.exec_weight_decay:
            return gradients
        weight_decay = self.get_weight_decay()
        if not self.is_group:
            weight_decay = (weight_decay,) * len(gradients)
        return tuple(param * _as_dtype(wd, param) + grad if flag else grad
                     for wd, flag, param, grad in zip(weight_decay, self.decay_flags, self._parameters, gradients))

    def gradients_centralization(self, gradients: tuple) -> tuple:
        """Subtract the mean over all but the first axis from the gradients of grouped parameters that ask for it
        (parameters of rank >= 2 whose second dimension is a multiple of 16, as MindSpore).

        Args:
            gradients (tuple[Tensor]): the gradients of ``self.parameters``.
        Returns:
            tuple[Tensor], the gradients after centralization.
        """
        if not self.is_group:
            return gradients
        out = []
        for flag, grad in zip(self.grad_centralization_flags, gradients):
            shape = grad.shape
            if flag and len(shape) >= 2 and shape[1] % 16 == 0:
                grad = grad - ops.mean(grad, tuple(range(1, len(shape))), True)
            out.append(grad)
        return tuple(out)

    def scale_grad(self, gradients: tuple) -> tuple:
        """Divide the gradients by the loss scale (multiply by its float32 reciprocal).

        Args:
            gradients (tuple[Tensor]): the gradients of ``self.parameters``.
        Returns:
            tuple[Tensor], the unscaled gradients.
        """
        if not self.need_scale:
            return gradients
        return tuple(grad * self.reciprocal_scale for grad in gradients)

    def _prepare_step(self, gradients: tuple, decay: bool = True, centralize: bool = True) -> tuple[tuple, Any]:
        """The usual start of ``construct``: the gradients flattened, weight-decayed (unless not ``decay``),
        centralized (unless not ``centralize``) and unscaled, then this step's learning rate (:meth:`get_lr`)."""
        gradients = self.flatten_gradients(gradients)
        if decay:
            gradients = self.decay_weight(gradients)
        if centralize:
            gradients = self.gradients_centralization(gradients)
        return self.scale_grad(gradients), self.get_lr()

    # -- learning rate ---------------------------------------------------------------------------------
    def _is_dynamic_lr_or_weight_decay(self) -> bool:
        return self.dynamic_lr or self.dynamic_weight_decay

    def get_lr(self) -> Any:
        """The learning rate of the current step (one per parameter when grouped), and advance ``global_step``
        when the learning rate or weight decay is dynamic (or the optimizer counts its steps).

        Returns:
            Tensor (a scalar), or a tuple of them when parameters are grouped by learning rate.
        """
        lr = self.learning_rate
        if self.dynamic_lr:
            if self.is_group_lr:
                lr = tuple(_scalar(schedule(self.global_step)) for schedule in self.learning_rate)
            else:
                lr = _scalar(self.learning_rate(self.global_step))
        if self._is_dynamic_lr_or_weight_decay() or self._steps_every_call:
            ops.assign(self.global_step, self.global_step + 1)
        return lr

    def _lr_at(self, lr: Any, index: int) -> Any:
        return lr[index] if self.is_group_lr else lr

    def get_lr_parameter(self, param: Parameter | list[Parameter]) -> Any:
        """The learning rate of a parameter (or of each in a list): its Parameter, or for a dynamic rate the
        Parameter of a Tensor/list schedule or the LearningRateSchedule itself.

        Raises:
            TypeError: `param` is neither a Parameter nor a list.
            ValueError: a parameter is not optimized by this optimizer.
        """
        def value(learning_rate):
            if isinstance(learning_rate, (_ConvertToCell, _IteratorLearningRate)):
                return learning_rate.learning_rate
            return learning_rate

        if isinstance(param, Parameter):
            param_list = [param]
        elif isinstance(param, list):
            param_list = param
        else:
            raise TypeError(f"For 'get_lr_parameter', the 'param' must be 'Parameter' or 'list' type, "
                            f"but got {type(param).__name__}.")
        ids = [id(p) for p in self._parameters]
        lr = []
        for p in param_list:
            validator.check_value_type("parameter", p, [Parameter], self.cls_name)
            if id(p) not in ids:
                raise ValueError(f"For 'get_lr_parameter', the parameter {p.name} is not in optimizer, please check "
                                 f"whether the argument 'param' is correct.")
            lr.append(value(self.learning_rate[ids.index(id(p))] if self.is_group_lr else self.learning_rate))
        return lr if isinstance(param, list) else lr[0]

    def broadcast_params(self, optim_result: Any) -> Any:
        """Broadcast parameters between devices after an update; with one device there is nothing to send.

        Returns:
            the status flag ``optim_result``.
        """
        return optim_result

    def construct(self, *hyper_params: Any) -> Any:
        raise NotImplementedError(f"{self.cls_name} must define construct()")



def _hyper_map(fn: Any, *sequences: Any) -> tuple:
    """``fn`` applied across the sequences item by item (scalars are broadcast), as a tuple."""
    length = max(len(seq) for seq in sequences if isinstance(seq, (tuple, list)))
    columns = [seq if isinstance(seq, (tuple, list)) else (seq,) * length for seq in sequences]
    return tuple(fn(*items) for items in zip(*columns))


def _scalar(value: Tensor) -> Tensor:
    """A one-element Tensor as a 0-D one, so that it broadcasts against parameters of any rank."""
    return ops.reshape(value, ()) if value.shape != () else value


def _as_dtype(value: Any, like: Tensor) -> Any:
    """A scalar weight decay (float or Tensor) in the dtype of ``like``."""
    if isinstance(value, Tensor) and value.dtype != like.dtype:
        return ops.cast(value, like.dtype)
    return value


class _ConvertToCell(Cell):
    """A fixed learning rate as a schedule (used when some groups have a dynamic one)."""

    def __init__(self, learning_rate: Parameter):
        super().__init__()
        if not isinstance(learning_rate, Parameter):
            raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be Parameter, "
                            f"but got {type(learning_rate).__name__}.")
        self.learning_rate = learning_rate

    def construct(self, global_step):
        return self.learning_rate + 0.0


class _IteratorLearningRate(Cell):
    """A 1-D Tensor of per-step learning rates as a schedule: step ``i`` takes item ``i`` (the last one after
    the end, where MindSpore's Gather would read out of bounds)."""

    def __init__(self, learning_rate: Tensor, name: str):
        super().__init__()
        if not isinstance(learning_rate, Tensor):
            raise TypeError(f"For 'Optimizer', the argument 'learning_rate' must be Tensor, "
                            f"but got {type(learning_rate).__name__}.")
        if learning_rate.ndim != 1:
            raise ValueError(f"For 'Optimizer', the dimension of the argument 'learning_rate' should be 1, "
                             f"but got {learning_rate.ndim}.")
        self.learning_rate = _state(learning_rate, name)
        self._steps = Tensor(np.arange(learning_rate.shape[0], dtype=np.int32))

    def construct(self, global_step):
        # a masked sum rather than a gather: no out-of-bounds read can happen, whatever the step
        step = ops.minimum(global_step, self._steps.shape[0] - 1)
        picked = ops.select(ops.equal(self._steps, step), self.learning_rate, ops.zeros_like(self.learning_rate))
        return ops.reduce_sum(picked)


class _WrappedWeightDecay(Cell):
    """A dynamic weight decay times the loss scale."""

    def __init__(self, weight_decay: Cell, loss_scale: float = 1.0):
        super().__init__()
        self.weight_decay = weight_decay
        self.loss_scale = float(loss_scale)

    def construct(self, global_step):
        return self.weight_decay(global_step) * self.loss_scale


from .init_args import opt_init_args_register  # noqa: E402,F401  (MindSpore imports it from this module)
