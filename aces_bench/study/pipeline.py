"""One study, end to end: emit -> Harbor job -> collect -> grade -> table -> report."""

from __future__ import annotations

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
from aces_bench.judges.base import Judge
from aces_bench.records.provenance import SkillProvenance
from aces_bench.records.trials import write_grades, write_trials_table
from aces_bench.run import disk
from aces_bench.run.cost import CostCapReached, clear_stop, write_stop
from aces_bench.run.disk import DiskCapReached
from aces_bench.run.outlock import study_lock, usable_output_dir
from aces_bench.run.reuse import decide as decide_reuse
from aces_bench.run.runner import job_config
from aces_bench.study.console import count_failures, finish_console
from aces_bench.study.preflight import PreflightError, preflight_study
from aces_bench.study.provenance import build_provenance
from aces_bench.study.rounds import FixedSchedule, Rounds, Schedule, StopOnPassSchedule
from aces_bench.study.sequential import SequentialSchedule

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


def schedule_for(rounds: Rounds) -> Schedule:
    """The design's schedule over the one round loop: sequential, stop-on-pass, else fixed."""
    if rounds.spec.study.sequential:
        return SequentialSchedule(rounds)
    if rounds.spec.study.stop_on_pass:
        return StopOnPassSchedule(rounds)
    return FixedSchedule(rounds)


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
    rounds = Rounds(spec, emitted, out, jobs_dir, judge)
    schedule = schedule_for(rounds)
    # Baseline and null trials stored by an earlier study with the same inputs are not run again.
    job = job_config(spec, emitted, jobs_dir).job_name
    reuse = decide_reuse(spec, emitted, out, job, whole_tasks=schedule.whole_task_reuse)
    print(reuse.summary(), file=sys.stderr)
    exclude = reuse.tasks() if schedule.whole_task_reuse else frozenset()
    if not spec.study.sequential:
        check_max_trials(spec, (len(emitted.tasks) - len(exclude)) * spec.study.n_attempts)
    write_json(out / "provenance.json",
               build_provenance(spec, skills, jobs_dir / job_config(spec, emitted, jobs_dir, exclude).job_name))
    graded, stopped = rounds.run(schedule, reuse)
    if stopped is None:
        clear_stop(out)  # this run went to the end: an earlier stop no longer describes the folder
        disk.clear_stop(out)
    elif isinstance(stopped, CostCapReached):
        write_stop(out, stopped.stop)
    elif isinstance(stopped, DiskCapReached):
        disk.write_stop(out, stopped.stop)
    write_grades(out / "grades.jsonl", graded, mask=redact_value)
    frame = write_trials_table(out, graded)
    log.info("trials table: %d rows -> %s", len(frame), out / "trials.parquet")
    index = None
    if spec.report:
        from aces_bench.analysis import build_report

        index = build_report(out)
    if spec.budget_dir is None:
        finish_console(out, frame, index)  # a sweep or design prints its own, over every member
    else:
        count_failures(frame)
    if stopped is not None:
        raise stopped
    return out, len(emitted.tasks)

