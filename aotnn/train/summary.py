"""``SummaryRecord``: collects scalars (and other values) for training summaries.

MindSpore writes protobuf event files for MindInsight; aotnn writes its own format instead: one JSON object
per line, ``{"step": int, "plugin": str, "tag": str, "value": ...}``, in
``<log_dir>/<file_prefix>.<time>.aotnn<file_suffix>.jsonl``. Scalars are stored as numbers, tensors and
images as nested lists (only their shape and dtype for arrays over 4096 elements). The file is rewritten
atomically on every ``flush``/``record``/``close``.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any

import numpy as np

_PLUGINS = ("scalar", "image", "tensor", "histogram", "custom_lineage_data", "train_lineage", "eval_lineage",
            "dataset_graph", "landscape")


def _jsonable(value: Any) -> Any:
    array = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
    if array.size == 1:
        return array.reshape(()).item()
    if array.size > 4096:
        return {"shape": list(array.shape), "dtype": str(array.dtype)}
    return array.tolist()


class SummaryRecord:
    """Record values by step for a later summary.

    Args:
        log_dir (str): directory of the summary file (created if missing).
        file_prefix (str): Default: 'events'.
        file_suffix (str): Default: '_MS'.
        network (Cell): accepted (MindSpore records its graph). Default: None.
        max_file_size (int): accepted. Default: None.
        raise_exception (bool): accepted. Default: False.
        export_options (dict): accepted. Default: None.
    Raises:
        TypeError: ``log_dir``, ``file_prefix`` or ``file_suffix`` is not a str.
    """

    def __init__(self, log_dir: str, file_prefix: str = "events", file_suffix: str = "_MS", network: Any = None,
                 max_file_size: int | None = None, raise_exception: bool = False, export_options: Any = None):
        for arg, value in (("log_dir", log_dir), ("file_prefix", file_prefix), ("file_suffix", file_suffix)):
            if not isinstance(value, str):
                raise TypeError(f"For 'SummaryRecord', '{arg}' must be a str, but got {type(value).__name__}.")
        os.makedirs(log_dir, exist_ok=True)
        self._log_dir = os.path.abspath(log_dir)
        self._path = os.path.join(self._log_dir, f"{file_prefix}.{int(time.time())}.aotnn{file_suffix}.jsonl")
        self._pending: list[tuple[str, str, Any]] = []
        self._lines: list[str] = []
        self._mode = "train"
        self._closed = False

    @property
    def log_dir(self) -> str:
        return self._log_dir

    @property
    def full_file_name(self) -> str:
        return self._path

    def set_mode(self, mode: str) -> None:
        """'train' or 'eval'; recorded with each value."""
        if mode not in ("train", "eval"):
            raise ValueError(f"For 'SummaryRecord', 'mode' must be 'train' or 'eval', but got {mode!r}.")
        self._mode = mode

    def add_value(self, plugin: str, name: str, value: Any) -> None:
        """Queue ``value`` under ``name`` for the next :meth:`record`.

        Raises:
            ValueError: an unknown ``plugin`` or an empty ``name``.
        """
        if plugin not in _PLUGINS:
            raise ValueError(f"For 'add_value', 'plugin' must be one of {list(_PLUGINS)}, but got {plugin!r}.")
        if not isinstance(name, str) or not name:
            raise ValueError(f"For 'add_value', 'name' must be a non-empty str, but got {name!r}.")
        self._pending.append((plugin, name, _jsonable(value) if plugin != "custom_lineage_data" else str(value)))

    def record(self, step: int, train_network: Any = None, plugin_filter: Any = None) -> bool:
        """Write the queued values with ``step``; returns True.

        Raises:
            ValueError: ``step`` is not an int.
        """
        if not isinstance(step, int) or isinstance(step, bool):
            raise ValueError(f"For 'record', 'step' must be an int, but got {step!r}.")
        for plugin, tag, value in self._pending:
            if plugin_filter is None or plugin_filter(plugin):
                self._lines.append(json.dumps({"step": step, "mode": self._mode, "plugin": plugin, "tag": tag,
                                               "value": value}))
        self._pending.clear()
        self.flush()
        return True

    def flush(self) -> None:
        """Write everything recorded so far to the file (atomically)."""
        fd, tmp = tempfile.mkstemp(dir=self._log_dir, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write("".join(line + "\n" for line in self._lines))
        os.replace(tmp, self._path)

    def close(self) -> None:
        """Flush and stop recording."""
        if not self._closed:
            self.flush()
            self._closed = True

    def __enter__(self) -> SummaryRecord:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
