"""A sequential study (``study.sequential=true``): trials in rounds, each skill stopped when decided.

Per skill (an intervention), its positive cases are put in a seeded random order
(``study.seed`` and the skill's name) and run **cases first**: round k of pass 1 runs
attempt 1 of the next ``round_cases`` cases; once every case ran once, one round per
further attempt runs that attempt of every case (``stats.sequential.SequentialDesign``).
Both arms of a case, and its calibration arms, run in the same round. The skill's
should-not-use cases run whole (every attempt) in its first round. After each round the
round's trials are graded and every undecided skill's gate is tested
(``stats.sequential.analyse``); a decided skill schedules nothing more, the others go on.

A round is one Harbor job per attempt index over that round's task ids
(``<job>-seq<r>-a<attempt>``), run and collected through the same runner and collector
as a fixed study. Baseline and null trials found in the reuse store (``aces_bench.reuse``)
are not run. ``study.max_trials`` (trials run, reuse excluded) stops the study before a
round that would pass it; ``study.max_cost_usd`` stops it when the real cost crosses it.
A skill left undecided then is reported "not shown" with that reason.

Resume: the ledger ``sequential.json`` records the designs, the case orders and every
look; each round's graded trials are kept in ``sequential/round-<r>.jsonl``. A killed
study re-run with the same command finds the completed rounds there (their grades are
not recomputed, so their decisions cannot change), recreates the interrupted round's jobs
with the same configs (Harbor resumes them) and goes on. Every planned trial a stopped
skill never ran is recorded as ``skipped`` with the reason.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sys
from collections import defaultdict
from pathlib import Path

from harbor.job import Job

from aces_bench.attempts import SKIPPED, attempt_job_config, attempt_record
from aces_bench.collect import TrialRecord
from aces_bench.config.spec import RunSpec
from aces_bench.cost import CostGuard, estimate
from aces_bench.emitters.emit import EmitResult
from aces_bench.errors import RunError
from aces_bench.grading import grade_records
from aces_bench.io import write_json
from aces_bench.progress import TrialProgress
from aces_bench.records import GradedTrial, read_grades, write_grades
from aces_bench.reuse import ReusePlan, decide, materialise, store
from aces_bench.runner import (
    discard_cancelled,
    discard_half_written,
    environment_refusal,
    job_config,
    preflight,
    set_offline_defaults,
)
from aces_bench.stats.sequential import DECISION_TEXT, SequentialDesign, SkillData, analyse
from aces_bench.stats.sequential_ledger import LEDGER, Ledger, SkillPlan
from aces_bench.versioning import load_model

log = logging.getLogger("aces_bench.sequential")

ROUNDS_DIR = "sequential"
OUTCOME = "outcome_failed"
"""Per trial, the value the gate reads: the task outcome with a trial that ran and did not
finish (timeout, agent or verifier error) scored 0 (intention to treat); None for an
infrastructure failure, a trial never run or a baseline that saw the target skill."""


def _cases(emitted: EmitResult) -> tuple[dict[tuple[str, str], dict[str, str]], dict[str, set[str]], dict[str, set[str]]]:
    """(skill, case) -> condition -> task id; per skill its positive and its negative case ids."""
    by_case: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    positives: dict[str, set[str]] = defaultdict(set)
    negatives: dict[str, set[str]] = defaultdict(set)
    for task, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True):
        skill = tp.intervention_name
        by_case[(skill, tp.case.id)][tp.condition] = task.task_id
        (negatives if tp.case.is_negative_control else positives)[skill].add(tp.case.id)
    return by_case, positives, negatives


def new_ledger(spec: RunSpec, emitted: EmitResult, job: str) -> Ledger:
    by_case, positives, negatives = _cases(emitted)
    s = spec.study
    skills = {}
    for skill in sorted(set(positives) | set(negatives)):
        order = sorted(positives.get(skill, ()))
        random.Random(f"{s.seed}\x1f{skill}").shuffle(order)
        design = SequentialDesign(n_cases=len(order), n_attempts=s.n_attempts, threshold=s.gate_threshold,
                                  alpha=s.gate_alpha, round_cases=s.sequential_round_cases,
                                  spending=s.sequential_spending) if order else None
        skills[skill] = SkillPlan(skill=skill, design=design, order=order, negatives=sorted(negatives.get(skill, ())),
                                  stopped=None if order else "no positive case: the gate has nothing to test")
    return Ledger(job=job, seed=s.seed, n_attempts=s.n_attempts, trials_fixed=len(emitted.tasks) * s.n_attempts,
                  skills=skills)


def round_units(ledger: Ledger, by_case: dict[tuple[str, str], dict[str, str]], r: int) -> dict[str, list[tuple[str, int]]]:
    """Per undecided skill, the (task id, attempt) pairs of round ``r``."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, sp in ledger.skills.items():
        if sp.decided or sp.design is None or r >= len(sp.design.looks()):
            continue
        _, lo, hi, attempt = sp.design.schedule()[r]
        units = [(tid, attempt) for c in sp.order[lo:hi] for tid in by_case[(name, c)].values()]
        if r == 0:
            units += [(tid, a) for c in sp.negatives for tid in by_case[(name, c)].values()
                      for a in range(1, ledger.n_attempts + 1)]
        out[name] = sorted(units)
    return out


def skill_data(sp: SkillPlan, by_case: dict[tuple[str, str], dict[str, str]],
               graded: dict[tuple[str, int], GradedTrial], n_attempts: int, null_arm: bool) -> SkillData:
    """The skill's per-case paired differences from the trials graded so far."""

    def value(task_id: str | None, attempt: int) -> float | None:
        g = graded.get((task_id, attempt)) if task_id else None
        return getattr(g, OUTCOME) if g is not None else None

    def diffs(case: str, treatment: str) -> list[float | None]:
        tasks = by_case[(sp.skill, case)]
        out = []
        for a in range(1, n_attempts + 1):
            w, b = value(tasks.get(treatment), a), value(tasks.get("baseline"), a)
            out.append(None if w is None or b is None else w - b)
        return out

    return SkillData(order=sp.order, diffs={c: diffs(c, "with_skill") for c in sp.order},
                     negatives={c: [d for d in diffs(c, "with_skill") if d is not None] for c in sp.negatives
                                if _ran(graded, by_case[(sp.skill, c)])},
                     null={c: diffs(c, "null") for c in [*sp.order, *sp.negatives]} if null_arm else None)


def _ran(graded: dict[tuple[str, int], GradedTrial], tasks: dict[str, str]) -> bool:
    return any((tid, 1) in graded for tid in tasks.values())


async def _run_job(config, progress: TrialProgress, guard: CostGuard, spec: RunSpec) -> None:
    job_dir = config.jobs_dir / config.job_name
    if discard_half_written(job_dir):
        log.info("resuming: the round's job result.json was left half-written; Harbor rewrites it")
    dropped = discard_cancelled(job_dir)
    if dropped:
        log.info("resuming: %d cancelled trial(s) of this round will run again", len(dropped))
    try:
        job = await Job.create(config)
    except (FileExistsError, ValueError) as exc:
        raise RunError(f"Harbor refused the round's job: {exc}", where=job_dir,
                       fix="delete that job dir to start the round over") from None
    job.on_trial_started(progress.on_start)
    job.on_trial_ended(progress.on_end)
    job.on_trial_ended(guard.on_end)
    guard.job_task = task = asyncio.ensure_future(job.run())
    try:
        await task
    except ExceptionGroup as group:
        raise environment_refusal(group, spec) or group from None
    except asyncio.CancelledError:
        if not guard.tripped:
            raise
        raise guard.stopped_error(progress.total, job_dir) from None


def _load(out: Path, job: str, fresh: Ledger) -> Ledger | None:
    """The stored ledger of this job, if any; a RunError when it was designed otherwise (a
    resumed study must make its remaining looks under the design it started with)."""
    path = out / LEDGER
    if not path.is_file():
        return None
    ledger = load_model(Ledger, path.read_text(), where=path, cls=RunError,
                        fix="delete sequential.json and sequential/ to start the sequential study over")
    if ledger.job != job:
        return None
    before = {k: (sp.design, sp.order) for k, sp in ledger.skills.items()}
    now = {k: (sp.design, sp.order) for k, sp in fresh.skills.items()}
    if before != now or ledger.seed != fresh.seed:
        changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k)) or ["study.seed"]
        raise RunError(f"this output folder holds a sequential study of the same tasks with another design or case "
                       f"order ({', '.join(changed)}): its looks cannot go on under new settings",
                       where=path, fix="re-run with the settings it started with (study.gate_threshold, gate_alpha, "
                       "sequential_round_cases, sequential_spending, seed), or give the study another study.name")
    return ledger


def _save(out: Path, ledger: Ledger) -> None:
    write_json(out / LEDGER, ledger)


def run_sequential(spec: RunSpec, emitted: EmitResult, out: Path, jobs_dir: Path, judge) -> list[GradedTrial]:
    """Run the study round by round; returns every planned trial graded (stopped skills'
    unrun trials as ``skipped``)."""
    set_offline_defaults()
    preflight(spec, emitted)
    base = job_config(spec, emitted, jobs_dir)
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}
    by_case, _, _ = _cases(emitted)
    fresh = new_ledger(spec, emitted, base.job_name)
    ledger = _load(out, base.job_name, fresh) or fresh
    _save(out, ledger)
    reuse: ReusePlan = decide(spec, emitted, out, base.job_name, whole_tasks=False)
    print(reuse.summary(), file=sys.stderr)
    reused_keys = reuse.keys()
    reused_records = {(r.task_id, r.attempt): r for r in materialise(reuse, plans, jobs_dir)}
    graded: dict[tuple[str, int], GradedTrial] = {}
    rounds = out / ROUNDS_DIR
    for r in range(ledger.rounds_done):
        for g in read_grades(rounds / f"round-{r}.jsonl"):
            graded[(g.task_id, g.attempt)] = g
    n_attempts = spec.study.n_attempts
    null_arm = "null" in spec.study.controls
    est = estimate(spec, ledger.trials_fixed)
    print(f"sequential study: at most {ledger.trials_fixed} trial(s) (the fixed design); rounds stop each skill once "
          f"its gate is decided (threshold {spec.study.gate_threshold:+.3f}, one-sided alpha {spec.study.gate_alpha})",
          file=sys.stderr)
    spent = sum(g.cost_usd or 0.0 for g in graded.values())
    guard = CostGuard(spec.study.max_cost_usd, est.price, spent=spent)
    r = ledger.rounds_done
    while True:
        units_by_skill = round_units(ledger, by_case, r)
        if not units_by_skill:
            break
        units = sorted({u for us in units_by_skill.values() for u in us})
        to_run = [u for u in units if u not in reused_keys]
        cap = spec.study.max_trials
        if cap is not None and ledger.trials_run + len(to_run) > cap:
            note = (f"study.max_trials={cap} reached: round {r + 1} would run {len(to_run)} more trial(s) after "
                    f"{ledger.trials_run}")
            skills = {k: (v if k not in units_by_skill else v.model_copy(update={"stopped": note}))
                      for k, v in ledger.skills.items()}
            ledger = ledger.model_copy(update={"skills": skills, "stop_note": note})
            _save(out, ledger)
            print(f"sequential: {note}; undecided skill(s) stop here", file=sys.stderr)
            break
        cost_line = est.price and estimate(spec, len(to_run)).usd
        print(f"sequential round {r + 1}: {len(to_run)} trial(s) to run for {len(units_by_skill)} undecided skill(s)"
              + (f" (estimated ${cost_line:,.4f})" if cost_line else "")
              + (f"; {len(units) - len(to_run)} reused" if len(units) != len(to_run) else ""), file=sys.stderr)
        by_attempt: dict[int, list[str]] = defaultdict(list)
        for tid, a in to_run:
            by_attempt[a].append(tid)
        records: list[TrialRecord] = []
        progress = TrialProgress(len(to_run))
        with progress:
            for a, tids in sorted(by_attempt.items()):
                config = attempt_job_config(base, a, tids).model_copy(update={"job_name": f"{base.job_name}-seq{r}-a{a}"})
                asyncio.run(_run_job(config, progress, guard, spec))
                job_dir = config.jobs_dir / config.job_name
                records += [attempt_record(job_dir, tid, plans[tid], a) for tid in sorted(tids)]
        records += [reused_records[u] for u in units if u in reused_keys and u in reused_records]
        new = asyncio.run(grade_records(records, spec, judge))
        write_grades(rounds / f"round-{r}.jsonl", new)
        for g in new:
            graded[(g.task_id, g.attempt)] = g
        added = store(spec, records, out)
        if added:
            log.info("stored %d new baseline/null trial(s) for reuse", added)
        skills = dict(ledger.skills)
        for name in units_by_skill:
            sp = skills[name]
            data = skill_data(sp, by_case, graded, n_attempts, null_arm)
            look = analyse(sp.design, r, data, sp.looks)
            skills[name] = sp.model_copy(update={"looks": [*sp.looks, look]})
            if look.stopped:
                print(f"  {name}: {DECISION_TEXT[look.decision]}: {look.reason}", file=sys.stderr)
        ledger = ledger.model_copy(update={"skills": skills, "rounds_done": r + 1,
                                           "trials_run": ledger.trials_run + len(to_run),
                                           "trials_reused": ledger.trials_reused + len(units) - len(to_run)})
        _save(out, ledger)
        r += 1
    print(f"sequential: {ledger.trials_run} trial(s) run, {ledger.trials_reused} reused, of the fixed design's "
          f"{ledger.trials_fixed}", file=sys.stderr)
    for line in ledger.lines():
        print(line, file=sys.stderr)
    return _with_skipped(spec, ledger, emitted, graded, by_case, judge)


def _with_skipped(spec: RunSpec, ledger: Ledger, emitted: EmitResult, graded: dict[tuple[str, int], GradedTrial],
                  by_case: dict[tuple[str, str], dict[str, str]], judge) -> list[GradedTrial]:
    """Every planned (task, attempt): graded when it ran, else a ``skipped`` record with the reason."""
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}
    skipped: list[TrialRecord] = []
    for t in emitted.tasks:
        tp = plans[t.task_id]
        sp = ledger.skills.get(tp.intervention_name)
        for a in range(1, spec.study.n_attempts + 1):
            if (t.task_id, a) in graded:
                continue
            why = (f"sequential: {tp.intervention_name} stopped ({DECISION_TEXT.get(sp.decision, sp.decision)})"
                   if sp is not None else "sequential: not scheduled")
            skipped.append(TrialRecord(task_id=t.task_id, attempt=a, plan=tp, status=SKIPPED, failure_cause=why))
    extra = asyncio.run(grade_records(skipped, spec, judge)) if skipped else []
    out = list(graded.values()) + extra
    return sorted(out, key=lambda g: (g.task_id, g.attempt))

