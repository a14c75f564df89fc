"""Training callbacks: the hooks ``Model.train`` calls around epochs and steps."""
from __future__ import annotations

from typing import Any

import numpy as np


class RunContext:
    """What a callback sees: ``original_args()`` returns the run's parameters, updated per step."""

    def __init__(self, cb_params: Any):
        self._cb_params = cb_params
        self._stop = False

    def original_args(self) -> Any:
        return self._cb_params

    def request_stop(self) -> None:
        self._stop = True

    def get_stop_requested(self) -> bool:
        return self._stop


class Callback:
    """Base class: override any of the hooks.

    As in MindSpore 2.x, the ``on_train_*`` and ``on_eval_*`` hooks call the older names (``begin``,
    ``epoch_begin``, ``step_begin``, ``step_end``, ``epoch_end``, ``end``) unless overridden, so callbacks
    written for either style run.
    """

    def begin(self, run_context: RunContext) -> None: ...
    def epoch_begin(self, run_context: RunContext) -> None: ...
    def step_begin(self, run_context: RunContext) -> None: ...
    def step_end(self, run_context: RunContext) -> None: ...
    def epoch_end(self, run_context: RunContext) -> None: ...
    def end(self, run_context: RunContext) -> None: ...

    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_eval_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_eval_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_eval_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_eval_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_eval_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None


class LossMonitor(Callback):
    """Prints the loss every ``per_print_times`` steps; raises on nan/inf loss.

    Args:
        per_print_times: print interval in steps (>= 0; 0 prints nothing). Default: 1.
    """

    def __init__(self, per_print_times: int = 1):
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"per_print_times: expected an int >= 0, got {per_print_times!r}")
        self._every = per_print_times

    def on_train_step_end(self, run_context: RunContext) -> None:
        params = run_context.original_args()
        loss = params.net_outputs
        value = float(np.asarray(loss[0].asnumpy() if isinstance(loss, tuple) else loss.asnumpy()).reshape(-1)[0])
        if not np.isfinite(value):
            raise ValueError(f"epoch {params.cur_epoch_num} step {params.cur_step_num}: loss is {value}")
        if self._every and params.cur_step_num % self._every == 0:
            print(f"epoch: {params.cur_epoch_num} step: {params.cur_step_num}, loss is {value}")


_ELSEWHERE = {"TimeMonitor": "time_monitor", "ModelCheckpoint": "checkpoint_callback",
              "CheckpointConfig": "checkpoint_callback"}


def __getattr__(name: str):
    """``mindspore.train.callback`` also holds the callbacks that live in their own modules here."""
    if name in _ELSEWHERE:
        import importlib
        return getattr(importlib.import_module(f"{__package__}.{_ELSEWHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
