"""``set_context`` / ``get_context``: both execution modes compile ahead of time here."""
from __future__ import annotations

from typing import Any

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_CONTEXT: dict[str, Any] = {"mode": GRAPH_MODE, "device_target": "CPU", "device_id": 0}
_TARGETS = ("CPU", "GPU", "Ascend")


def set_context(**kwargs: Any) -> None:
    """Set context options. ``mode`` is GRAPH_MODE or PYNATIVE_MODE (both compile and run the same way).

    Raises:
        ValueError: an unknown mode or device_target.
    """
    if "mode" in kwargs and kwargs["mode"] not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"mode: expected GRAPH_MODE (0) or PYNATIVE_MODE (1), got {kwargs['mode']!r}")
    if "device_target" in kwargs and kwargs["device_target"] not in _TARGETS:
        raise ValueError(f"device_target: expected one of {_TARGETS}, got {kwargs['device_target']!r}")
    _CONTEXT.update(kwargs)


def get_context(attr_key: str) -> Any:
    if attr_key not in _CONTEXT:
        raise ValueError(f"attr_key: unknown context key {attr_key!r}; known: {sorted(_CONTEXT)}")
    return _CONTEXT[attr_key]


class ParallelMode:
    """The parallel modes of ``set_auto_parallel_context(parallel_mode=...)``.

    Only DATA_PARALLEL changes anything here: ``TrainOneStepCell`` then all-reduces gradients over the
    world group. The other distributed modes are accepted (model sharding is not implemented).
    """
    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


_AUTO_PARALLEL_DEFAULTS: dict[str, Any] = {
    "device_num": 1, "global_rank": 0, "gradients_mean": False, "gradient_fp32_sync": True,
    "loss_repeated_mean": True, "parallel_mode": ParallelMode.STAND_ALONE, "search_mode": "dynamic_programming",
    "auto_parallel_search_mode": "dynamic_programming", "parameter_broadcast": False,
    "strategy_ckpt_load_file": "", "strategy_ckpt_save_file": "", "full_batch": False,
    "enable_parallel_optimizer": False, "enable_alltoall": False, "all_reduce_fusion_config": [],
    "pipeline_stages": 1, "grad_accumulation_step": 1, "parallel_optimizer_config": {}, "comm_fusion": {},
    "dataset_strategy": "data_parallel", "strategy_ckpt_config": {},
}
_AUTO_PARALLEL: dict[str, Any] = dict(_AUTO_PARALLEL_DEFAULTS)
_AUTO_PARALLEL_SET: set[str] = set()


def set_auto_parallel_context(**kwargs: Any) -> None:
    """Set auto-parallel options; ``parallel_mode``, ``gradients_mean`` and ``device_num`` are used by
    ``TrainOneStepCell`` (data-parallel gradient reduction), the others are kept for ``get``.

    Raises:
        ValueError: an unknown key, an unknown ``parallel_mode`` or ``device_num`` outside [1, 4096].
        TypeError: ``gradients_mean`` not a bool or ``device_num`` not an int.
    """
    for key, value in kwargs.items():
        if key not in _AUTO_PARALLEL_DEFAULTS:
            raise ValueError(f"set_auto_parallel_context: unknown key {key!r}; "
                             f"known: {sorted(_AUTO_PARALLEL_DEFAULTS)}")
        if key == "parallel_mode" and value not in ParallelMode.MODE_LIST:
            raise ValueError(f"parallel_mode: expected one of {ParallelMode.MODE_LIST}, got {value!r}")
        if key in ("gradients_mean", "full_batch", "parameter_broadcast") and not isinstance(value, bool):
            raise TypeError(f"{key}: expected a bool, got {type(value).__name__}")
        if key == "device_num":
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"device_num: expected an int, got {type(value).__name__}")
            if not 1 <= value <= 4096:
                raise ValueError(f"device_num: expected in [1, 4096], got {value}")
    _AUTO_PARALLEL.update(kwargs)
    _AUTO_PARALLEL_SET.update(kwargs)


def get_auto_parallel_context(attr_key: str) -> Any:
    """The value of an auto-parallel option. ``device_num`` not set explicitly is the world's size once
    ``communication.init()`` ran (1 in stand-alone mode).

    Raises:
        ValueError: an unknown key.
    """
    if attr_key not in _AUTO_PARALLEL:
        raise ValueError(f"attr_key: unknown auto parallel key {attr_key!r}; known: {sorted(_AUTO_PARALLEL)}")
    if attr_key == "device_num" and "device_num" not in _AUTO_PARALLEL_SET:
        from .communication.management import GlobalComm, get_group_size
        if GlobalComm.INITED and _AUTO_PARALLEL["parallel_mode"] != ParallelMode.STAND_ALONE:
            return get_group_size()
    return _AUTO_PARALLEL[attr_key]


def reset_auto_parallel_context() -> None:
    """Restore every auto-parallel option to its default."""
    _AUTO_PARALLEL.clear()
    _AUTO_PARALLEL.update(_AUTO_PARALLEL_DEFAULTS)
    _AUTO_PARALLEL_SET.clear()
