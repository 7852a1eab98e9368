"""Attempts: ``study.n_attempts``, a pass threshold, stop-on-pass.

Attempt content is identical (a task dir is emitted once and reused), so attempts
only change how trials are scheduled. A trial that failed for infrastructure (shown:
before the agent started, or a model provider's error; ``collect.classify``) is rerun,
at most ``study.max_infra_retries`` times per scheduled trial; whatever an agent or a
skill caused is its arm's failure and never rerun (a rerun would give a flaky skill
more chances than its baseline). Without stop-on-pass, Harbor runs all
``n_attempts`` in one job (``runner.run_job``). With it, attempts run as successive
Harbor jobs of one attempt each, the k-th over the tasks with no passing attempt
yet; every later attempt of a passed task is recorded as ``skipped`` (with the
attempt that passed), never as missing.

pass@k over these attempts is computed once, by ``aces_bench.stats.passk``.

Layer: above ``collect`` and ``runner`` (it runs rounds and reads their trials),
below grading; the emitters know nothing of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from harbor.models.job.config import JobConfig
from pydantic import BaseModel, ConfigDict

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.emitters.emit import EmitResult
from aces_bench.emitters.plan import TaskPlan
from aces_bench.run.collect import TrialRecord, archive_infra_failures, classify, collect_job, read_trials
from aces_bench.run.runner import job_config, run_config, run_job, set_offline_defaults

SKIPPED = "skipped"


PassedFn = Callable[[TrialRecord], bool | None]
"""Whether an attempt passed: the graded ``final_pass`` (``aces_bench/core/modes.py``),
which the pipeline supplies; pass is decided there once, never here."""


class AttemptPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    n_attempts: int
    pass_threshold: float
    stop_on_pass: bool
    max_infra_retries: int = 0

    @classmethod
    def from_spec(cls, spec: RunSpec) -> AttemptPolicy:
        s = spec.study
        return cls(n_attempts=s.n_attempts, pass_threshold=spec.grading.pass_threshold, stop_on_pass=s.stop_on_pass,
                   max_infra_retries=s.max_infra_retries)


def attempt_job_config(base: JobConfig, attempt: int, task_ids: Sequence[str]) -> JobConfig:
    """The Harbor job of one stop-on-pass round: one attempt of ``task_ids``."""
    dataset = base.datasets[0].model_copy(update={"task_names": sorted(task_ids)})
    return base.model_copy(update={
        "n_attempts": 1,
        "datasets": [dataset],
        "job_name": f"{base.job_name}-attempt{attempt}",
    })


def _one_attempt(job_dir: Path, task_id: str, plan: TaskPlan, attempt: int) -> TrialRecord | None:
    """The trial of ``task_id`` in a one-attempt job dir (None if there is none)."""
    for trial_dir, result in read_trials(job_dir)[0]:
        name = Path(str(result.config.task.path)).name if result.config.task.path else result.task_name
        if name.removeprefix("aces/") == task_id:
            status, cause = classify(result)
            return TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status=status, failure_cause=cause,
                               trial_name=result.trial_name, trial_dir=trial_dir, result=result)
    return None


def attempt_record(job_dir: Path, task_id: str, plan: TaskPlan, attempt: int) -> TrialRecord:
    """The record of ``task_id``'s trial in a one-attempt job dir, as attempt ``attempt``;
    an interrupted or never-started trial is collected as the single-job collector says."""
    record = _one_attempt(job_dir, task_id, plan, attempt)
    if record is None:
        record = collect_job(job_dir, {task_id: plan}, 1)[0].model_copy(update={"attempt": attempt})
    return record


def collect_attempts(job_dirs: Sequence[Path], plans: dict[str, TaskPlan], policy: AttemptPolicy,
                     passed: PassedFn) -> list[TrialRecord]:
    """One record per (task, attempt) from stop-on-pass rounds (``job_dirs[k-1]`` is attempt k).

    An attempt after a pass is ``skipped``; an attempt whose round never ran it (an
    interrupted sweep) is collected as the single-job collector would (``not_run``).
    """
    records: list[TrialRecord] = []
    for task_id in sorted(plans):
        plan = plans[task_id]
        passed_at: int | None = None
        for attempt in range(1, policy.n_attempts + 1):
            if passed_at is not None:
                records.append(TrialRecord(
                    task_id=task_id, attempt=attempt, plan=plan, status=SKIPPED,
                    failure_cause=f"skipped: attempt {passed_at} passed (study.stop_on_pass)",
                ))
                continue
            if attempt > len(job_dirs):
                records.append(TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status="not_run",
                                           failure_cause="no trial was started for this task attempt"))
                continue
            record = _one_attempt(job_dirs[attempt - 1], task_id, plan, attempt)
            if record is None:
                # Interrupted or never started: the single-job collector says which.
                missing = collect_job(job_dirs[attempt - 1], {task_id: plan}, 1)[0]
                records.append(missing.model_copy(update={"attempt": attempt}))
                continue
            records.append(record)
            if passed(record):
                passed_at = attempt
    return records


def stops_early(result) -> bool:
    """Which failures, shared by a study's first trials, stop it early: infrastructure and
    agent errors (a backend that cannot start, a CLI or endpoint that refuses every call),
    never a timeout or a verifier's verdict, which are the arm's own data."""
    return classify(result)[0] in ("infra_error", "agent_error")


def early_stop_rule(emitted: EmitResult):
    """The failure watch's rule: a failure that may stop the study (``stops_early``) and the
    arm of its trial. The watch stops only when the same failure hit both arms: a skill
    that crashes every with-skill trial is a result about that skill, not a broken setup
    (and a hostile skill must not be able to stop its own measurement)."""
    from aces_bench.core.conditions import graded_as

    sides = {t.task_id: graded_as(tp.condition) for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}

    def rule(result) -> str | None:
        if not stops_early(result):
            return None
        path = result.config.task.path if result.config and result.config.task else None
        task = Path(str(path)).name if path else str(result.task_name)
        return sides.get(task.removeprefix("aces/"), "unknown")

    return rule


def retry_infra_failures(job_dir: Path) -> list[str]:
    """Remove the trial dirs of trials that failed for an infrastructure cause (``classify``),
    so that resuming runs them again (Harbor keeps any trial with a result); return their names.

    Their spend stays in the study's ledger: the money was spent.
    """
    from aces_bench.core.io import remove_tree

    dropped: list[str] = []
    for trial_dir, result in read_trials(job_dir)[0]:
        if classify(result)[0] == "infra_error":
            remove_tree(trial_dir, ignore_errors=True)
            dropped.append(trial_dir.name)
    if dropped:
        import logging

        logging.getLogger("aces_bench.run").info(
            "resuming: %d trial(s) that failed for an infrastructure cause will run again", len(dropped))
    return dropped


async def _with_infra_retries(job_dir: Path, run: Callable[[], Awaitable[object]], policy: AttemptPolicy,
                              attempts_per_task: dict[str, int]) -> None:
    """Run the job, then rerun (Harbor's resume) the trials shown to be infrastructure
    failures, at most ``max_infra_retries`` times per scheduled trial (``retries.json``
    counts them); those left are collected as ``infra_error``: excluded, counted."""
    await run()
    budget = {task: n * policy.max_infra_retries for task, n in attempts_per_task.items()}
    for _ in range(policy.max_infra_retries):
        if not archive_infra_failures(job_dir, budget):
            return
        await run()


async def run_attempts(spec: RunSpec, emitted: EmitResult, jobs_dir: Path,
                       passed: Callable[[TrialRecord], Awaitable[bool | None]] | None = None,
                       exclude: frozenset[str] = frozenset()) -> list[Path]:
    """Run the study's attempts; returns the job dir of each round (attempt order).

    Without stop-on-pass this is the single Harbor job of ``runner.run_job``. Trials that
    failed for infrastructure (``collect.classify``) are rerun up to
    ``study.max_infra_retries`` times each. With stop-on-pass, ``passed`` (the graded
    ``final_pass``, required then) decides which tasks the next round runs.
    ``exclude``: task ids no round runs (reused baseline trials).
    Re-running resumes: each round's job name is derived from the study's job name.
    The study's one preflight (``study.preflight``) ran before anything was emitted.
    """
    policy = AttemptPolicy.from_spec(spec)
    base = job_config(spec, emitted, jobs_dir, exclude)
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)
             if t.task_id not in exclude}
    if not policy.stop_on_pass:
        job_dir = base.jobs_dir / base.job_name
        retry_infra_failures(job_dir)

        async def once() -> None:
            await run_job(spec, emitted, jobs_dir, exclude, stops_early=early_stop_rule(emitted))

        await _with_infra_retries(job_dir, once, policy, dict.fromkeys(plans, policy.n_attempts))
        return [job_dir]
    if passed is None:
        raise RunError("study.stop_on_pass needs the graded pass of each attempt", where="aces_bench.run.attempts",
                       fix="run the study through aces_bench.study.entry.run_study")
    set_offline_defaults()
    remaining = sorted(plans)
    job_dirs: list[Path] = []
    for attempt in range(1, policy.n_attempts + 1):
        config = attempt_job_config(base, attempt, remaining)
        job_dir = config.jobs_dir / config.job_name
        job_dirs.append(job_dir)
        if not remaining:
            continue  # nothing left to try: the round's records are all "skipped"
        retry_infra_failures(job_dir)

        async def run_round(config: JobConfig = config, n: int = len(remaining)) -> None:
            await run_config(spec, config, total=n, stops_early=early_stop_rule(emitted))

        await _with_infra_retries(job_dir, run_round, policy, dict.fromkeys(remaining, 1))
        still = []
        for task_id in remaining:
            record = _one_attempt(job_dir, task_id, plans[task_id], attempt)
            if record is None or not await passed(record):
                still.append(task_id)
        remaining = still
    return job_dirs


def not_run_by_cap(record: TrialRecord) -> TrialRecord:
    """A trial the cost cap kept from starting (or that it held at its start) is not run, by the cap."""
    if record.result is None and record.status in ("not_run", "infra_error"):
        return record.model_copy(update={"status": "not_run",
                                         "failure_cause": "not run: the study stopped at study.max_cost_usd"})
    return record
