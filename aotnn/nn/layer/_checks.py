"""Argument checks shared by layers, with messages that name the argument."""
from __future__ import annotations

from typing import Any


def positive_int(value: Any, name: str, cls: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{cls}: {name} must be a positive int, got {value!r}")
    return value


def int_or_pair(value: Any, name: str, cls: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value, value)
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) and v > 0 for v in value)):
        raise ValueError(f"{cls}: {name} must be a positive int or a pair of them, got {value!r}")
    return tuple(value)


def one_of(value: Any, choices: tuple, name: str, cls: str) -> Any:
    if value not in choices:
        raise ValueError(f"{cls}: {name} must be one of {choices}, got {value!r}")
    return value


def strict_positive_int(value: Any, name: str, cls: str) -> int:
    """MindSpore's check_positive_int: TypeError for a non-int (bool included), ValueError for <= 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For '{cls}', the '{name}' must be int, but got {type(value).__name__}.")
    if value <= 0:
        raise ValueError(f"For '{cls}', the '{name}' must be a positive int, but got {value}.")
    return value


def check_bool(value: Any, name: str, cls: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{cls}', the '{name}' must be bool, but got {type(value).__name__}.")
    return value
