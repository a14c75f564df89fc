"""``schedules.tune``: search faster kernels for a model and keep every measurement in a database.

The loop: measure each task's default schedule (the baseline), then round after round pick
the task that holds the largest share of the model's time (tasks not yet tried come first),
let its search propose a batch, build the batch in parallel, time each candidate (here, or on
RPC servers in parallel) and commit each record to the database the moment it is measured.
A budget counts the records already in the database: stopping (Ctrl-C, a crash) and running
the same command again continues where it stopped and never measures a candidate twice.
"""
from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm.s_tir.meta_schedule import MeasureCandidate
from tvm.s_tir.meta_schedule.builder import BuilderInput
from tvm.s_tir.meta_schedule.runner import RunnerInput

from ..target import host_cores, is_host, resolve, to_tvm
from . import measure, report
from .database import TuningDatabase, best_record, open_database
from .measure import RunnerSpec
from .search import TaskSearch, create_cost_model
from .tasks import Task, extract_tasks, module_key, workload_module


class _Batch:
    """Candidates built and being timed: reports each timing through ``on_result`` once."""

    def __init__(self, built: list, on_result):
        self.built = built
        self.on_result = on_result
        self.pending: list = []
        self.state: TaskState | None = None
        self.size = 0
        self.measured: list = []

    def report(self, index: int, outcome: Any) -> None:
        secs = measure.run_secs_of(outcome)
        self.on_result(index, secs, None if secs else _short(outcome.error_msg or "no timing"))


@dataclass
class TaskState:
    """One task during tuning."""
    task: Task
    default_latency: float | None = None
    fingerprint: str = ""
    best_latency: float | None = None
    best_candidate: str | None = None
    trials: int = 0
    new_trials: int = 0
    search: TaskSearch | None = None

    @property
    def current(self) -> float | None:
        """The latency the model gets for this kernel: the best of default and tuned."""
        values = [v for v in (self.default_latency, self.best_latency) if v is not None]
        return min(values) if values else None


@dataclass
class TaskReport:
    name: str
    key: str
    weight: int
    flops: float
    default_latency: float | None
    tuned_latency: float | None
    trials: int
    applied: bool

    @property
    def latency(self) -> float | None:
        return self.tuned_latency if self.applied else self.default_latency


@dataclass
class TuneResult:
    """What a tuning run achieved (latencies in seconds, kernel time summed over one model run)."""
    tasks: list[TaskReport]
    default_latency: float
    latency: float
    trials: int
    new_trials: int
    curve: list[tuple[int, float]]
    db: str
    plot_path: str | None
    elapsed: float
    interrupted: bool = False

    @property
    def speedup(self) -> float:
        return self.default_latency / self.latency if self.latency else float("nan")


class Tuner:
    """The tuning loop over a model's tasks (see :func:`tune` for the arguments)."""

    def __init__(self, tasks: Sequence[Task], target: Mapping[str, Any], db: TuningDatabase, *, trials: int,
                 runner_spec: RunnerSpec, batch: int | None, strategy: str, population: int | None,
                 num_threads: int, seed: int, reporter: report.Reporter, time_budget: float | None,
                 max_trials_per_task: int | None, verify: bool, compiler: str | None,
                 model_name: str | None = None):
        if not tasks:
            raise ValueError("mod: the model has no kernels to tune")
        self.target = dict(target)
        self.tvm_target = to_tvm(self.target)
        self.target_name = self.target.get("mcpu") or self.target.get("kind")
        self.db = db
        self.runner_spec = runner_spec
        self.states = [TaskState(t) for t in tasks]
        self.trials = int(trials)
        self.strategy = strategy
        self.num_threads = num_threads
        self.seed = seed
        self.reporter = reporter
        self.deadline = time.monotonic() + time_budget if time_budget else None
        self.max_trials_per_task = max_trials_per_task
        self.verify = verify
        self.compiler = compiler
        self.model_name = model_name
        self._load()
        self.done_before = sum(s.trials for s in self.states)
        self.remaining = max(0, self.trials - self.done_before)
        self.batch = batch or max(4, min(16, self.remaining // max(2 * len(self.states), 1)))
        self.population = population or max(64, min(512, 16 * self.batch))
        self.cost_model = create_cost_model(num_threads, num_warmup_samples=max(2, min(self.batch, 8)))
        self._stop = False
        self._builder: measure.KernelBuilder | None = None
        self._runner = None

    # -- state -------------------------------------------------------------------------------

    def _load(self) -> None:
        for state in self.states:
            state.fingerprint = module_key(workload_module(state.task.default_module(self.tvm_target)["main"]))
            entry = self.db.read(self.target, state.task.key) or {}
            default = entry.get("default") or {}
            if default.get("fingerprint") == state.fingerprint:
                state.default_latency = default.get("latency")
            state.trials = len(entry.get("records", []))
            best = best_record(entry)
            if best is not None:
                state.best_latency, state.best_candidate = best["latency"], best["candidate"]

    def model_latency(self) -> float:
        return sum(s.task.weight * (s.current or 0.0) for s in self.states)

    def default_model_latency(self) -> float:
        return sum(s.task.weight * (s.default_latency or 0.0) for s in self.states)

    def _info(self, task: Task) -> dict[str, Any]:
        return {"name": task.name, "flops": task.flops, "mod": tvm.ir.save_json(task.mod)}

    # -- measuring ---------------------------------------------------------------------------

    def _ensure_tools(self) -> None:
        if self._builder is None:
            self._builder = measure.KernelBuilder(max_workers=self.num_threads, compiler=self.compiler)
        if self._runner is None:
            self._runner = measure.create_runner(self.runner_spec)

    def _start_batch(self, mods: Sequence[tvm.IRModule], args_info: Sequence[Any], on_result) -> _Batch:
        """Build ``mods`` in parallel and start timing them; ``on_result(i, run_secs, error)`` is called
        as each finishes. The local runner times them here, one by one; RPC servers time them in
        parallel in the background until :meth:`_finish_batch`."""
        self._ensure_tools()
        batch = _Batch(self._builder.build([BuilderInput(m, self.tvm_target) for m in mods]), on_result)
        for i, result in enumerate(batch.built):
            if result.error_msg is not None:
                on_result(i, None, _short(result.error_msg))
                continue
            if self._stop:
                break
            inputs = [RunnerInput(result.artifact_path, measure.device_type(self.tvm_target), args_info[i])]
            if self.runner_spec.is_rpc:
                batch.pending.append((i, self._runner.run(inputs)[0]))
            else:  # the local runner measures synchronously: one at a time, committed at once
                batch.report(i, self._runner.run(inputs)[0].result())
        return batch

    def _finish_batch(self, batch: _Batch) -> None:
        """Wait for the batch's remaining timings (committing each as it arrives), then clean up."""
        try:
            while batch.pending:
                still = []
                for i, future in batch.pending:
                    if future.done():
                        batch.report(i, future.result())
                    else:
                        still.append((i, future))
                batch.pending = still
                if batch.pending:
                    time.sleep(0.05)
        finally:
            for result in batch.built:
                measure.remove_artifact(result.artifact_path)

    def _measure(self, mods: Sequence[tvm.IRModule], args_info: Sequence[Any], on_result) -> None:
        """Build, time and clean up ``mods`` (see :meth:`_start_batch`)."""
        self._finish_batch(self._start_batch(mods, args_info, on_result))

    def measure_defaults(self) -> None:
        """Time the default schedule of every task whose baseline is missing or stale."""
        todo = [s for s in self.states if s.default_latency is None]
        if not todo:
            return
        self.reporter.message(f"measuring the default schedules of {len(todo)} tasks ...")
        from tvm.s_tir.meta_schedule.arg_info import ArgInfo

        def done(i: int, secs, error) -> None:
            state = todo[i]
            summary = measure.summarize(secs)
            state.default_latency = summary["latency"] if secs else float("inf")
            self.db.update(self.target, state.task.key, info=self._info(state.task),
                           default={**summary, "fingerprint": state.fingerprint, "error": error})

        self._measure([s.task.default_module(self.tvm_target) for s in todo],
                      [ArgInfo.from_prim_func(s.task.mod["main"]) for s in todo], done)

    # -- the loop ----------------------------------------------------------------------------

    def _search(self, state: TaskState) -> TaskSearch:
        if state.search is None:
            state.search = TaskSearch(state.task, self.tvm_target, self.cost_model, batch=self.batch,
                                      strategy=self.strategy, population=self.population,
                                      num_threads=self.num_threads, seed=self.seed)
            entry = self.db.read(self.target, state.task.key) or {}
            state.search.seed_records(entry.get("records", []))
            self._teach_default(state)
        return state.search

    def _teach_default(self, state: TaskState) -> None:
        """Show the cost model the default schedule and its time: a good point to rank against."""
        if state.default_latency in (None, float("inf")):
            return
        from tvm.s_tir import Schedule
        from tvm.s_tir.meta_schedule.runner import RunnerResult

        sch = Schedule(state.task.default_module(self.tvm_target))
        candidate = MeasureCandidate(sch, state.search.args_info)
        try:
            self.cost_model.update(state.search.context, [candidate], [RunnerResult([state.default_latency], None)])
        except Exception:  # noqa: BLE001 - only a hint for the cost model
            pass

    def _pick(self, busy: TaskState | None = None) -> TaskState | None:
        open_states = [s for s in self.states if s is not busy and not (s.search and s.search.exhausted)
                       and (self.max_trials_per_task is None or s.trials < self.max_trials_per_task)
                       and s.default_latency not in (None, float("inf"))]
        if not open_states:
            return None
        cold = [s for s in open_states if s.trials < self.batch]
        if cold:
            return max(cold, key=lambda s: s.task.weight * (s.current or 0.0))
        return max(open_states, key=lambda s: s.task.weight * (s.current or 0.0) / math.sqrt(1 + s.trials / self.batch))

    def _start_round(self, state: TaskState, limit: int) -> _Batch | None:
        """Propose up to ``limit`` candidates for ``state``'s task, build them, start timing them."""
        search = self._search(state)
        proposals = search.propose(limit)
        if not proposals:
            return None
        measured: list[tuple[str, MeasureCandidate, list[float] | None]] = []

        def done(i: int, secs, error) -> None:
            key, candidate = proposals[i]
            summary = measure.summarize(secs)
            record = search_record(key, candidate, secs, summary["latency"], error, self.runner_spec.describe())
            self.db.update(self.target, state.task.key, info=self._info(state.task), records=[record])
            measured.append((key, candidate, secs))
            state.trials += 1
            state.new_trials += 1
            if summary["latency"] is not None and (state.best_latency is None or summary["latency"] < state.best_latency):
                state.best_latency, state.best_candidate = summary["latency"], key
            self.reporter.measured(state, record)

        self.reporter.task_begin(state, len(proposals))
        batch = self._start_batch([c.sch.mod for _, c in proposals], [c.args_info for _, c in proposals], done)
        batch.state, batch.size, batch.measured = state, len(proposals), measured
        return batch

    def _finish_round(self, batch: _Batch) -> None:
        try:
            self._finish_batch(batch)
        finally:
            batch.state.search.notify(batch.measured)
        self.reporter.task_end(batch.state)

    @contextlib.contextmanager
    def _graceful_interrupt(self):
        """Ctrl-C asks the loop to stop after the measurement under way (a second one stops at once).

        Raising KeyboardInterrupt wherever the signal lands would unwind through TVM's C++ (and come
        out as a bare RuntimeError); the loop checks the flag between measurements instead."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handler(signum, frame):
            if self._stop:
                raise KeyboardInterrupt
            self._stop = True
            self.reporter.message("stopping after the current measurement (Ctrl-C again to stop at once) ...")

        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def run(self) -> TuneResult:
        start = time.monotonic()
        interrupted = False
        try:
            with self._graceful_interrupt():
                self._loop()
            interrupted = self._stop
        except KeyboardInterrupt:
            interrupted = True
        finally:
            self.close()
        if interrupted:
            self.reporter.message(f"interrupted: {sum(s.new_trials for s in self.states)} new records are kept "
                                  f"in {self.db.path}; run the same command again to resume")
        result = self.result(time.monotonic() - start, interrupted)
        self.reporter.finish(result)
        if interrupted:
            raise KeyboardInterrupt
        return result

    def _loop(self) -> None:
        """Rounds until the budget is spent. Over RPC the next round is searched and built while
        the servers still time the previous one."""
        self.measure_defaults()
        self.reporter.start(self)
        started = 0
        in_flight: _Batch | None = None
        try:
            while started < self.remaining and not self._stop:
                if self.deadline is not None and time.monotonic() > self.deadline:
                    self.reporter.message("time budget reached")
                    break
                state = self._pick(busy=in_flight.state if in_flight else None)
                if state is None and in_flight is not None:
                    self._finish_round(in_flight)  # its task may be the only one left
                    in_flight = None
                    continue
                if state is None:
                    self.reporter.message("every task's search space is exhausted")
                    break
                batch = self._start_round(state, min(self.batch, self.remaining - started))
                if in_flight is not None:
                    self._finish_round(in_flight)
                    in_flight = None
                if batch is None:
                    continue
                started += batch.size
                if batch.pending:
                    in_flight = batch
                else:
                    self._finish_round(batch)
        finally:
            if in_flight is not None:
                self._finish_round(in_flight)
        if self.verify and not self._stop:
            self.verify_best()

    def verify_best(self) -> None:
        """Re-time each task's best candidate right beside its default schedule (interleaved) and
        keep both: builds then trust this side-by-side comparison over separate measurements."""
        from .search import apply_trace

        todo = []
        for state in self.states:
            entry = self.db.read(self.target, state.task.key) or {}
            best = best_record(entry)
            verified = entry.get("verified") or {}
            if (best is None or state.default_latency in (None, float("inf"))
                    or (verified.get("candidate") == best["candidate"] and verified.get("fingerprint") == state.fingerprint)):
                continue
            if best["latency"] > 1.2 * state.default_latency:
                continue  # clearly slower: the default stays, no need to re-time
            try:
                todo.append((state, best, apply_trace(state.task.mod, best["trace"]).mod))
            except Exception:  # noqa: BLE001 - a record that does not replay is never applied either
                continue
        if not todo:
            return
        self.reporter.message(f"re-timing {len(todo)} best kernels beside their defaults ...")
        from tvm.s_tir.meta_schedule.arg_info import ArgInfo

        rounds = 3  # default, tuned, default, tuned, ... : load on the machine hits both alike
        mods, infos = [], []
        for state, _, tuned in todo:
            info = ArgInfo.from_prim_func(state.task.mod["main"])
            for _ in range(rounds):
                mods += [state.task.default_module(self.tvm_target), tuned]
                infos += [info, info]
        times: dict[int, list[float]] = {}

        def done(i: int, secs, error) -> None:
            if secs:
                times.setdefault(i, []).extend(secs)

        self._measure(mods, infos, done)
        for n, (state, best, _) in enumerate(todo):
            base = 2 * rounds * n
            default_secs = [t for k in range(rounds) for t in times.get(base + 2 * k, [])]
            tuned_secs = [t for k in range(rounds) for t in times.get(base + 2 * k + 1, [])]
            if not default_secs or not tuned_secs:
                continue
            self.db.update(self.target, state.task.key, verified={
                "candidate": best["candidate"], "fingerprint": state.fingerprint,
                "latency": min(tuned_secs), "default_latency": min(default_secs)})

    def close(self) -> None:
        for state in self.states:
            if state.search is not None:
                state.search.close()
        if self._builder is not None:
            self._builder.shutdown()
            self._builder = None
        if self._runner is not None and hasattr(self._runner, "pool"):
            self._runner.pool.shutdown(wait=False)
        self._runner = None

    def result(self, elapsed: float, interrupted: bool) -> TuneResult:
        from .apply import choose

        reports = []
        entries = {}
        for state in self.states:
            entry = self.db.read(self.target, state.task.key) or {}
            entries[state.task.key] = entry
            choice = choose(entry, state.fingerprint)
            reports.append(TaskReport(state.task.name, state.task.key, state.task.weight, state.task.flops,
                                      choice.default_latency if choice.default_latency is not None else state.default_latency,
                                      choice.tuned_latency if choice.tuned_latency is not None else state.best_latency,
                                      state.trials, choice.record is not None))
        default = sum(r.weight * (r.default_latency or 0.0) for r in reports)
        latency = sum(r.weight * (r.latency or 0.0) for r in reports)
        curve = convergence(self.states, entries)
        plot = None
        if curve:
            plot = report.write_curve(self.db.path, self.model_name, curve, self.default_model_latency(),
                                      f"{self.model_name or 'model'} on {self.target_name}", final=latency)
        return TuneResult(reports, default, latency, sum(s.trials for s in self.states),
                          sum(s.new_trials for s in self.states), curve, self.db.path, plot, elapsed, interrupted)


def search_record(key: str, candidate: MeasureCandidate, secs, latency, error, runner: str) -> dict[str, Any]:
    from .search import record_of
    return record_of(key, candidate, secs, latency, error, runner, time.time())


def convergence(states: Sequence[TaskState], entries: Mapping[str, Mapping[str, Any]]) -> list[tuple[int, float]]:
    """Best model latency after each trial, over every record in the database (earlier runs too)."""
    events = []
    for state in states:
        for record in entries[state.task.key].get("records", []):
            events.append((record.get("time", 0.0), state.task.key, record.get("latency")))
    events.sort(key=lambda e: e[0])
    current = {s.task.key: s.default_latency if s.default_latency not in (None, float("inf")) else None for s in states}
    weights = {s.task.key: s.task.weight for s in states}
    curve = []
    for n, (_, key, latency) in enumerate(events, start=1):
        if latency is not None and (current[key] is None or latency < current[key]):
            current[key] = latency
        curve.append((n, sum(weights[k] * (v or 0.0) for k, v in current.items())))
    return curve


def _short(message: str | None, limit: int = 400) -> str:
    text = (message or "").strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def tune(mod: tvm.IRModule, input_names: Sequence[str], *, db: str | os.PathLike | TuningDatabase,
         target: str | Mapping[str, Any] | None = None, trials: int = 64,
         rpc_tracker: str | None = None, device_key: str | None = None,
         batch: int | None = None, strategy: str = "evolutionary", population: int | None = None,
         num_threads: int | None = None, measure_threads: int | None = None, seed: int = -1,
         time_budget: float | None = None, max_trials_per_task: int | None = None,
         min_repeat_ms: int = 40, verify: bool = True, progress: bool | report.Reporter = True,
         model_name: str | None = None) -> TuneResult:
    """Tune the kernels of a captured model and record every measurement in ``db``.

    Args:
        mod: the captured Relax module (``main`` takes the data inputs, then the parameters).
        input_names: names of the data inputs.
        db: the tuning database directory (created if missing); resumed if it has records.
        target: target name or TVM target dict (default: this host's CPU).
        trials: total measured candidates for this model's kernels, counting those already in
            ``db``: running the same call again after an interruption measures only the rest.
        rpc_tracker: ``HOST:PORT`` of a TVM RPC tracker: candidates are timed on its servers.
        device_key: the key the RPC servers registered with.
        batch: candidates per search round (default: from the budget, 4-16).
        strategy: 'evolutionary' (cost-model guided) or 'replay' (random sampling).
        population: evolutionary search's population (default: from the batch, 64-512).
        num_threads: threads for the search and parallel builds (default: this host's cores).
        measure_threads: threads a kernel uses when timed locally (default: the target's cores).
        seed: random seed for the search (-1: random).
        time_budget: stop after this many seconds even if trials remain.
        max_trials_per_task: at most this many records per task.
        min_repeat_ms: each timing repeats a kernel for at least this long.
        verify: re-time the best kernels beside their defaults at the end.
        progress: show progress on stderr (True), stay quiet (False), or a Reporter.
        model_name: names the convergence plot (``DIR/convergence-<name>.png``).
    Returns:
        a TuneResult (per-task table data, the model's latency before and after, the curve).
    Raises:
        ValueError: bad arguments (unknown strategy, RPC without a device key, no kernels).
        RuntimeError: no RPC server is registered under ``device_key``.
        KeyboardInterrupt: after saving, when interrupted.
    """
    if not isinstance(trials, int) or trials < 0:
        raise ValueError(f"trials: expected a non-negative int, got {trials!r}")
    if (rpc_tracker is None) != (device_key is None):
        raise ValueError("rpc_tracker and device_key: give both to measure over RPC, or neither")
    if rpc_tracker is not None:
        measure.parse_tracker(rpc_tracker)
    target_dict = resolve(target)
    if target_dict.get("kind") != "llvm":
        raise ValueError(f"target: tuning searches CPU (llvm) kernels; {target_dict.get('kind')!r} targets "
                         "use their default schedules")
    if not is_host(target_dict) and rpc_tracker is None:
        raise ValueError(f"target: kernels for {target_dict.get('mtriple')} cannot run on this machine; measure "
                         "them on the device with rpc_tracker= and device_key= (aotnn tune --rpc-tracker --device-key)")
    database = open_database(db)
    threads = int(num_threads or host_cores())
    spec = RunnerSpec(tracker=rpc_tracker, device_key=device_key, min_repeat_ms=min_repeat_ms,
                      num_threads=int(measure_threads or target_dict.get("num-cores") or threads))
    reporter = progress if isinstance(progress, report.Reporter) else (
        report.ConsoleReporter() if progress else report.Reporter())
    tasks = extract_tasks(mod, input_names, to_tvm(target_dict))
    compiler = None
    if not is_host(target_dict):
        from ..embedded import cross_compiler
        compiler = cross_compiler(target_dict)
    tuner = Tuner(tasks, target_dict, database, trials=trials, runner_spec=spec, batch=batch, strategy=strategy,
                  population=population, num_threads=threads, seed=seed, reporter=reporter,
                  time_budget=time_budget, max_trials_per_task=max_trials_per_task, verify=verify,
                  compiler=compiler, model_name=model_name)
    return tuner.run()
