"""One study, end to end: emit -> Harbor job -> collect -> grade -> table -> report."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from dataclasses import dataclass
from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError, RunError
from aces_bench.core.io import write_json
from aces_bench.emitters import emit_study
from aces_bench.emitters.plan import StudyPlan, plan_study
from aces_bench.graders.redact import redact_value
from aces_bench.grading.grade import grade_records
from aces_bench.judges.base import Judge
from aces_bench.records.provenance import SkillProvenance
from aces_bench.records.trials import GradedTrial, write_grades, write_trials_table
from aces_bench.run import disk
from aces_bench.run.attempts import AttemptPolicy, collect_attempts, run_attempts
from aces_bench.run.attempts import not_run_by_cap as _not_run_by_cap
from aces_bench.run.collect import TrialRecord, collect_job
from aces_bench.run.cost import CostCapReached, clear_stop, write_stop
from aces_bench.run.disk import DiskCapReached
from aces_bench.run.outlock import study_lock, usable_output_dir
from aces_bench.run.reuse import decide as decide_reuse
from aces_bench.run.reuse import materialise
from aces_bench.run.reuse import store as store_for_reuse
from aces_bench.run.runner import (
    UniformFailure,
    job_config,
)
from aces_bench.study.console import count_failures, finish_console
from aces_bench.study.preflight import PreflightError, preflight_study
from aces_bench.study.provenance import build_provenance

log = logging.getLogger("aces_bench.pipeline")


def _check_same_skills(spec: RunSpec, out: Path) -> None:
    """Refuse to mix two studies of different skills in one output dir.

    Sweep folders are named by overrides without path-valued keys (they would nest
    folders), so two members differing only in skill paths would share a folder.
    """
    previous = out / "provenance.json"
    if not previous.is_file():
        return
    try:
        old = json.loads(previous.read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    keys = {"skill.paths": (old.get("skill", {}).get("paths"), [str(p) for p in spec.skill.paths]),
            "decoys.paths": (old.get("decoys", {}).get("paths"), [str(p) for p in spec.decoys.paths])}
    changed = [k for k, (before, now) in keys.items() if before is not None and before != now]
    if changed:
        raise RunError(
            f"this output dir holds a study with different {', '.join(changed)}",
            where=out,
            fix="use another study.name or hydra.run.dir; in a sweep over paths set hydra.sweep.subdir=${hydra.job.num}",
        )


class RoundGrades:
    """Grades trials as stop-on-pass rounds need them (pass is the graded ``final_pass``,
    decided once, ``aces_bench/core/modes.py``), and reuses them for the study's grades."""

    def __init__(self, spec: RunSpec, judge) -> None:
        self.spec, self.judge = spec, judge
        self.graded: dict[tuple[str, int], GradedTrial] = {}

    async def passed(self, record: TrialRecord) -> bool | None:
        key = (record.task_id, record.attempt)
        if key not in self.graded:
            self.graded[key] = (await grade_records([record], self.spec, self.judge))[0]
        return self.graded[key].final_pass

    def passed_now(self, record: TrialRecord) -> bool | None:
        return asyncio.run(self.passed(record))

    async def grade_all(self, records: list[TrialRecord]) -> list[GradedTrial]:
        def fresh(r: TrialRecord) -> bool:
            g = self.graded.get((r.task_id, r.attempt))
            return g is not None and g.trial_name == r.trial_name and g.status == r.status

        todo = [r for r in records if not fresh(r)]
        for r, g in zip(todo, await grade_records(todo, self.spec, self.judge), strict=True):
            self.graded[(r.task_id, r.attempt)] = g
        return [self.graded[(r.task_id, r.attempt)] for r in records]


def check_max_trials(spec: RunSpec, trials: int) -> None:
    """A fixed study that would run more than ``study.max_trials`` trials is refused before it starts."""
    cap = spec.study.max_trials
    if cap is not None and trials > cap:
        raise RunError(f"the study would run {trials} trial(s), above study.max_trials={cap}",
                       where="study.max_trials",
                       fix="raise study.max_trials, run fewer cases or attempts, or set study.sequential=true "
                           "(a sequential study stops starting rounds at the cap)")


@dataclass(frozen=True)
class Prepared:
    """A study planned and through its preflight: what ``run_member`` runs without checking again."""

    plan: StudyPlan
    judge: Judge


def prepare(spec: RunSpec) -> Prepared:
    """Plan the study and run every check that can refuse it (study/preflight.py), once,
    before a long emission and before any trial: every problem is reported together."""
    plan = plan_study(spec)
    for note in plan.notes:
        log.warning(note)
    return Prepared(plan, preflight_study(spec, plan))


def prepare_all(specs: list[RunSpec]) -> list[Prepared]:
    """``prepare`` every member of a design before the first one runs: a design its fifth
    member's preflight refuses is refused before anything is emitted or spent, with every
    member's problems at once (a problem several members share is said once)."""
    prepared: list[Prepared] = []
    problems: dict[str, AcesError] = {}
    for spec in specs:
        try:
            prepared.append(prepare(spec))
        except PreflightError as exc:
            problems.update((str(p), p) for p in exc.problems)
        except AcesError as exc:
            problems.setdefault(str(exc), exc)
    if len(problems) == 1:
        raise next(iter(problems.values()))
    if problems:
        raise PreflightError(list(problems.values()))
    return prepared


def run_member(spec: RunSpec, prepared: Prepared | None = None) -> tuple[Path, int]:
    """One ordinary study; returns its output dir and how many task dirs it emitted.
    ``prepared``: its plan and preflight when the caller ran them (a design, ``prepare_all``).

    The output folder is locked for the whole run (``outlock``): a second run on it
    refuses at once, before it writes anything.
    """
    out = usable_output_dir(Path(spec.output_dir))
    with study_lock(out):
        return _run_locked(spec, out, prepared)


def _run_locked(spec: RunSpec, out: Path, prepared: Prepared | None = None) -> tuple[Path, int]:
    _check_same_skills(spec, out)
    prepared = prepared or prepare(spec)
    plan, judge = prepared.plan, prepared.judge
    emitted = emit_study(spec, out / "tasks", plan)
    log.info("emitted %d task dirs (%d new, %d reused) in %s", len(emitted.tasks), emitted.written,
             emitted.reused, emitted.tasks_dir)
    skills = [
        SkillProvenance(name=s.name, role=plan.support_roles.get(s.name, role), content_hash=s.content_hash,
                        version=s.version, path=str(s.path))
        for role, group in (("target", plan.targets), ("support", plan.support), ("decoy", plan.decoys))
        for s in group
    ]
    jobs_dir = out / "jobs"
    if spec.emit_only:
        write_json(out / "provenance.json", build_provenance(spec, skills, None))
        log.info("emit_only=true: not running trials")
        return out, len(emitted.tasks)
    # (emit_only runs nothing, so it needs no agent CLI: the job config reads the installed one.)
    base_job = job_config(spec, emitted, jobs_dir)
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, plan.tasks, strict=True)}
    stopped: RunError | None = None
    if spec.study.sequential:
        from aces_bench.study.sequential import run_sequential

        write_json(out / "provenance.json", build_provenance(spec, skills, jobs_dir / base_job.job_name))
        graded, stopped = run_sequential(spec, emitted, out, jobs_dir, judge)
        if isinstance(stopped, CostCapReached):
            write_stop(out, stopped.stop)
        elif stopped is None:
            clear_stop(out)
    else:
        # Baseline and null trials stored by an earlier study with the same inputs are not run again.
        reuse = decide_reuse(spec, emitted, out, base_job.job_name)
        print(reuse.summary(), file=sys.stderr)
        exclude = frozenset(t for t, _ in reuse.keys())
        check_max_trials(spec, (len(emitted.tasks) - len(exclude)) * spec.study.n_attempts)
        write_json(out / "provenance.json",
                   build_provenance(spec, skills, jobs_dir / job_config(spec, emitted, jobs_dir, exclude).job_name))
        rounds = RoundGrades(spec, judge)
        try:
            job_dirs = asyncio.run(run_attempts(spec, emitted, jobs_dir, passed=rounds.passed, exclude=exclude))
            clear_stop(out)  # this run went to the end: an earlier cost stop no longer describes the folder
            disk.clear_stop(out)
        except (CostCapReached, DiskCapReached, UniformFailure) as exc:
            # The trials that finished are tabled and reported; the error is raised after.
            stopped = exc
            job_dirs = _existing_job_dirs(spec, emitted, jobs_dir, exclude)
            if isinstance(exc, CostCapReached):
                write_stop(out, exc.stop)
            elif isinstance(exc, DiskCapReached):
                disk.write_stop(out, exc.stop)
        policy = AttemptPolicy.from_spec(spec)
        run_plans = {k: v for k, v in plans.items() if k not in exclude}
        if policy.stop_on_pass:
            # One Harbor job per attempt round; passed cases' later attempts are "skipped".
            records = collect_attempts(job_dirs, run_plans, policy, passed=rounds.passed_now)
        else:
            records = collect_job(job_dirs[0], run_plans, spec.study.n_attempts) if job_dirs else []
        if isinstance(stopped, CostCapReached):
            records = [_not_run_by_cap(r) for r in records]
        records += materialise(reuse, plans, jobs_dir, tasks_dir=emitted.tasks_dir)
        added = store_for_reuse(spec, records, out)
        if added:
            log.info("stored %d baseline/null trial(s) for reuse by later studies", added)
        graded = asyncio.run(rounds.grade_all(records))
    write_grades(out / "grades.jsonl", graded, mask=redact_value)
    frame = write_trials_table(out, graded)
    log.info("trials table: %d rows -> %s", len(frame), out / "trials.parquet")
    index = None
    if spec.report:
        from aces_bench.reports import build_report

        index = build_report(out)
    if spec.budget_dir is None:
        finish_console(out, frame, index)  # a sweep or design prints its own, over every member
    else:
        count_failures(frame)
    if stopped is not None:
        raise stopped
    return out, len(emitted.tasks)


def _existing_job_dirs(spec: RunSpec, emitted, jobs_dir: Path, exclude: frozenset[str] = frozenset()) -> list[Path]:
    """The job dirs a stopped run left, in attempt order (one per stop-on-pass round)."""
    name = job_config(spec, emitted, jobs_dir, exclude).job_name
    if not spec.study.stop_on_pass:
        return [jobs_dir / name]
    rounds = [jobs_dir / f"{name}-attempt{k}" for k in range(1, spec.study.n_attempts + 1)]
    while rounds and not rounds[-1].is_dir():
        rounds.pop()
    return rounds
