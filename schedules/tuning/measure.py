"""Building and timing candidate kernels: a lean builder and the local or RPC runner.

MetaSchedule's default build function imports ``tvm.s_tir.tensor_intrin`` in every worker
(16-22 s on a 2-core machine, against a 30 s timeout), so candidates time out before they
are built. The build function here compiles the scheduled PrimFunc without that import and
links a shared library in the worker; the pool of build workers is kept between batches
(recycled now and then) instead of being restarted for every batch.
"""
from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.builder import BuilderInput, BuilderResult, PyBuilder
from tvm.s_tir.meta_schedule.runner import EvaluatorConfig, LocalRunner, RPCConfig, RPCRunner, Runner
from tvm.support.popen_pool import PopenPoolExecutor, StatusKind

from .worker import ARTIFACT_PREFIX, build_and_export, set_num_threads

def remove_artifact(path: str | None) -> None:
    """Delete a built candidate (the temporary directory holding it)."""
    if path:
        directory = os.path.dirname(path)
        if os.path.basename(directory).startswith(ARTIFACT_PREFIX):
            shutil.rmtree(directory, ignore_errors=True)


@derived_object
class KernelBuilder(PyBuilder):
    """Builds candidates in parallel worker processes that outlive a batch.

    Args:
        max_workers: build processes (default: the host's cores).
        timeout_sec: per-candidate build limit.
        compiler: the C compiler that links for the target (None: the host's).
        recycle_after: builds per worker before it is replaced (works around slow leaks).
    """

    def __init__(self, *, max_workers: int | None = None, timeout_sec: float = 120.0,
                 compiler: str | None = None, recycle_after: int = 64) -> None:
        super().__init__()
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.compiler = compiler
        self._pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=timeout_sec,
                                       maximum_process_uses=recycle_after)

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        results = []
        jobs = [(item.mod, item.target, self.compiler) for item in build_inputs]
        for outcome in self._pool.map_with_error_catching(lambda job: build_and_export(*job), jobs):
            if outcome.status == StatusKind.COMPLETE:
                results.append(BuilderResult(outcome.value, None))
            elif outcome.status == StatusKind.TIMEOUT:
                results.append(BuilderResult(None, f"build timed out after {self.timeout_sec} s"))
            else:
                results.append(BuilderResult(None, f"build failed: {outcome.value}"))
        return results

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False)


@dataclass(frozen=True)
class RunnerSpec:
    """Where candidates are timed and how.

    Args:
        tracker: ``HOST:PORT`` of a TVM RPC tracker, or None to time on this machine.
        device_key: the key the RPC servers registered with (required with ``tracker``).
        num_threads: threads kernels use when timed locally.
        repeat / min_repeat_ms / number: TVM's time_evaluator settings.
        timeout_sec: limit per candidate (RPC: per session).
        max_workers: parallel RPC sessions (default: the number of free servers).
    """
    tracker: str | None = None
    device_key: str | None = None
    num_threads: int = 1
    number: int = 1
    repeat: int = 3
    min_repeat_ms: int = 40
    timeout_sec: float = 60.0
    max_workers: int | None = None

    @property
    def is_rpc(self) -> bool:
        return self.tracker is not None

    def describe(self) -> str:
        if self.is_rpc:
            return f"rpc {self.device_key}@{self.tracker}"
        return f"local ({self.num_threads} threads)"


def parse_tracker(text: str) -> tuple[str, int]:
    """``HOST:PORT`` -> (host, port).

    Raises:
        ValueError: not HOST:PORT with an integer port.
    """
    host, sep, port = str(text).rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"rpc_tracker: expected HOST:PORT, got {text!r}")
    return host, int(port)


def count_servers(spec: RunnerSpec) -> int:
    """Free and busy RPC servers registered under ``spec.device_key``."""
    host, port = parse_tracker(spec.tracker)
    config = RPCConfig(tracker_host=host, tracker_port=port, tracker_key=spec.device_key,
                       session_timeout_sec=int(spec.timeout_sec))
    return config.count_num_servers(allow_missing=True)


def create_runner(spec: RunnerSpec) -> Runner:
    """A MetaSchedule runner for ``spec``.

    Raises:
        ValueError: RPC without a device key, or a malformed tracker address.
        RuntimeError: no RPC server is registered under the key.
    """
    evaluator = EvaluatorConfig(number=spec.number, repeat=spec.repeat, min_repeat_ms=spec.min_repeat_ms,
                                enable_cpu_cache_flush=False)
    if not spec.is_rpc:
        return LocalRunner(timeout_sec=spec.timeout_sec, evaluator_config=evaluator,
                           initializer=functools.partial(set_num_threads, spec.num_threads))
    if not spec.device_key:
        raise ValueError("device_key: RPC measurement needs the key the servers registered with")
    host, port = parse_tracker(spec.tracker)
    workers = spec.max_workers or count_servers(spec)
    if workers < 1:
        raise RuntimeError(f"rpc_tracker: no server is registered under key {spec.device_key!r} at {spec.tracker}")
    config = RPCConfig(tracker_host=host, tracker_port=port, tracker_key=spec.device_key,
                       session_timeout_sec=int(spec.timeout_sec))
    return RPCRunner(rpc_config=config, evaluator_config=evaluator, max_workers=workers)


def device_type(target: tvm.target.Target) -> str:
    return "cuda" if target.kind.name == "cuda" else "cpu"


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def run_secs_of(result: Any) -> list[float] | None:
    """The measured seconds of a RunnerResult, or None when it failed."""
    if result is None or result.error_msg is not None or result.run_secs is None:
        return None
    secs = [float(s) for s in result.run_secs]
    return secs if secs and all(s > 0 for s in secs) else None


def summarize(run_secs: Sequence[float] | None) -> Mapping[str, Any]:
    """A measurement as stored: every repeat, and the latency: the fastest repeat (each repeat
    averages at least ``min_repeat_ms`` of calls; other load on the machine only adds time)."""
    if not run_secs:
        return {"run_secs": None, "latency": None}
    return {"run_secs": [float(s) for s in run_secs], "latency": min(float(s) for s in run_secs)}
