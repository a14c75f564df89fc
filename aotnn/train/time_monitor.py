"""``TimeMonitor``: prints each epoch's time and the time per step."""
from __future__ import annotations

import time

from .callback import Callback, RunContext


class TimeMonitor(Callback):
    """Print ``Train epoch time: ... ms, per step time: ... ms`` after every epoch.

    Args:
        data_size (int): steps per epoch; None: the run's ``batch_num``. Default: None.
        data_time (bool): accepted (MindSpore also reports data-loading time in sink mode). Default: False.
    Raises:
        ValueError: ``data_size`` is not a positive int or None.
    """

    def __init__(self, data_size: int | None = None, data_time: bool = False):
        if data_size is not None and (not isinstance(data_size, int) or data_size <= 0):
            raise ValueError(f"TimeMonitor: data_size must be a positive int or None, got {data_size!r}")
        self.data_size = data_size
        self.data_time = data_time
        self.epoch_time = 0.0

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_time = time.time()

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        elapsed_ms = (time.time() - self.epoch_time) * 1000
        steps = self.data_size or getattr(run_context.original_args(), "batch_num", 0) or 1
        print(f"Train epoch time: {elapsed_ms:5.3f} ms, per step time: {elapsed_ms / steps:5.3f} ms", flush=True)
