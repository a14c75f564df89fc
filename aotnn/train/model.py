"""``Model``: train, evaluate and predict with a network (MindSpore's ``mindspore.train.Model``)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..common.tensor import Tensor
from .callback import Callback, RunContext
from .loss_scale_manager import LossScaleManager


def _dataset_size(dataset: Any) -> int:
    """Steps per epoch: ``get_dataset_size()`` of a dataset, ``len()`` of a list; 0 when unknown."""
    if hasattr(dataset, "get_dataset_size"):
        return int(dataset.get_dataset_size())
    return len(dataset) if hasattr(dataset, "__len__") else 0


def _batches(dataset: Any) -> Iterable[tuple]:
    """Items of a dataset: an object with ``create_tuple_iterator()`` or an iterable of tuples."""
    source = dataset.create_tuple_iterator() if hasattr(dataset, "create_tuple_iterator") else dataset
    for item in source:
        items = item if isinstance(item, (tuple, list)) else (item,)
        yield tuple(x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in items)


_MODEL_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict")


def _check_kwargs(kwargs: dict[str, Any]) -> LossScaleManager | None:
    """Validate Model's keyword arguments; returns the loss-scale manager (or None)."""
    for name in kwargs:
        if name not in _MODEL_KWARGS:
            raise ValueError(f"For 'Model', the keyword arguments must be among {list(_MODEL_KWARGS)}, "
                             f"but got '{name}'.")
    manager = kwargs.get("loss_scale_manager")
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise TypeError(f"For 'Model', the 'loss_scale_manager' must be a LossScaleManager, but got "
                        f"{type(manager).__name__}.")
    return manager


def _train_step(loss_network: Any, optimizer: Any, manager: LossScaleManager | None) -> Any:
    """The training cell, as MindSpore's ``amp.build_train_network`` builds it."""
    from .. import nn
    if manager is None:
        return nn.TrainOneStepCell(loss_network, optimizer)
    update_cell = manager.get_update_cell()
    if update_cell is not None:
        return nn.TrainOneStepWithLossScaleCell(loss_network, optimizer, scale_sense=update_cell)
    return nn.TrainOneStepCell(loss_network, optimizer, sens=manager.get_loss_scale())


class Model:
    """High-level training and evaluation.

    Args:
        network: the network (or a full training Cell when ``loss_fn`` and ``optimizer`` are None).
        loss_fn: loss Cell; with ``optimizer`` the model builds ``TrainOneStepCell(WithLossCell(...))``.
        optimizer: optimizer Cell.
        metrics: names or a dict of name -> Metric for :meth:`eval`.
        eval_network: Cell returning ``(loss, outputs, label)``; built from ``network``/``loss_fn`` if None.
        eval_indexes: positions of (loss, output, label) in ``eval_network``'s outputs.
        amp_level: 'O0' (float32) or 'O2'/'O3' (network in float16). Default: 'O0'.
        boost_level: 'O0', 'O1' or 'O2'; accepted for MindSpore compatibility (no boost algorithms run).
            Default: 'O0'.
        kwargs: ``loss_scale_manager`` (:class:`LossScaleManager`): with an update cell (the Dynamic manager,
            or the Fixed one with ``drop_overflow_update=True``) the model trains with
            ``TrainOneStepWithLossScaleCell``, skipping the update in steps whose gradients overflow; the
            Fixed one with ``drop_overflow_update=False`` scales the loss's gradient by its ``loss_scale``
            and the optimizer (built with the same ``loss_scale``) divides it back.
            ``keep_batchnorm_fp32`` (bool) and ``boost_config_dict`` (dict) are accepted.
    Raises:
        ValueError: metrics without a way to evaluate, an unknown amp_level or boost_level, or an unknown
            keyword argument.
        TypeError: `loss_scale_manager` is not a LossScaleManager.
    """

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None,
                 eval_indexes: Sequence[int] | None = None, amp_level: str = "O0", boost_level: str = "O0",
                 **kwargs: Any):
        from .. import nn
        from ..common import dtype as mstype
        from .metrics import get_metrics
        if amp_level not in ("O0", "O1", "O2", "O3", "auto"):
            raise ValueError(f"amp_level: expected one of O0, O1, O2, O3, auto; got {amp_level!r}")
        if boost_level not in ("O0", "O1", "O2"):
            raise ValueError(f"boost_level: expected one of O0, O1, O2; got {boost_level!r}")
        loss_scale_manager = _check_kwargs(kwargs)
        if amp_level in ("O2", "O3"):
            network.to_float(mstype.float16)
        self._network = network
        self._loss_fn = loss_fn
        self._optimizer = optimizer
        self._metrics = get_metrics(metrics) if metrics else {}
        if optimizer is not None:
            loss_network = nn.WithLossCell(network, loss_fn) if loss_fn is not None else network
            self._train_network = _train_step(loss_network, optimizer, loss_scale_manager)
        else:
            self._train_network = network
        if eval_network is None and loss_fn is not None:
            eval_network = nn.WithEvalCell(network, loss_fn)
            eval_indexes = [0, 1, 2]
        if self._metrics and eval_network is None:
            raise ValueError("metrics: need loss_fn or eval_network to evaluate them")
        self._eval_network = eval_network
        self._eval_indexes = list(eval_indexes) if eval_indexes is not None else None

    @property
    def train_network(self):
        return self._train_network

    @property
    def predict_network(self):
        return self._network

    @property
    def eval_network(self):
        return self._eval_network

    def train(self, epoch: int, train_dataset: Any, callbacks: Callback | Sequence[Callback] | None = None,
              dataset_sink_mode: bool = False, sink_size: int = -1, initial_epoch: int = 0) -> None:
        """Run ``epoch`` passes over ``train_dataset``; each step is one compiled training graph.

        Raises:
            ValueError: ``epoch`` is not a positive int.
        """
        if not isinstance(epoch, int) or epoch <= 0:
            raise ValueError(f"epoch: expected a positive int, got {epoch!r}")
        callbacks = [] if callbacks is None else ([callbacks] if isinstance(callbacks, Callback) else list(callbacks))
        params = SimpleNamespace(train_network=self._train_network, epoch_num=epoch, cur_epoch_num=initial_epoch,
                                 cur_step_num=0, net_outputs=None, batch_num=_dataset_size(train_dataset),
                                 optimizer=self._optimizer, network=self._network, train_dataset=train_dataset,
                                 loss_fn=self._loss_fn, list_callback=callbacks, mode="train",
                                 dataset_sink_mode=dataset_sink_mode, parallel_mode="stand_alone",
                                 device_number=1)
        context = RunContext(params)
        self._train_network.set_train(True)
        for cb in callbacks:
            cb.on_train_begin(context)
        for epoch_index in range(initial_epoch, epoch):
            params.cur_epoch_num = epoch_index + 1
            for cb in callbacks:
                cb.on_train_epoch_begin(context)
            for batch in _batches(train_dataset):
                params.cur_step_num += 1
                for cb in callbacks:
                    cb.on_train_step_begin(context)
                params.net_outputs = self._train_network(*batch)
                for cb in callbacks:
                    cb.on_train_step_end(context)
                if context.get_stop_requested():
                    break
            for cb in callbacks:
                cb.on_train_epoch_end(context)
            if context.get_stop_requested():
                break
        for cb in callbacks:
            cb.on_train_end(context)
        self._train_network.set_train(False)

    def eval(self, valid_dataset: Any, callbacks=None, dataset_sink_mode: bool = False) -> dict[str, Any]:
        """Evaluate the metrics over ``valid_dataset``; returns ``{name: value}``.

        Callbacks get the ``on_eval_*`` hooks (``cur_step_num``, ``net_outputs``, ``batch_num``, ``metrics``).
        """
        if self._eval_network is None:
            raise ValueError("eval: the Model has no loss_fn or eval_network")
        callbacks = [] if callbacks is None else ([callbacks] if isinstance(callbacks, Callback) else list(callbacks))
        params = SimpleNamespace(eval_network=self._eval_network, valid_dataset=valid_dataset, cur_step_num=0,
                                 cur_epoch_num=1, epoch_num=1, batch_num=_dataset_size(valid_dataset),
                                 net_outputs=None, metrics=None, mode="eval", list_callback=callbacks)
        context = RunContext(params)
        self._eval_network.set_train(False)
        for metric in self._metrics.values():
            metric.clear()
        for cb in callbacks:
            cb.on_eval_begin(context)
            cb.on_eval_epoch_begin(context)
        loss_index, output_index, label_index = self._eval_indexes or (0, 1, 2)
        for batch in _batches(valid_dataset):
            params.cur_step_num += 1
            for cb in callbacks:
                cb.on_eval_step_begin(context)
            outputs = self._eval_network(*batch)
            params.net_outputs = outputs
            for name, metric in self._metrics.items():
                if type(metric).__name__ == "Loss":
                    metric.update(outputs[loss_index])
                else:
                    metric.update(outputs[output_index], outputs[label_index])
            for cb in callbacks:
                cb.on_eval_step_end(context)
        params.metrics = {name: metric.eval() for name, metric in self._metrics.items()}
        for cb in callbacks:
            cb.on_eval_epoch_end(context)
            cb.on_eval_end(context)
        return params.metrics

    def predict(self, *predict_data: Any) -> Any:
        """The network's output for ``predict_data`` (inference mode)."""
        self._network.set_train(False)
        return self._network(*predict_data)
