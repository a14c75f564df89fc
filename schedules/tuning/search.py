"""The search for one task: MetaSchedule's design space, search strategy and a shared cost model.

Each task gets a TuneContext whose design space comes from MetaSchedule's schedule rules for
the target, searched by evolutionary search (or trace replay) and ranked by one XGBoost cost
model shared by all tasks. The search is seeded with the records already in the database:
the cost model is trained on them, the best ones join the initial population, and a
candidate whose scheduled kernel was measured before is dropped instead of measured again.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import tvm
from tvm.ir.utils import derived_object
from tvm.s_tir import Schedule
from tvm.s_tir.meta_schedule import MeasureCandidate, TuneContext, _ffi_api
from tvm.s_tir.meta_schedule.arg_info import ArgInfo
from tvm.s_tir.meta_schedule.cost_model import XGBModel
from tvm.s_tir.meta_schedule.database import MemoryDatabase, TuningRecord, Workload
from tvm.s_tir.meta_schedule.logging import get_logger, get_logging_func
from tvm.s_tir.meta_schedule.mutator import Mutator
from tvm.s_tir.meta_schedule.postproc import DisallowDynamicLoop, RewriteParallelVectorizeUnroll, RewriteReductionBlock
from tvm.s_tir.meta_schedule.runner import RunnerResult
from tvm.s_tir.meta_schedule.schedule_rule import ScheduleRule
from tvm.s_tir.meta_schedule.search_strategy import EvolutionarySearch, ReplayTrace
from tvm.s_tir.meta_schedule.space_generator import PostOrderApply

from .tasks import Task, module_key

_LOG = logging.getLogger(__name__)
STRATEGIES = ("evolutionary", "replay")


def cpu_space() -> PostOrderApply:
    """MetaSchedule's generic LLVM design space, without tensor intrinsics and without RewriteLayout.

    Tensor-intrinsic rules (chosen "from-target" on AVX-512 CPUs) only serve int8 kernels and
    need ``tvm.s_tir.tensor_intrin`` registered (a 16-22 s import). RewriteLayout would make a
    kernel expect its weights in a layout of its own choosing, which the graph does not produce
    (aotnn's defaults already pack weights at graph level).
    """
    # ApplyCustomRule only looks for TOPI-era rules (pool_max...) that no longer exist, and warns.
    rules = [r for r in ScheduleRule.create("llvm") if type(r).__name__ != "ApplyCustomRule"]
    return PostOrderApply(sch_rules=rules,
                          postprocs=[DisallowDynamicLoop(), RewriteParallelVectorizeUnroll(), RewriteReductionBlock()],
                          mutator_probs=Mutator.create("llvm"))


def new_context(mod: tvm.IRModule, target: tvm.target.Target, space: PostOrderApply, strategy: Any,
                name: str, num_threads: int, seed: int) -> TuneContext:
    """A TuneContext, made without ``TuneContext.__init__``'s unconditional tensor-intrinsic import."""
    context = TuneContext.__new__(TuneContext)
    context.__init_handle_by_constructor__(_ffi_api.TuneContext, mod, target, space, strategy, name,
                                           num_threads, seed, get_logging_func(get_logger(__name__)))
    _ffi_api.TuneContextInitialize(context)
    return context


@derived_object
class CappedXGBModel(XGBModel._cls):  # derived_object classes are extended through _cls
    """MetaSchedule's XGBoost cost model with a cap on boosting rounds.

    MetaSchedule trains for up to 10,000 rounds until the training error stops improving for
    ``early_stopping_rounds``: on a 2-core machine that is seconds per retraining, spent in a
    Python callback each round. A few dozen rounds rank candidates as well for our budgets.
    """

    max_rounds: int = 64

    def _train(self, xs: list[np.ndarray], ys: np.ndarray) -> None:  # noqa: D401 - same contract as XGBModel
        try:
            import xgboost as xgb
            from tvm.s_tir.meta_schedule.cost_model.xgb_model import PackSum, _get_custom_call_back
        except ImportError:
            return super()._train(xs, ys)
        d_train = PackSum(xs=xs, ys=ys)
        self.booster = xgb.train(
            self.config.to_dict(), d_train.dmatrix, num_boost_round=self.max_rounds,
            obj=lambda pred, _: d_train.obj_square_error(pred),
            callbacks=[_get_custom_call_back(
                early_stopping_rounds=self.early_stopping_rounds, verbose_eval=self.verbose_eval,
                fevals=[lambda pred, _: d_train.rmse(pred),
                        lambda pred, _: d_train.average_peak_score(pred, self.average_peak_n)],
                evals=[(d_train.dmatrix, "tr")], cvfolds=None)])


def create_cost_model(num_threads: int, num_warmup_samples: int, max_rounds: int = 64) -> XGBModel:
    """XGBoost ranking candidates after ``num_warmup_samples`` measurements (MetaSchedule waits
    for 100 by default: with small budgets it would never rank anything)."""
    model = CappedXGBModel(num_warmup_samples=num_warmup_samples, num_tuning_cores=num_threads,
                           adaptive_training=True, tree_method="auto", early_stopping_rounds=10,
                           verbose_eval=1 << 30)
    model.max_rounds = max_rounds
    return model


def apply_trace(mod: tvm.IRModule, trace_json: Any) -> Schedule:
    """``mod`` scheduled by a stored trace (post-processing steps included)."""
    record = TuningRecord.from_json(trace_json, Workload(mod))
    sch = Schedule(mod)
    record.trace.apply_to_schedule(sch, remove_postproc=False)
    return sch


class TaskSearch:
    """Proposes candidates for one task, never one already measured.

    Args:
        task: the task.
        target: the TVM target.
        cost_model: the cost model shared by all tasks.
        batch: candidates proposed per round.
        strategy: 'evolutionary' or 'replay'.
        population: evolutionary search's population size.
        num_threads: threads the search uses.
        seed: random seed (-1: random).
    """

    def __init__(self, task: Task, target: tvm.target.Target, cost_model: XGBModel, *, batch: int,
                 strategy: str = "evolutionary", population: int = 256, num_threads: int = 1, seed: int = -1):
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy: expected one of {STRATEGIES}, got {strategy!r}")
        self.task = task
        self.cost_model = cost_model
        if strategy == "evolutionary":
            search = EvolutionarySearch(population_size=population, init_min_unmeasured=min(50, population // 2))
        else:
            search = ReplayTrace()
        self.context = new_context(task.mod, target, cpu_space(), search, task.name, num_threads, seed)
        self.database = MemoryDatabase()
        self.workload = self.database.commit_workload(task.mod)
        self.args_info = ArgInfo.from_prim_func(task.mod["main"])
        self.measured: set[str] = set()
        self.exhausted = False
        self._batch = batch
        self._started = False

    def seed_records(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Teach the search the database's records: remember them, seed the population, train
        the cost model. Returns how many were usable."""
        candidates, results = [], []
        for record in records:
            self.measured.add(record["candidate"])
            try:
                sch = apply_trace(self.task.mod, record["trace"])
            except Exception as err:  # noqa: BLE001 - a record from another TVM version
                _LOG.debug("record %s does not replay: %s", record["candidate"], err)
                continue
            secs = record.get("run_secs")
            if secs:
                self.database.commit_tuning_record(TuningRecord(sch.trace, self.workload, [float(s) for s in secs],
                                                                self.context.target, self.args_info))
            candidates.append(MeasureCandidate(sch, self.args_info))
            results.append(RunnerResult(secs, None if secs else "failed"))
        if candidates:
            self.cost_model.update(self.context, candidates, results)
        return len(candidates)

    def _start(self) -> None:
        self.context.pre_tuning(max_trials=1 << 30, num_trials_per_iter=self._batch,
                                design_spaces=self.context.generate_design_space(),
                                database=self.database, cost_model=self.cost_model)
        self._started = True

    def propose(self, limit: int, max_rounds: int = 4) -> list[tuple[str, MeasureCandidate]]:
        """Up to ``limit`` new candidates as (scheduled-kernel hash, candidate); empty when the
        search has nothing new to offer."""
        if self.exhausted:
            return []
        if not self._started:
            self._start()
        for _ in range(max_rounds):
            candidates = self.context.generate_measure_candidates()
            if candidates is None:
                break
            fresh = []
            for candidate in candidates:
                key = module_key(candidate.sch.mod)
                if key not in self.measured and key not in {k for k, _ in fresh}:
                    fresh.append((key, candidate))
            if fresh:
                return fresh[:limit]
            self.context.notify_runner_results([], [])
        self.exhausted = True
        return []

    def notify(self, measured: Sequence[tuple[str, MeasureCandidate, Sequence[float] | None]]) -> None:
        """Report measurements of proposed candidates (hash, candidate, seconds or None)."""
        if not measured:
            return
        candidates = [c for _, c, _ in measured]
        results = [RunnerResult(list(secs) if secs else None, None if secs else "failed") for _, _, secs in measured]
        for key, candidate, secs in measured:
            self.measured.add(key)
            if secs:
                self.database.commit_tuning_record(TuningRecord(candidate.sch.trace, self.workload, list(secs),
                                                                self.context.target, self.args_info))
        self.context.notify_runner_results(candidates, results)
        self.cost_model.update(self.context, candidates, results)

    def close(self) -> None:
        if self._started:
            self.context.post_tuning()
            self._started = False


def record_of(key: str, candidate: MeasureCandidate, run_secs: Sequence[float] | None,
              latency: float | None, error: str | None, runner: str, when: float) -> dict[str, Any]:
    """The database record of one measured candidate."""
    target = None  # the target is the file's; records stay small
    record = TuningRecord(candidate.sch.trace, Workload(candidate.sch.mod), list(run_secs) if run_secs else None,
                          target, candidate.args_info)
    return {"candidate": key, "trace": record.as_json(), "run_secs": list(run_secs) if run_secs else None,
            "latency": latency, "error": error, "runner": runner, "time": when}
