"""``ModelCheckpoint`` and ``CheckpointConfig``: save the training network's parameters during training."""
from __future__ import annotations

import os
import re
from typing import Any, Callable

from .callback import Callback, RunContext
from .serialization import save_checkpoint


def _non_negative_int(value: Any, arg: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"For 'CheckpointConfig', '{arg}' must be an int >= 0, but got {value!r}.")
    return value


class CheckpointConfig:
    """When and how :class:`ModelCheckpoint` saves.

    Args:
        save_checkpoint_steps (int): save every this many steps. Default: 1.
        save_checkpoint_seconds (int): save every this many seconds (used when steps is 0). Default: 0.
        keep_checkpoint_max (int): keep at most this many files of the run (0: all). Default: 5.
        keep_checkpoint_per_n_minutes (int): accepted; only ``keep_checkpoint_max`` prunes. Default: 0.
        integrated_save, async_save (bool): passed to :func:`save_checkpoint`. Default: True, False.
        saved_network (Cell): save this network instead of the training network. Default: None.
        append_info (list): ``"epoch_num"``, ``"step_num"`` or dicts str -> value to add to every file.
            Default: None.
        kwargs: MindSpore's other options (``enc_key``, ``exception_save``, ``format`` ...) are accepted;
            ``format`` must be 'ckpt'.
    Raises:
        ValueError: a negative count, both step and second intervals 0, or another format.
    """

    def __init__(self, save_checkpoint_steps: int = 1, save_checkpoint_seconds: int = 0, keep_checkpoint_max: int = 5,
                 keep_checkpoint_per_n_minutes: int = 0, integrated_save: bool = True, async_save: bool = False,
                 saved_network: Any = None, append_info: list | None = None, **kwargs: Any):
        self.save_checkpoint_steps = _non_negative_int(save_checkpoint_steps or 0, "save_checkpoint_steps")
        self.save_checkpoint_seconds = _non_negative_int(save_checkpoint_seconds or 0, "save_checkpoint_seconds")
        if not self.save_checkpoint_steps and not self.save_checkpoint_seconds:
            raise ValueError("For 'CheckpointConfig', 'save_checkpoint_steps' and 'save_checkpoint_seconds' "
                             "can not both be 0.")
        self.keep_checkpoint_max = _non_negative_int(keep_checkpoint_max or 0, "keep_checkpoint_max")
        self.keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        self.integrated_save, self.async_save = integrated_save, async_save
        self.saved_network = saved_network
        self.append_info = list(append_info or [])
        self.format = kwargs.get("format", "ckpt")
        if self.format != "ckpt":
            raise ValueError(f"For 'CheckpointConfig', only format 'ckpt' is supported, but got {self.format!r}.")


class ModelCheckpoint(Callback):
    """Save ``<prefix>-<epoch>_<step in epoch>.ckpt`` into ``directory`` as :class:`CheckpointConfig` says,
    and once more at the end of training. A prefix already used by files in the directory becomes
    ``<prefix>_<n>`` (MindSpore's rule), so runs do not overwrite each other.

    Args:
        prefix (Union[str, Callable]): file name prefix, or a function of the run's parameters. Default: 'CKP'.
        directory (Union[str, Callable]): where to save (created if missing); None: the current directory.
        config (CheckpointConfig): Default: ``CheckpointConfig()``.
    Raises:
        ValueError: ``prefix`` contains '/'; TypeError: ``config`` is not a CheckpointConfig.
    """

    def __init__(self, prefix: str | Callable = "CKP", directory: str | Callable | None = None,
                 config: CheckpointConfig | None = None):
        if isinstance(prefix, str) and "/" in prefix:
            raise ValueError(f"For 'ModelCheckpoint', 'prefix' must not contain '/', but got {prefix!r}.")
        if config is not None and not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', 'config' must be a CheckpointConfig, got {type(config).__name__}.")
        self._config = config or CheckpointConfig()
        self._prefix_func = prefix if callable(prefix) else None
        self._directory_func = directory if callable(directory) else None
        self._directory = os.path.abspath(directory if isinstance(directory, str) else os.getcwd())
        self._prefix = prefix if isinstance(prefix, str) else "CKP"
        if self._directory_func is None:
            os.makedirs(self._directory, exist_ok=True)
            if self._prefix_func is None:
                self._prefix = _unused_prefix(self._directory, self._prefix)
        self._last_step = 0
        self._last_time = None
        self._saved: list[str] = []
        self._latest_ckpt_file_name = ""

    @property
    def latest_ckpt_file_name(self) -> str:
        return self._latest_ckpt_file_name

    def on_train_step_end(self, run_context: RunContext) -> None:
        self._save(run_context.original_args(), force=False)

    def on_train_end(self, run_context: RunContext) -> None:
        self._save(run_context.original_args(), force=True)

    def _due(self, params: Any, force: bool) -> bool:
        import time
        if self._config.save_checkpoint_steps:
            return force or params.cur_step_num >= self._last_step + self._config.save_checkpoint_steps
        now = time.time()
        if self._last_time is None:
            self._last_time = now
        if force or now - self._last_time > self._config.save_checkpoint_seconds:
            self._last_time = now
            return True
        return False

    def _save(self, params: Any, force: bool) -> None:
        if params.cur_step_num == self._last_step or not self._due(params, force):
            return
        if self._prefix_func is not None:
            self._prefix = self._prefix_func(params)
        if self._directory_func is not None:
            self._directory = os.path.abspath(self._directory_func(params))
            os.makedirs(self._directory, exist_ok=True)
        batch_num = max(int(getattr(params, "batch_num", 0) or 0), 1)
        step_in_epoch = (params.cur_step_num - 1) % batch_num + 1
        name = (f"{self._prefix}.ckpt" if self._prefix_func is not None
                else f"{self._prefix}-{params.cur_epoch_num}_{step_in_epoch}.ckpt")
        path = os.path.join(self._directory, name)
        if self._config.keep_checkpoint_max and len(self._saved) >= self._config.keep_checkpoint_max:
            oldest = self._saved.pop(0)
            if os.path.exists(oldest):
                os.remove(oldest)
        network = self._config.saved_network if self._config.saved_network is not None else params.train_network
        save_checkpoint(network, path, self._config.integrated_save, self._config.async_save,
                        append_dict=self._append_dict(params) or None)
        if path in self._saved:
            self._saved.remove(path)
        self._saved.append(path)
        self._latest_ckpt_file_name = path
        self._last_step = params.cur_step_num

    def _append_dict(self, params: Any) -> dict:
        extra: dict = {}
        for item in self._config.append_info:
            if item == "epoch_num":
                extra["epoch_num"] = params.cur_epoch_num
            elif item == "step_num":
                extra["step_num"] = params.cur_step_num
            elif isinstance(item, dict):
                extra.update(item)
        return extra


def _unused_prefix(directory: str, prefix: str) -> str:
    """``prefix``, or ``prefix_<n>`` when checkpoint files with that prefix exist already."""
    suffix = 0
    pattern = re.compile(re.escape(prefix) + r"(?:_(\d+))?-")
    for filename in os.listdir(directory):
        match = pattern.match(filename)
        if match and filename.endswith(".ckpt"):
            suffix = max(suffix, int(match.group(1)) + 1 if match.group(1) else 1)
    return f"{prefix}_{suffix}" if suffix else prefix
