"""Auto-tuning with MetaSchedule: tasks, search, a portable JSON database, applying records.

``tune`` searches; ``TuningDatabase`` holds the records; ``apply_records`` (used by
``schedules.build(..., tuning_db=DIR)``) puts the winners into a build. Imported lazily:
MetaSchedule is loaded only when tuning or applying records.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "tune": "tuner", "TuneResult": "tuner", "Tuner": "tuner",
    "TuningDatabase": "database", "DatabaseError": "database",
    "apply_records": "apply",
    "Task": "tasks", "extract_tasks": "tasks",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
