"""One study, end to end: emit -> Harbor job -> collect -> grade -> table -> report."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError
from aces_bench.emitters import emit_study
from aces_bench.emitters.emit import EmittedTask
from aces_bench.emitters.plan import StudyPlan, plan_study
from aces_bench.grading.grade import StudyGrader
from aces_bench.judges.base import Judge
from aces_bench.records.study import record_part
from aces_bench.run.reuse import ReuseKeys, ReusePlan
from aces_bench.run.reuse import decide as decide_reuse
from aces_bench.run.runner import check_max_trials, excluding, job_config
from aces_bench.study.console import count_failures, finish_console
from aces_bench.study.outlock import check_same_skills, study_lock, usable_output_dir
from aces_bench.study.preflight import PreflightError, preflight_study
from aces_bench.study.provenance import record_run
from aces_bench.study.rounds import FixedSchedule, Rounds, Schedule, StopOnPassSchedule
from aces_bench.study.sequential import SequentialSchedule

log = logging.getLogger("aces_bench.pipeline")


def schedule_for(rounds: Rounds) -> Schedule:
    """The design's schedule over the one round loop: sequential, stop-on-pass, else fixed."""
    if rounds.spec.study.sequential:
        return SequentialSchedule(rounds)
    if rounds.spec.study.stop_on_pass:
        return StopOnPassSchedule(rounds)
    return FixedSchedule(rounds)


@dataclass(frozen=True)
class Prepared:
    """A study planned and through its preflight: what ``run_member`` runs without checking again."""

    plan: StudyPlan
    judge: Judge


def prepare(spec: RunSpec) -> Prepared:
    """Plan the study and run every check that can refuse it (study/preflight.py), once,
    before a long emission and before any trial: every problem is reported together."""
    return _checked(spec, _plan(spec))


def _plan(spec: RunSpec) -> StudyPlan:
    plan = plan_study(spec)
    for note in plan.notes:
        log.warning(note)
    return plan


def _checked(spec: RunSpec, plan: StudyPlan) -> Prepared:
    """``plan`` through the study's preflight (every problem at once, or its judge)."""
    return Prepared(plan, preflight_study(spec, plan))


Budget = Callable[[list[tuple[RunSpec, int]]], None]


def prepare_all(specs: list[RunSpec], budget: Budget | None = None) -> list[Prepared]:
    """``prepare`` every member of a design before the first one runs: a design its fifth
    member's preflight refuses is refused before anything is emitted or spent, with every
    member's problems at once (a problem several members share is said once).

    ``budget``: the design's cost check, given each planned member's spec and trials; its
    problem is listed with the members' (a member refused before its plan was made is not
    in it, so a budget it refuses is refused with fewer members than the design has)."""
    prepared: list[Prepared] = []
    planned: list[tuple[RunSpec, int]] = []
    problems: dict[str, AcesError] = {}

    def note(exc: AcesError) -> None:
        for p in exc.problems if isinstance(exc, PreflightError) else [exc]:
            problems.setdefault(str(p), p)

    for spec in specs:
        try:
            plan = _plan(spec)
            planned.append((spec, len(plan.tasks) * spec.study.n_attempts))
            prepared.append(_checked(spec, plan))
        except AcesError as exc:
            note(exc)
    if budget is not None:
        try:
            budget(planned)
        except AcesError as exc:
            note(exc)
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
        check_same_skills(out, [str(p) for p in spec.skill.paths], [str(p) for p in spec.decoys.paths])
        prepared = prepared or prepare(spec)
        return _run_prepared(spec, out, prepared)


def _run_prepared(spec: RunSpec, out: Path, prepared: Prepared) -> tuple[Path, int]:
    plan, judge = prepared.plan, prepared.judge
    emitted = emit_study(spec, out / "tasks", plan)
    record_part(out, "plan", EmittedTask, stage="emit")
    log.info("emitted %d task dirs (%d new, %d reused) in %s", len(emitted.tasks), emitted.written,
             emitted.reused, emitted.tasks_dir)
    job_dir = None
    if not spec.emit_only:  # emit_only runs nothing, so it needs no agent CLI: the job config reads the installed one
        base = job_config(spec, emitted, out / "jobs")
        rounds = Rounds(spec, emitted, out, base, StudyGrader.of(spec, judge),
                        ReuseKeys.of_job(spec, base) if spec.study.reuses_trials else None)
        schedule = schedule_for(rounds)
        # Baseline and null trials stored by an earlier study with the same inputs are not run again.
        reuse = decide_reuse(spec, emitted, out, base.job_name, rounds.keys, whole_tasks=schedule.whole_task_reuse)
        record_part(out, "reuse", ReusePlan, stage="run")
        print(reuse.summary(), file=sys.stderr)
        exclude = reuse.tasks() if schedule.whole_task_reuse else frozenset()
        job = excluding(base, emitted, exclude)
        if not spec.study.sequential:  # a sequential study stops starting rounds at the cap instead
            check_max_trials(spec, (len(emitted.tasks) - len(exclude)) * spec.study.n_attempts)
        job_dir = job.jobs_dir / job.job_name
    record_run(out, spec, plan, job_dir)
    if spec.emit_only:
        log.info("emit_only=true: not running trials")
        return out, len(emitted.tasks)
    frame, stopped = rounds.run(schedule, reuse)
    index = None
    if spec.report:
        from aces_bench.analysis import build_report

        index = build_report(out)  # records summary.json as the study's statistics part
    if spec.budget_dir is None:
        finish_console(out, frame, index)  # a sweep or design prints its own, over every member
    else:
        count_failures(frame)
    if stopped is not None:
        raise stopped
    return out, len(emitted.tasks)

