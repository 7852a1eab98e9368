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

The design is a schedule (``SequentialSchedule``) of the study's one round loop
(``study.rounds``): a round is one Harbor job per attempt index over that round's task
ids (``<job>-seq<r>-a<attempt>``), run, collected, graded and stored by the same loop,
with the same runner, cost guard, failure watch and infrastructure retries, as a fixed study. Baseline and null
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

import logging
import random
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.core.gate import DECISION_TEXT, GateSettings
from aces_bench.core.io import write_json
from aces_bench.core.versioning import load_model
from aces_bench.emitters.emit import EmitResult
from aces_bench.graders.redact import redact_value
from aces_bench.records.gate import GateCases
from aces_bench.records.sequential import LEDGER, Ledger, SequentialDesign, SkillPlan
from aces_bench.records.study import record_part
from aces_bench.records.trials import GradedTrial, read_grades, rows_to_frame, write_grades
from aces_bench.run.attempts import SKIPPED, attempt_job_config
from aces_bench.run.cost import estimate
from aces_bench.run.reuse import ReusePlan
from aces_bench.stats.gate import skill_cases
from aces_bench.stats.sequential_family import Asked, analyse_family
from aces_bench.study.rounds import Job, Round, Rounds

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
    record_part(out, "sequential", Ledger, stage="sequential")


class SequentialSchedule:
    """The sequential design as a schedule of the study's round loop (``study.rounds``): case
    rounds per undecided skill, the gate asked after each (see the module docstring)."""

    whole_task_reuse = False  # single attempts are reused: a round runs one attempt index per job

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds
        spec, emitted = rounds.spec, rounds.emitted
        self.base = rounds.base
        self.by_case = _cases(emitted)[0]
        fresh = new_ledger(spec, emitted, self.base.job_name)
        ledger = _load(rounds.out, self.base.job_name, fresh) or fresh
        self.ledger = ledger.model_copy(update={"stop_note": None})
        _save(rounds.out, self.ledger)
        self.settings = gate_settings(spec)
        self.reused: set[tuple[str, int]] = set()
        self.r = self.ledger.rounds_done
        self.asked: dict[str, list[tuple[str, int]]] = {}
        self.to_run = 0

    def begin(self, reuse: ReusePlan) -> dict[tuple[str, int], GradedTrial]:
        """Rounds graded by an earlier run are read back, never graded again (their decisions stand)."""
        self.reused = reuse.keys()
        g = self.settings
        print(f"sequential study: at most {self.ledger.trials_fixed} trial(s) (the fixed design); rounds stop each "
              f"skill once the gate is decided (threshold {g.threshold:+.3f}, one-sided alpha {g.alpha:g}, at least "
              f"{g.min_cases} cases won; docs/gate.md)", file=sys.stderr)
        done = {}
        for r in range(self.ledger.rounds_done):
            for trial in read_grades(self.rounds.out / ROUNDS_DIR / f"round-{r}.jsonl"):
                done[(trial.task_id, trial.attempt)] = trial
        return done

    def next_round(self) -> Round | None:
        ledger, r = self.ledger, self.r
        self.asked = round_units(ledger, self.by_case, r)
        if not self.asked:
            return self._end(None)
        units = sorted({u for us in self.asked.values() for u in us})
        to_run = [u for u in units if u not in self.reused]
        cap = self.rounds.spec.study.max_trials
        if cap is not None and ledger.trials_run + len(to_run) > cap:
            note = (f"study.max_trials={cap} reached: round {r + 1} would run {len(to_run)} more trial(s) after "
                    f"{ledger.trials_run}")
            skills = {k: (v if k not in self.asked else v.model_copy(update={"stopped": note}))
                      for k, v in ledger.skills.items()}
            self._save(ledger.model_copy(update={"skills": skills, "stop_note": note}))
            print(f"sequential: {note}; undecided skill(s) stop here", file=sys.stderr)
            return self._end(None)
        est = estimate(self.rounds.spec, len(to_run))
        print(f"sequential round {r + 1}: {len(to_run)} trial(s) to run for {len(self.asked)} undecided skill(s)"
              + (f" (estimated ${est.usd:,.4f})" if est.usd else "")
              + (f"; {len(units) - len(to_run)} reused" if len(units) != len(to_run) else ""), file=sys.stderr)
        by_attempt: dict[int, list[str]] = defaultdict(list)
        for tid, a in to_run:
            by_attempt[a].append(tid)
        jobs = [Job(attempt_job_config(self.base, a, tids).model_copy(
                    update={"job_name": f"{self.base.job_name}-seq{r}-a{a}"}), tuple(sorted(tids)), a)
                for a, tids in sorted(by_attempt.items())]
        self.to_run = len(to_run)
        return Round(jobs, reused=[u for u in units if u in self.reused], label=f"sequential round {r + 1}")

    def finished(self, rnd: Round, new: list[GradedTrial], graded: dict[tuple[str, int], GradedTrial],
                 stopped: RunError | None) -> None:
        """A finished round is kept (``sequential/round-<r>.jsonl``) and every asked skill looked at;
        a stopped one is not looked at: re-running (a higher cap, a fixed setup) resumes it."""
        ledger, r = self.ledger, self.r
        if stopped is not None:
            note = f"stopped in round {r + 1}: {stopped}"
            self._save(ledger.model_copy(update={"stop_note": note}))
            print(f"sequential: {note}; undecided skill(s) stop here", file=sys.stderr)
            self._end(None)
            return
        write_grades(self.rounds.out / ROUNDS_DIR / f"round-{r}.jsonl", new, mask=redact_value)
        record_part(self.rounds.out, f"round:{r}", GradedTrial, stage="sequential")
        frame = trials_frame(graded)
        skills = dict(ledger.skills)
        for name, result in family_looks(ledger, frame, self.asked, r, self.settings).items():
            skills[name] = skills[name].model_copy(update={"looks": [*skills[name].looks, result]})
            if result.stopped:
                print(f"  {name}: {DECISION_TEXT[result.decision]}: {result.reason}", file=sys.stderr)
        units = len({u for us in self.asked.values() for u in us})
        self._save(ledger.model_copy(update={"skills": skills, "rounds_done": r + 1,
                                             "trials_run": ledger.trials_run + self.to_run,
                                             "trials_reused": ledger.trials_reused + units - self.to_run}))
        self.r += 1

    def unrun(self, unit: tuple[str, int]) -> tuple[str, str]:
        """A planned trial no round ran: its skill stopped, or the study did."""
        tp = self.rounds.plans[unit[0]]
        sp = self.ledger.skills.get(tp.intervention_name)
        if sp is None:
            return SKIPPED, "sequential: not scheduled"
        if sp.decided:
            return SKIPPED, f"sequential: {tp.intervention_name} stopped ({DECISION_TEXT.get(sp.decision, sp.decision)})"
        return SKIPPED, f"sequential: not run ({self.ledger.stop_note or 'the study stopped'})"

    def ordered(self, graded: dict[tuple[str, int], GradedTrial], reused) -> list[GradedTrial]:
        return [graded[u] for u in sorted(graded)]

    def _save(self, ledger: Ledger) -> None:
        self.ledger = ledger
        _save(self.rounds.out, ledger)

    def _end(self, rnd: Round | None) -> Round | None:
        """The study's last words: trials run against the fixed design's, and each skill's decision."""
        ledger = self.ledger
        print(f"sequential: {ledger.trials_run} trial(s) run, {ledger.trials_reused} reused, of the fixed design's "
              f"{ledger.trials_fixed}", file=sys.stderr)
        for line in ledger.lines():
            print(line, file=sys.stderr)
        return rnd
