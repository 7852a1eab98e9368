"""A sequential study (``study.sequential=true``): trials in rounds, each skill stopped when decided.

Per skill (an intervention), its positive cases are put in a seeded random order
(``study.seed`` and the skill's name) and run in **case rounds**: round k runs the next
``round_cases`` cases of the order whole, every attempt of both arms and of its
calibration arms (``stats.sequential.SequentialDesign``); a round never adds attempts to
a case an earlier round ran. The skill's should-not-use cases run whole in its first
round too. After each round the round's trials are graded and every undecided skill's
gate is asked (``stats.sequential.analyse``, at its Holm level across the study's skills,
``stats.sequential_family``) on the data the gate itself extracts from every trial so far
(``stats.gate.skill_cases``: per case the mean difference of ``final_pass``, an arm's
timeouts and crashes counted as not passed); a decided skill schedules nothing more, the
others go on.

A round is one Harbor job per attempt index over that round's task ids
(``<job>-seq<r>-a<attempt>``), run and collected through the same runner, cost guard,
failure watch, infrastructure retries and collector as a fixed study. Baseline and null
trials found in the reuse store (``aces_bench.run.reuse``) are not run. ``study.max_trials``
(trials run, reuse excluded) stops the study before a round that would pass it (a skill
left undecided then reads "does not reach threshold", with that reason);
``study.max_cost_usd`` stops it when the real cost crosses it (the interrupted round is
not analysed; re-running with a higher cap resumes it).

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

import pandas as pd

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.core.io import write_json
from aces_bench.core.versioning import load_model
from aces_bench.emitters.emit import EmitResult
from aces_bench.graders.redact import redact_value
from aces_bench.grading.grade import grade_records
from aces_bench.records.trials import GradedTrial, read_grades, rows_to_frame, write_grades
from aces_bench.run.attempts import (
    SKIPPED,
    AttemptPolicy,
    _with_infra_retries,
    attempt_job_config,
    attempt_record,
    early_stop_rule,
    not_run_by_cap,
    retry_infra_failures,
)
from aces_bench.run.collect import TrialRecord
from aces_bench.run.cost import CostCapReached, estimate
from aces_bench.run.progress import one_line
from aces_bench.run.reuse import ReusePlan, decide, materialise, store
from aces_bench.run.runner import UniformFailure, job_config, run_config, set_offline_defaults
from aces_bench.stats.gate import GateCases, GateSettings, skill_cases
from aces_bench.stats.sequential import DECISION_TEXT, SequentialDesign
from aces_bench.stats.sequential_family import Asked, analyse_family
from aces_bench.stats.sequential_ledger import LEDGER, Ledger, SkillPlan

log = logging.getLogger("aces_bench.sequential")

ROUNDS_DIR = "sequential"


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
        design = SequentialDesign(n_cases=len(order), n_attempts=s.n_attempts, gate=gate_settings(spec),
                                  round_cases=s.sequential_round_cases) if order else None
        skills[skill] = SkillPlan(skill=skill, design=design, order=order, negatives=sorted(negatives.get(skill, ())),
                                  stopped=None if order else "no positive case: the gate has nothing to test")
    # Written with its version: a payload without one is read as version 1 (``core.versioning.migrate``).
    return Ledger(schema_version=Ledger.SCHEMA_VERSION, job=job, seed=s.seed, n_attempts=s.n_attempts, trials_fixed=len(emitted.tasks) * s.n_attempts,
                  skills=skills)


def round_units(ledger: Ledger, by_case: dict[tuple[str, str], dict[str, str]], r: int) -> dict[str, list[tuple[str, int]]]:
    """Per undecided skill, the (task id, attempt) pairs of round ``r``."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, sp in ledger.skills.items():
        if sp.decided or sp.design is None or r >= len(sp.design.looks()):
            continue
        lo, hi = sp.design.schedule()[r]
        cases = sp.order[lo:hi] + (sp.negatives if r == 0 else [])
        units = [(tid, a) for c in cases for tid in by_case[(name, c)].values()
                 for a in range(1, ledger.n_attempts + 1)]
        out[name] = sorted(units)
    return out


def gate_settings(spec: RunSpec) -> GateSettings:
    """The gate's settings of this study (``study.gate``), as the report's verdict column reads them."""
    return GateSettings(**spec.study.gate.model_dump())


def trials_frame(graded: dict[tuple[str, int], GradedTrial]) -> pd.DataFrame:
    """The trials table of the trials graded so far (the rows ``trials.parquet`` will hold)."""
    return rows_to_frame([g.to_row() for g in graded.values()])


def look_cases(sp: SkillPlan, frame: pd.DataFrame) -> GateCases:
    """The skill's data at a look: what the gate itself extracts (``gate.skill_cases``) from
    every trial graded so far, i.e. the cases of the rounds so far, each with every attempt."""
    rows = frame.loc[frame["skill"].astype(str) == sp.skill] if len(frame) else frame
    return skill_cases(rows, sp.skill)


def family_looks(ledger: Ledger, frame: pd.DataFrame, asked: dict, r: int, settings: GateSettings) -> dict:
    """Round ``r``'s look of every skill in ``asked``, at its Holm levels across the study's
    skills (``stats.sequential_family``: the family is every skill with a positive case;
    the skills earlier rounds decided "helps" or "harms" have left it)."""
    family = [sp for sp in ledger.skills.values() if sp.design is not None]
    questions = {}
    for name in asked:
        sp = ledger.skills[name]
        questions[name] = Asked(sp.design, r, look_cases(sp, frame), list(sp.looks))
    return analyse_family(questions, settings, k=len(family),
                          helped=sum(sp.decision == "helps" for sp in family),
                          harmed=sum(sp.decision == "harms" for sp in family))


def unwritten_design_fields(text: str) -> list[str]:
    """The design settings a stored ledger does not record (a ledger written before they
    existed): reading it would fill them with today's defaults, a stopping rule the study
    did not start with."""
    import json

    fields = set(SequentialDesign.model_fields)
    missing: set[str] = set()
    for sp in (json.loads(text).get("skills") or {}).values():
        if isinstance(sp, dict) and isinstance(sp.get("design"), dict):
            missing |= fields - set(sp["design"])
    return sorted(missing)


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
    unwritten = unwritten_design_fields(path.read_text())
    if unwritten:
        raise RunError(f"this output folder holds a sequential study whose designs were written without "
                       f"{', '.join(unwritten)} (an older aces-bench): today's defaults would change its stopping "
                       "rule between looks", where=path,
                       fix="finish it with the aces-bench that started it, or give the study another study.name")
    before = {k: (sp.design, sp.order) for k, sp in ledger.skills.items()}
    now = {k: (sp.design, sp.order) for k, sp in fresh.skills.items()}
    if before != now or ledger.seed != fresh.seed:
        changed = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k)) or ["study.seed"]
        raise RunError(f"this output folder holds a sequential study of the same tasks with another design or case "
                       f"order ({', '.join(changed)}): its looks cannot go on under new settings",
                       where=path, fix="re-run with the settings it started with (study.gate.*, "
                       "sequential_round_cases, seed), or give the study another study.name")
    return ledger


def _save(out: Path, ledger: Ledger) -> None:
    write_json(out / LEDGER, ledger)


def run_sequential(spec: RunSpec, emitted: EmitResult, out: Path, jobs_dir: Path,
                   judge) -> tuple[list[GradedTrial], RunError | None]:
    """Run the study round by round; returns every planned trial graded (stopped skills'
    unrun trials as ``skipped``) and the error that stopped it early (the cost cap, a
    failure shared by every first trial), which the caller raises after the report.
    The study's one preflight (``study.preflight``) ran before anything was emitted."""
    set_offline_defaults()
    base = job_config(spec, emitted, jobs_dir)
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}
    by_case, _, _ = _cases(emitted)
    fresh = new_ledger(spec, emitted, base.job_name)
    ledger = _load(out, base.job_name, fresh) or fresh
    ledger = ledger.model_copy(update={"stop_note": None})
    _save(out, ledger)
    reuse: ReusePlan = decide(spec, emitted, out, base.job_name, whole_tasks=False)
    print(reuse.summary(), file=sys.stderr)
    reused_keys = reuse.keys()
    reused_records = {(r.task_id, r.attempt): r for r in materialise(reuse, plans, jobs_dir, tasks_dir=emitted.tasks_dir)}
    graded: dict[tuple[str, int], GradedTrial] = {}
    rounds = out / ROUNDS_DIR
    for r in range(ledger.rounds_done):
        for g in read_grades(rounds / f"round-{r}.jsonl"):
            graded[(g.task_id, g.attempt)] = g
    g_set = gate_settings(spec)
    print(f"sequential study: at most {ledger.trials_fixed} trial(s) (the fixed design); rounds stop each skill once "
          f"the gate is decided (threshold {g_set.threshold:+.3f}, one-sided alpha {g_set.alpha:g}, at least "
          f"{g_set.min_cases} cases won; docs/gate.md)", file=sys.stderr)
    policy = AttemptPolicy.from_spec(spec)
    watch = early_stop_rule(emitted)
    stopped: RunError | None = None
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
        est = estimate(spec, len(to_run))
        print(f"sequential round {r + 1}: {len(to_run)} trial(s) to run for {len(units_by_skill)} undecided skill(s)"
              + (f" (estimated ${est.usd:,.4f})" if est.usd else "")
              + (f"; {len(units) - len(to_run)} reused" if len(units) != len(to_run) else ""), file=sys.stderr)
        by_attempt: dict[int, list[str]] = defaultdict(list)
        for tid, a in to_run:
            by_attempt[a].append(tid)
        records: list[TrialRecord] = []
        for a, tids in sorted(by_attempt.items()):
            config = attempt_job_config(base, a, tids).model_copy(update={"job_name": f"{base.job_name}-seq{r}-a{a}"})
            job_dir = config.jobs_dir / config.job_name
            retry_infra_failures(job_dir)

            async def run_round(config=config, tids=tids) -> None:
                await run_config(spec, config, total=len(tids), stops_early=watch)

            try:
                with one_line(f"sequential round {r + 1}"):  # one progress line per round
                    asyncio.run(_with_infra_retries(job_dir, run_round, policy, dict.fromkeys(tids, 1)))
            except (CostCapReached, UniformFailure) as exc:
                stopped = exc
            records += [attempt_record(job_dir, tid, plans[tid], a) for tid in sorted(tids)]
            if stopped is not None:
                break
        if stopped is not None:
            # The round did not finish: its trials are reported, no look is made on them, and
            # re-running (a higher cap, a fixed setup) resumes the round where it stopped.
            if isinstance(stopped, CostCapReached):
                records = [not_run_by_cap(x) for x in records]
            for g in asyncio.run(grade_records(records, spec, judge)):
                graded[(g.task_id, g.attempt)] = g
            note = f"stopped in round {r + 1}: {stopped}"
            ledger = ledger.model_copy(update={"stop_note": note})
            _save(out, ledger)
            print(f"sequential: {note}; undecided skill(s) stop here", file=sys.stderr)
            break
        records += [reused_records[u] for u in units if u in reused_keys and u in reused_records]
        new = asyncio.run(grade_records(records, spec, judge))
        write_grades(rounds / f"round-{r}.jsonl", new, mask=redact_value)
        for g in new:
            graded[(g.task_id, g.attempt)] = g
        added = store(spec, records, out)
        if added:
            log.info("stored %d new baseline/null trial(s) for reuse", added)
        frame = trials_frame(graded)
        skills = dict(ledger.skills)
        for name, result in family_looks(ledger, frame, units_by_skill, r, g_set).items():
            skills[name] = skills[name].model_copy(update={"looks": [*skills[name].looks, result]})
            if result.stopped:
                print(f"  {name}: {DECISION_TEXT[result.decision]}: {result.reason}", file=sys.stderr)
        ledger = ledger.model_copy(update={"skills": skills, "rounds_done": r + 1,
                                           "trials_run": ledger.trials_run + len(to_run),
                                           "trials_reused": ledger.trials_reused + len(units) - len(to_run)})
        _save(out, ledger)
        r += 1
    print(f"sequential: {ledger.trials_run} trial(s) run, {ledger.trials_reused} reused, of the fixed design's "
          f"{ledger.trials_fixed}", file=sys.stderr)
    for line in ledger.lines():
        print(line, file=sys.stderr)
    return _with_skipped(spec, ledger, emitted, graded, by_case, judge), stopped


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
            why = ("sequential: not scheduled" if sp is None else
                   f"sequential: {tp.intervention_name} stopped ({DECISION_TEXT.get(sp.decision, sp.decision)})"
                   if sp.decided else f"sequential: not run ({ledger.stop_note or 'the study stopped'})")
            skipped.append(TrialRecord(task_id=t.task_id, attempt=a, plan=tp, status=SKIPPED, failure_cause=why))
    extra = asyncio.run(grade_records(skipped, spec, judge)) if skipped else []
    out = list(graded.values()) + extra
    return sorted(out, key=lambda g: (g.task_id, g.attempt))

