"""The study's one round loop: run -> collect -> grade -> store -> record, once for every design.

A study's tasks are emitted once; then rounds run them. Each round is one or more Harbor
jobs (``Job``), each run under the cost guard and the failure watch with its
infrastructure reruns (``run.attempts.with_infra_retries``), collected into one record
per (task, attempt) (``run.collect.collect_job``), graded with the round's reused
trials, and stored for reuse by later studies; after the last round the loop records
them all (``grades.jsonl``, the trials table, what stopped the study). What a design
changes is only its **schedule**: which trials the next round runs and when nothing is
left to run.

- ``FixedSchedule``: one round, every attempt of every task in one Harbor job.
- ``StopOnPassSchedule`` (``study.stop_on_pass``): round k runs attempt k of the tasks
  with no passing attempt yet (the graded ``final_pass``, ``core/modes.py``); a task's
  attempts after its pass are recorded as ``skipped``.
- ``study.sequential.SequentialSchedule`` (``study.sequential``): case rounds, each skill
  stopped once its gate is decided.

A round the cost cap, the disk cap or a failure shared by both arms stopped is collected
and graded like any other (what finished is data), the schedule is told, and no round
follows. Every planned trial no round ran gets the schedule's reason (``unrun``), so the
table has one row per planned (task, attempt), never a silent gap.

Layer: the study box (it drives run/ and grading/); the preflight ran before, once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd
from harbor.models.job.config import JobConfig

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.emitters.emit import EmitResult
from aces_bench.emitters.plan import TaskPlan
from aces_bench.graders.redact import redact_value
from aces_bench.grading.grade import StudyGrader
from aces_bench.records.study import record_graded
from aces_bench.records.trials import TABLE_PARQUET, GradedTrial, write_graded
from aces_bench.run import cost, disk
from aces_bench.run.attempts import (
    SKIPPED,
    attempt_job_config,
    early_stop_rule,
    not_run_by_cap,
    retry_infra_failures,
    with_infra_retries,
)
from aces_bench.run.collect import TrialRecord, collect_job
from aces_bench.run.cost import CostCapReached
from aces_bench.run.disk import DiskCapReached
from aces_bench.run.progress import one_line
from aces_bench.run.reuse import ReuseKeys, ReusePlan, materialise, store
from aces_bench.run.runner import UniformFailure, excluding, run_config, set_offline_defaults

log = logging.getLogger("aces_bench.rounds")

Unit = tuple[str, int]
"""One planned trial: (task id, attempt)."""

NOT_STARTED = "no trial was started for this task attempt"
STOPS = (CostCapReached, DiskCapReached, UniformFailure)


@dataclass(frozen=True)
class Job:
    """One Harbor job of a round: ``tasks`` with ``config.n_attempts`` attempts each, recorded
    as attempt ``attempt`` when the job runs one attempt of each (``None``: attempts 1..n)."""

    config: JobConfig
    tasks: tuple[str, ...]
    attempt: int | None = None

    @property
    def dir(self) -> Path:
        return self.config.jobs_dir / self.config.job_name


@dataclass(frozen=True)
class Round:
    """What one round runs (``jobs``, in order) and which reused trials it grades with them;
    ``label``: each job shows one progress line, under it."""

    jobs: list[Job]
    reused: list[Unit] = field(default_factory=list)
    label: str | None = None


class Schedule(Protocol):
    """A design: which trials each round runs (see the module docstring)."""

    whole_task_reuse: bool  # reuse a task only when every attempt is stored (its attempts run in one job)

    def begin(self, reuse: ReusePlan) -> dict[Unit, GradedTrial]:
        """Called once before the first round: the reuse plan; returns trials graded by an
        earlier, interrupted run of this study that no round runs again."""

    def next_round(self) -> Round | None:
        """The next round, or None when the design has nothing more to run."""

    def finished(self, rnd: Round, new: list[GradedTrial], graded: dict[Unit, GradedTrial],
                 stopped: RunError | None) -> None:
        """``rnd``'s trials are graded (``new``; ``graded``: every trial so far); ``stopped``: what
        stopped the study in this round, after which no round follows."""

    def unrun(self, unit: Unit) -> tuple[str, str]:
        """Status and cause of a planned trial no round ran."""

    def ordered(self, graded: dict[Unit, GradedTrial], reused: Iterable[Unit]) -> list[GradedTrial]:
        """The study's trials in the order its grades and its table list them."""


@dataclass
class Rounds:
    """One study's rounds: what they all share, made once by the study before the first round.

    ``base``: the study's whole Harbor job (``runner.job_config``), which every round's job
    narrows; ``grader``: how its trials are graded; ``keys``: its reuse keys (None when it
    stores no trial for reuse, ``StudySpec.reuses_trials``)."""

    spec: RunSpec
    emitted: EmitResult
    out: Path
    base: JobConfig
    grader: StudyGrader
    keys: ReuseKeys | None
    plans: dict[str, TaskPlan] = field(init=False)

    def __post_init__(self) -> None:
        self.plans = {t.task_id: tp for t, tp in zip(self.emitted.tasks, self.emitted.plan.tasks, strict=True)}

    def run(self, schedule: Schedule, reuse: ReusePlan) -> tuple[pd.DataFrame, RunError | None]:
        """Run ``schedule``'s rounds and record them: every planned trial graded, in the
        schedule's order, in ``grades.jsonl`` and the trials table (returned), and what stopped
        the study early, if anything (returned too: the caller raises it after the report)."""
        set_offline_defaults()
        reused = {(r.task_id, r.attempt): r for r in
                  materialise(reuse, self.plans, self.base.jobs_dir, tasks_dir=self.emitted.tasks_dir)}
        graded = dict(schedule.begin(reuse))
        stopped: RunError | None = None
        while stopped is None and (rnd := schedule.next_round()) is not None:
            records, stopped = self._run_round(rnd)
            records += [reused[u] for u in rnd.reused if u in reused]
            new = asyncio.run(self.grader.grade(records))
            graded.update(((g.task_id, g.attempt), g) for g in new)
            added = store(self.keys, records, self.out)
            if added:
                log.info("stored %d baseline/null trial(s) for reuse by later studies", added)
            schedule.finished(rnd, new, graded, stopped)
        unrun = []
        for unit in self.planned():
            if unit not in graded:
                status, cause = schedule.unrun(unit)
                unrun.append(TrialRecord(task_id=unit[0], attempt=unit[1], plan=self.plans[unit[0]], status=status,
                                         failure_cause=cause))
        if isinstance(stopped, CostCapReached):
            unrun = [not_run_by_cap(r) for r in unrun]
        if unrun:
            graded.update(((g.task_id, g.attempt), g) for g in asyncio.run(self.grader.grade(unrun)))
        return self._record(schedule.ordered(graded, reused), stopped), stopped

    def _record(self, graded: list[GradedTrial], stopped: RunError | None) -> pd.DataFrame:
        """Write the study's grades and trials table, and what stopped it (a run that went to
        the end clears an earlier stop, which no longer describes the folder); record them
        and the spend ledger in the study's record."""
        if stopped is None:
            cost.clear_stop(self.out)
            disk.clear_stop(self.out)
        elif isinstance(stopped, CostCapReached):
            cost.write_stop(self.out, stopped.stop)
        elif isinstance(stopped, DiskCapReached):
            disk.write_stop(self.out, stopped.stop)
        frame = write_graded(self.out, graded, mask=redact_value)
        record_graded(self.out)
        cost.record_cost(self.out, self.spec)
        log.info("trials table: %d rows -> %s", len(frame), self.out / TABLE_PARQUET)
        return frame

    def planned(self) -> list[Unit]:
        """Every planned trial, by task then attempt."""
        return [(t, a) for t in sorted(self.plans) for a in range(1, self.spec.study.n_attempts + 1)]

    def _run_round(self, rnd: Round) -> tuple[list[TrialRecord], RunError | None]:
        """Run the round's jobs in order (a stop ends the round); collect every job that started."""
        watch = early_stop_rule(self.emitted)
        started: list[Job] = []
        stopped: RunError | None = None
        for job in rnd.jobs:
            started.append(job)
            retry_infra_failures(job.dir)

            async def run(job: Job = job) -> None:
                await run_config(self.spec, job.config, total=len(job.tasks) * job.config.n_attempts,
                                 stops_early=watch)

            try:
                with one_line(rnd.label) if rnd.label else nullcontext():
                    asyncio.run(with_infra_retries(job.dir, run, self.spec.study.max_infra_retries,
                                                   dict.fromkeys(job.tasks, job.config.n_attempts)))
            except STOPS as exc:
                stopped = exc
                break
        records = [r for job in started for r in self._collect(job)]
        if isinstance(stopped, CostCapReached):
            records = [not_run_by_cap(r) for r in records]
        return records, stopped

    def _collect(self, job: Job) -> list[TrialRecord]:
        """One record per (task, attempt) the job was to run, interrupted or never-started ones included."""
        plans = {t: self.plans[t] for t in job.tasks}
        records = collect_job(job.dir, plans, job.config.n_attempts)
        if job.attempt is None:
            return records
        return [r.model_copy(update={"attempt": job.attempt}) for r in records]


def whole_task_job(rounds: Rounds, reuse: ReusePlan) -> Job:
    """The study's Harbor job of every attempt of every task the reuse plan does not hold."""
    exclude = reuse.tasks()
    return Job(excluding(rounds.base, rounds.emitted, exclude), tuple(sorted(t for t in rounds.plans if t not in exclude)))


def _reused_last(graded: dict[Unit, GradedTrial], reused: Iterable[Unit]) -> list[GradedTrial]:
    """Trials run, by (task, attempt), then the reused ones in the reuse plan's order."""
    reused = [u for u in reused if u in graded]
    rest = set(reused)
    return [graded[u] for u in sorted(graded) if u not in rest] + [graded[u] for u in reused]


class FixedSchedule:
    """One round: every attempt of every task not reused, in one Harbor job."""

    whole_task_reuse = True

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds
        self.round: Round | None = None

    def begin(self, reuse: ReusePlan) -> dict[Unit, GradedTrial]:
        self.round = Round([whole_task_job(self.rounds, reuse)], reused=reuse.units())
        return {}

    def next_round(self) -> Round | None:
        rnd, self.round = self.round, None
        return rnd

    def finished(self, rnd, new, graded, stopped) -> None:
        pass

    def unrun(self, unit: Unit) -> tuple[str, str]:
        return "not_run", NOT_STARTED

    def ordered(self, graded, reused) -> list[GradedTrial]:
        return _reused_last(graded, reused)


class StopOnPassSchedule:
    """Round k: attempt k of every task with no passing attempt yet, as one Harbor job of one
    attempt each (``<job>-attempt<k>``); a passed task's later attempts are ``skipped``."""

    whole_task_reuse = True

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds
        self.base: JobConfig | None = None
        self.remaining: list[str] = []
        self.reused: list[Unit] = []
        self.attempt = 0
        self.passed_at: dict[str, int] = {}

    def begin(self, reuse: ReusePlan) -> dict[Unit, GradedTrial]:
        job = whole_task_job(self.rounds, reuse)
        self.base, self.remaining, self.reused = job.config, list(job.tasks), reuse.units()
        return {}

    def next_round(self) -> Round | None:
        if self.attempt >= self.rounds.spec.study.n_attempts or not (self.remaining or self.reused):
            return None
        self.attempt += 1
        jobs = [Job(attempt_job_config(self.base, self.attempt, self.remaining), tuple(self.remaining), self.attempt)]
        reused, self.reused = self.reused, []
        return Round(jobs if self.remaining else [], reused=reused)

    def finished(self, rnd, new, graded, stopped) -> None:
        a = self.attempt
        for task in self.remaining:
            if graded[(task, a)].final_pass:
                self.passed_at[task] = a
        self.remaining = [t for t in self.remaining if t not in self.passed_at]

    def unrun(self, unit: Unit) -> tuple[str, str]:
        task, attempt = unit
        if task in self.passed_at and attempt > self.passed_at[task]:
            return SKIPPED, f"skipped: attempt {self.passed_at[task]} passed (study.stop_on_pass)"
        return "not_run", NOT_STARTED

    def ordered(self, graded, reused) -> list[GradedTrial]:
        return _reused_last(graded, reused)
