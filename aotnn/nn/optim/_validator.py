"""Argument checks with MindSpore's exception types (its ``_checkparam.Validator``), shared by optimizers."""
from __future__ import annotations

from typing import Any


def _type_names(types: tuple) -> str:
    return ", ".join(t.__name__ for t in types)


def check_value_type(name: str, value: Any, types: tuple | list | type, cls: str) -> Any:
    """TypeError unless ``value`` is one of ``types`` (a bool is not an int or float unless bool is listed)."""
    types = tuple(types) if isinstance(types, (tuple, list)) else (types,)
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise TypeError(f"For '{cls}', the type of '{name}' should be one of [{_type_names(types)}], "
                        f"but got {type(value).__name__}.")
    return value


def check_bool(value: Any, name: str, cls: str) -> bool:
    return check_value_type(name, value, [bool], cls)


def check_positive_float(value: Any, name: str, cls: str) -> float:
    check_value_type(name, value, [float], cls)
    if not value > 0:
        raise ValueError(f"For '{cls}', the '{name}' must be a positive float, but got {value}.")
    return value


def check_non_negative_float(value: Any, name: str, cls: str) -> float:
    check_value_type(name, value, [float], cls)
    if not value >= 0:
        raise ValueError(f"For '{cls}', the '{name}' must be a non-negative float, but got {value}.")
    return value


def check_float_range(value: Any, low: float, high: float, name: str, cls: str, include_low: bool = False,
                      include_high: bool = False) -> float:
    """TypeError unless a float; ValueError unless inside the interval (open unless ``include_*``)."""
    check_value_type(name, value, [float], cls)
    above = value >= low if include_low else value > low
    below = value <= high if include_high else value < high
    if not (above and below):
        left, right = "[" if include_low else "(", "]" if include_high else ")"
        raise ValueError(f"For '{cls}', the '{name}' must be in range {left}{low}, {high}{right}, but got {value}.")
    return value


def check_number(value: Any, bound: float, name: str, cls: str, greater: bool) -> float:
    """ValueError unless ``value >= bound`` (``greater``) or ``value <= bound``."""
    if (greater and value < bound) or (not greater and value > bound):
        rel = ">=" if greater else "<="
        raise ValueError(f"For '{cls}', the '{name}' must be {rel} {bound}, but got {value}.")
    return value
