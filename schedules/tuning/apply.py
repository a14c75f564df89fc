"""Applying a tuning database at build time: the best record per kernel, only where it beats the default."""
from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import tirx

from .database import TuningDatabase, best_record, open_database
from .tasks import module_key, workload_module

_LOG = logging.getLogger(__name__)


@dataclass
class Choice:
    """What the database says about one kernel: the record to apply (or None) and why."""
    record: dict[str, Any] | None
    reason: str
    default_latency: float | None = None
    tuned_latency: float | None = None


def choose(entry: Mapping[str, Any] | None, default_fingerprint: str) -> Choice:
    """The record of ``entry`` to apply, given the fingerprint of today's default schedule.

    A record is applied only when it was measured faster than the default schedule, and that
    default measurement is of the same default schedule the build would use now (a changed
    default makes the comparison stale). A side-by-side verification, when there is one for the
    best record, decides over the separate measurements.
    """
    if not entry or not entry.get("records"):
        return Choice(None, "no records")
    best = best_record(entry)
    if best is None:
        return Choice(None, "no successful measurement")
    default = entry.get("default") or {}
    if default.get("fingerprint") != default_fingerprint or default.get("latency") is None:
        return Choice(None, "the default schedule changed since tuning (re-run tune)", None, best["latency"])
    default_latency, tuned_latency = float(default["latency"]), float(best["latency"])
    verified = entry.get("verified") or {}
    if verified.get("candidate") == best["candidate"] and verified.get("fingerprint") == default_fingerprint:
        default_latency, tuned_latency = float(verified["default_latency"]), float(verified["latency"])
    if tuned_latency < default_latency:
        return Choice(best, "faster than the default", default_latency, tuned_latency)
    return Choice(None, "not faster than the default", default_latency, tuned_latency)


def scheduled_by_record(func: tirx.PrimFunc, record: Mapping[str, Any]) -> tirx.PrimFunc:
    """``func`` (unscheduled) scheduled by ``record``'s trace, keeping its global symbol."""
    from .search import apply_trace

    sch = apply_trace(workload_module(func), record["trace"])
    name = func.attrs["global_symbol"] if func.attrs and "global_symbol" in func.attrs else "main"
    return sch.mod["main"].with_attr("global_symbol", name)


def apply_records(kernels: tvm.IRModule, scheduled: tvm.IRModule, target: Mapping[str, Any],
                  db: str | os.PathLike | TuningDatabase) -> tvm.IRModule:
    """``scheduled`` with each kernel replaced by its tuned version where the database has one
    that beats the default.

    Args:
        kernels: the unscheduled kernels (what tuning tasks were made from), by name.
        scheduled: the same kernels with default schedules.
        target: the target dict the kernels are built for.
        db: the tuning database.
    Returns:
        a module with the same functions.
    """
    database = open_database(db)
    funcs = {}
    applied = 0
    for gvar, func in scheduled.functions.items():
        original = kernels[gvar.name_hint] if isinstance(func, tirx.PrimFunc) else None
        if original is not None:
            key = module_key(workload_module(original))
            choice = choose(database.read(target, key), module_key(workload_module(func)))
            if choice.record is not None:
                try:
                    func = scheduled_by_record(original, choice.record)
                    applied += 1
                except Exception as err:  # noqa: BLE001 - a record that no longer replays
                    _LOG.warning("tuning record for %s does not apply (%s); keeping the default", gvar.name_hint, err)
            else:
                _LOG.debug("%s: default kept (%s)", gvar.name_hint, choice.reason)
        funcs[gvar] = func
    _LOG.info("applied %d tuned kernels from %s", applied, database.path)
    return tvm.IRModule(funcs, attrs=scheduled.attrs)
