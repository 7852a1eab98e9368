"""``aces-bench dataset refine <skill-dir> --from-results <dir>``: learn from passing trials.

From a results dir (``grades.jsonl``, else ``trials.parquet``; trajectories at
``<trial_dir>/agent/trajectory.json``), for each case of the skill:
- the tool-call steps every passing with-skill trial shares become the proposed
  ``expected_behavior``, after EVAL.md's directives (which always stay first);
- the final answer enough passing trials agree on becomes the proposed ``expected_output``.
Proposals are written only where no author value exists (the field is empty, the case
is generated, or an earlier refine proposed it; ``proposed`` records which). Cases from
``eval.config`` and EVAL.md's expected answers are the author's and are only reported.

An agent's answer is ground truth only under all of these, each refusal said per case:
- the case has deterministic checks (a reward of 1.0 for want of any check is no
  evidence the answer is right), and only trials that passed every one of them count
  (reward 1.0, and every check passed in the trial's ``verifier/details.json`` when it
  is there); trials merely at ``--pass-threshold`` lend behaviours, never answers;
- the agreed answer passes every one of the case's own checks on the answer file
  (re-applied to its text with the verifier's semantics);
- it does not contradict the case's current ``expected_output``: every number and
  identifier-like value (``INV-1018``) the current text states is in the answer. A
  weak check (``contains "EUR"``) passed by a wrong total never overwrites the right
  one. An author who decides the current expected output is the wrong one confirms
  the case by id (``--confirm <case-id>``) and the proposal is made.
A draft confirmed by id is also reviewed: its ``status: draft`` is dropped (with
``--apply``), so a study runs it without ``skill.accept_drafts=true``.
Only steps that touch a skill (reading its SKILL.md, running its scripts,
activating it) become behaviours; a generic ``sed`` or ``ls`` is how one agent
worked, not what the skill requires. The result is shown as a unified diff of the
evals file to review; ``--apply`` writes it.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from aces_bench.cases.evalmd import EVAL_MD, EvalIntent, find_eval_md, intent_cases, read_intent
from aces_bench.cases.formats import read_assets, render_suite
from aces_bench.cases.model import EvalCase, EvalSuite
from aces_bench.core.errors import EvalsError, validation_lines
from aces_bench.core.io import write_text
from aces_bench.datasets.lift import (
    aligned_answer,
    common_steps,
    normalise_answer,
    trial_steps,
)
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.tool_calls import build_view
from aces_bench.inputs.skills import load_skill
from aces_bench.inputs.trialfiles import read_trial_file
from aces_bench.reports.records import PROVENANCE_FILE, read_provenance, workspace_dirs
from aces_bench.verifier.check_answer import evaluate_check, numbers_in

GRADES_FILE = "grades.jsonl"
TABLE_FILE = "trials.parquet"
ANSWER_COPY = Path("artifacts/workspace/answer.txt")
# Where the verifier's copy of the final workspace lands: mounted environments (above), else Harbor's
# download of /logs/artifacts keeps the container path.
ANSWER_COPIES = (ANSWER_COPY, Path("artifacts/logs/artifacts/workspace/answer.txt"))
VERIFIER_DETAILS = Path("verifier/details.json")
# A value a text states besides its numbers: an identifier that starts with a letter and
# holds a digit (INV-1018, ORD_77, v2); "10kg" is a number and its unit.
_VALUE_TOKEN = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z_-]*\d[\w-]*(?![\w-])")


@dataclass(frozen=True)
class TrialOutcome:
    """What refine needs of one trial, from either results format."""

    case_id: str
    condition: str
    status: str
    reward: float | None
    trial_dir: Path | None
    final_answer: str | None


@dataclass
class CaseEvidence:
    passing: list[TrialOutcome] = field(default_factory=list)
    """Trials at or above the pass threshold: their shared steps become behaviours."""
    verified: list[TrialOutcome] = field(default_factory=list)
    """Passing trials that passed every deterministic check: only their answers may become ground truth."""
    unverified: list[str] = field(default_factory=list)
    steps: list[list[str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


@dataclass
class RefineReport:
    path: Path
    written: bool = False
    changes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    suite: EvalSuite | None = None
    diff: str = ""

    def render(self) -> str:
        state = "wrote" if self.written else ("proposed (not written; review the diff, then --apply)"
                                              if self.changes else "unchanged")
        lines = [f"{state}: {self.path}"]
        lines += [f"changed {c}" for c in self.changes] or ["no proposal"]
        lines += [f"kept {s}" for s in self.skipped]
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        return "\n".join(lines)


def _resolve_trial_dir(raw: str | None, trial_name: str | None, results_dir: Path) -> Path | None:
    candidates = []
    if raw:
        candidates += [Path(raw), results_dir / raw]
    if trial_name:
        candidates += sorted(results_dir.glob(f"jobs/*/{trial_name}"))
    return next((c for c in candidates if c.is_dir()), None)


def read_outcomes(results_dir: Path, skill_name: str) -> list[TrialOutcome]:
    """The trials of one skill in a results dir; grades.jsonl preferred, trials.parquet otherwise."""
    results_dir = Path(results_dir)
    grades = results_dir / GRADES_FILE
    rows: list[dict] = []
    if grades.is_file():
        from aces_bench.records.trials import GradedTrial

        for n, line in enumerate(grades.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(GradedTrial.model_validate_json(line).model_dump())
            except ValidationError as err:
                raise EvalsError(
                    f"line {n} is not a graded trial: " + "; ".join(validation_lines(err)[:3]),
                    where=grades,
                    fix="point --from-results at a study output dir written by this aces-bench version",
                ) from None
    elif (results_dir / TABLE_FILE).is_file():
        import pandas as pd

        rows = pd.read_parquet(results_dir / TABLE_FILE).to_dict("records")
    else:
        raise EvalsError(
            f"no {GRADES_FILE} or {TABLE_FILE} in the results dir",
            where=results_dir,
            fix="point --from-results at a study output dir (it holds grades.jsonl and trials.parquet)",
        )
    out = []
    for r in rows:
        if r.get("skill") != skill_name:
            continue
        trial_dir = _resolve_trial_dir(r.get("trial_dir"), r.get("trial_name"), results_dir)
        # The retained answer file is what the verifier checked; grades.jsonl's copy is redacted.
        answer = None
        for copy in ANSWER_COPIES if trial_dir is not None else ():
            read = read_trial_file(trial_dir / copy, limit=1024 * 1024)  # the trial wrote it
            if read.ok:
                answer = read.text()
                break
        if answer is None:
            answer = r.get("final_answer")
        reward = r.get("reward")
        out.append(TrialOutcome(
            case_id=str(r["case_id"]), condition=str(r["condition"]), status=str(r["status"]),
            reward=None if reward is None or math.isnan(reward) else float(reward),
            trial_dir=trial_dir, final_answer=answer,
        ))
    return out


def failed_checks(trial_dir: Path | None) -> list[str] | None:
    """The checks a trial's verifier recorded as failed (``verifier/details.json``); None when unrecorded."""
    if trial_dir is None:
        return None
    read = read_trial_file(trial_dir / VERIFIER_DETAILS, limit=4 * 1024 * 1024)  # the trial's verifier wrote it
    if not read.ok:
        return None
    try:
        details = json.loads(read.text())
    except ValueError:
        return None
    checks = details.get("checks") if isinstance(details, dict) else None
    if not isinstance(checks, list):
        return None
    return [json.dumps(c.get("check"), sort_keys=True) for c in checks
            if isinstance(c, dict) and c.get("passed") is not True]


def gather(outcomes: list[TrialOutcome], pass_threshold: float, dirs: tuple[str, str]) -> dict[str, CaseEvidence]:
    """Passing with-skill trials per case, with their tool-call steps, and which of them passed every check.
    ``dirs``: the study's (workdir, skills dir), where its trials worked and found the skills."""
    workdir, skills_dir = dirs
    by_case: dict[str, CaseEvidence] = {}
    for o in outcomes:
        if o.condition != "with_skill" or o.status != "ok" or o.reward is None or o.reward < pass_threshold:
            continue
        ev = by_case.setdefault(o.case_id, CaseEvidence())
        ev.passing.append(o)
        failed = failed_checks(o.trial_dir)
        if o.reward < 1.0 or failed:
            ev.unverified.append(o.trial_dir.name if o.trial_dir else o.case_id)
        else:
            ev.verified.append(o)
        loaded = load_trial_trajectory(o.trial_dir) if o.trial_dir else None
        if loaded is None or loaded.trajectory is None:
            ev.unreadable.append(loaded.error if loaded else "trial dir not found")
            continue
        ev.steps.append(trial_steps(build_view(loaded.trajectory, workdir), skills_dir, workdir))
    return by_case


def _directives(case: EvalCase, intent: EvalIntent, intent_by_id: dict[str, EvalCase]) -> list[str]:
    if case.source == "eval_md" and case.id in intent_by_id:
        return list(intent_by_id[case.id].expected_behavior)
    return [] if case.is_negative_control else intent.directives


def _about_a_skill(step: str) -> bool:
    """A lifted step that names a skill (its SKILL.md, its scripts, its activation)."""
    return "SKILL.md" in step or "/scripts/" in step or step.startswith("activates the ")


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 3] + "...")


def _answer_checks(case: EvalCase) -> list[dict]:
    """The case's deterministic checks on the answer file (a check of another file is not about the answer)."""
    return [c.model_dump(mode="json") for c in case.checks if c.file is None]


def failing_checks(case: EvalCase, answer: str) -> list[str]:
    """The case's own answer checks that ``answer`` fails, described; the verifier's semantics."""
    out = []
    for check in _answer_checks(case):
        passed, detail = evaluate_check(check, answer)
        if not passed:
            out.append(f"{check['kind']} {check['value']!r} ({detail})")
    return out


def _pins_a_value(case: EvalCase) -> bool:
    """Whether some answer check fixes a value (an exact text, a number, or a text holding a digit)."""
    return any(c["kind"] in ("equals", "number") or (c["kind"] != "not_contains" and re.search(r"\d", str(c["value"])))
               for c in _answer_checks(case))


def contradiction(current: str | None, answer: str) -> str | None:
    """Why ``answer`` contradicts the current expected output, or None.

    The current text's values must all be in the answer: each number (within a
    relative 1e-9) and each identifier with letters and digits. A prose expected
    output ("the sum of the amount column") states no value and contradicts nothing.
    """
    if not current or not current.strip():
        return None
    found = numbers_in(answer)
    plain = _VALUE_TOKEN.sub(" ", current)  # an identifier's digits are not a number of its own
    lost = [n for n in numbers_in(plain) if not any(abs(n - m) <= 1e-9 * max(1.0, abs(n)) for m in found)]
    folded = answer.casefold()
    lost_ids = [t for t in dict.fromkeys(_VALUE_TOKEN.findall(current)) if t.casefold() not in folded]
    if not lost and not lost_ids:
        return None
    values = [f"{n:g}" for n in lost] + lost_ids
    return f"it drops {', '.join(values[:4])}{' ...' if len(values) > 4 else ''} that the current expected output states"


def _may_write(case: EvalCase, name: str) -> bool:
    if case.is_generated or name in case.proposed:
        return True
    if name == "expected_behavior":
        return case.source == "eval_md" or not case.expected_behavior
    return case.expected_output is None


def propose(
    case: EvalCase, ev: CaseEvidence | None, intent: EvalIntent, intent_by_id: dict[str, EvalCase],
    min_agree: int, report: RefineReport, confirmed: frozenset[str] = frozenset(),
) -> EvalCase:
    """The case with the proposals it may take; every decision is added to ``report``."""
    if ev is None or not ev.passing:
        report.skipped.append(f"{case.id}: no passing with-skill trial")
        return case
    update: dict = {}
    proposed = list(case.proposed)
    if ev.steps:
        lifted = [step for step in common_steps(ev.steps) if _about_a_skill(step)]
        directives = _directives(case, intent, intent_by_id)
        behavior = directives + [s for s in lifted if s not in directives]
        if not _may_write(case, "expected_behavior"):
            report.skipped.append(f"{case.id}.expected_behavior: author-written (observed: {'; '.join(lifted)})")
        elif behavior != case.expected_behavior and lifted:
            update["expected_behavior"] = behavior
            report.changes.append(
                f"{case.id}.expected_behavior: {len(lifted)} step(s) common to {len(ev.steps)} passing trial(s), "
                f"after {len(directives)} EVAL.md directive(s)"
            )
            proposed.append("expected_behavior")
    if ev.unreadable:
        report.skipped.append(f"{case.id}: {len(ev.unreadable)} passing trial(s) without a readable trajectory")
    writable = _may_write(case, "expected_output")
    answer, why = (_ground_truth(case, ev, min_agree) if writable
                   else aligned_answer([o.final_answer or "" for o in ev.passing], min_agree))
    if answer is None:
        report.skipped.append(f"{case.id}.expected_output: not proposed ({why})")
    elif not writable:
        same = normalise_answer(case.expected_output or "") == normalise_answer(answer)
        seen = "the trials agree with it" if same else f"{why} on {_short(answer)}"
        report.skipped.append(f"{case.id}.expected_output: author-written ({seen})")
    elif (failing := failing_checks(case, answer)):
        report.skipped.append(f"{case.id}.expected_output: not proposed ({_short(answer)} fails the case's own "
                              f"check(s): {'; '.join(failing)})")
    elif (clash := contradiction(case.expected_output, answer)) and case.id not in confirmed:
        report.skipped.append(
            f"{case.id}.expected_output: not proposed ({_short(answer)}, {why}, contradicts "
            f"{_short(case.expected_output or '')}: {clash}; if the current one is wrong, re-run with "
            f"--confirm {case.id})")
    elif normalise_answer(answer) != normalise_answer(case.expected_output or ""):
        update["expected_output"] = answer
        report.changes.append(f"{case.id}.expected_output: {why}"
                              + (f" (confirmed by the author over {_short(case.expected_output or '')})"
                                 if clash else "")
                              + ("" if _pins_a_value(case) else
                                 "; no check pins its value (only words are checked): review it before --apply"))
        proposed.append("expected_output")
    if not update:
        return case
    return case.model_copy(update={**update, "proposed": sorted(set(proposed))})


def _ground_truth(case: EvalCase, ev: CaseEvidence, min_agree: int) -> tuple[str | None, str]:
    """(the answer enough fully verified trials agree on, why) or (None, why nothing is proposed)."""
    if not case.checks:
        agreed, why = aligned_answer([o.final_answer or "" for o in ev.passing], min_agree)
        if agreed is None:
            return None, why
        return None, ("the case has no deterministic check, so a passing reward says nothing about the answer; "
                      "add a check or write the expected output yourself")
    if not _answer_checks(case):
        return None, "none of the case's checks reads the answer file, so no check vouches for the answer"
    if not ev.verified:
        return None, (f"none of the {len(ev.passing)} passing trial(s) passed every deterministic check "
                      f"({len(ev.unverified)} failed at least one)")
    return aligned_answer([o.final_answer or "" for o in ev.verified], min_agree)


def accept_draft(case: EvalCase, report: RefineReport) -> EvalCase:
    """A draft the author confirmed by id is reviewed: its ``status: draft`` goes (a study then runs it)."""
    if case.status != "draft":
        return case
    report.changes.append(f"{case.id}: status draft -> reviewed (confirmed by the author)")
    return case.model_copy(update={"status": "ready"})


def refine_dataset(
    skill_dir: Path, results_dir: Path, *, pass_threshold: float, min_agree: int = 2, dry_run: bool = False,
    confirm: tuple[str, ...] | list[str] = (),
) -> RefineReport:
    """Propose ``expected_behavior`` and ``expected_output`` from a results dir; write where allowed."""
    skill_dir = Path(skill_dir)
    skill = load_skill(skill_dir)
    assets = read_assets(skill_dir, skill.name)
    if assets.evals_suite is None:
        raise EvalsError(
            "no evals file to refine (refine writes only to evals/evals.json, .jsonl or .yaml)",
            where=skill_dir,
            fix="run 'aces-bench dataset create <skill-dir>' first",
        )
    intent = read_intent(skill_dir)
    intent_by_id = {c.id: c for c in intent_cases(intent, skill.name, find_eval_md(skill_dir) or skill_dir / EVAL_MD)}
    # The study's own workspace: a skills dir it moved must not read as "no skill was read".
    dirs = workspace_dirs(read_provenance(Path(results_dir) / PROVENANCE_FILE)[0])
    evidence = gather(read_outcomes(Path(results_dir), skill.name), pass_threshold, dirs)
    report = RefineReport(path=assets.evals_path)  # type: ignore[arg-type]
    known = {c.id for c in assets.evals_cases}
    unknown_confirm = sorted(set(confirm) - known)
    if unknown_confirm:
        raise EvalsError(f"--confirm names case ids the evals file does not hold: {', '.join(unknown_confirm)}",
                         where=assets.evals_path or skill_dir,
                         fix=f"use ids from {assets.evals_path.name if assets.evals_path else 'the evals file'}: "
                             f"{', '.join(sorted(known))}")
    cases = [propose(c, evidence.get(c.id), intent, intent_by_id, min_agree, report, frozenset(confirm))
             for c in assets.evals_cases]
    cases = [accept_draft(c, report) if c.id in confirm else c for c in cases]
    for c in assets.config_cases:
        report.skipped.append(f"{c.id}: from eval.config (the author's file, not rewritten)")
    unknown = sorted(set(evidence) - {c.id for c in assets.evals_cases + assets.config_cases})
    if unknown:
        report.skipped.append(f"results for case ids the skill no longer has: {', '.join(unknown)}")
    suite = assets.evals_suite.model_copy(update={"evals": cases})
    report.suite = suite
    text = render_suite(suite, assets.evals_path.suffix)  # type: ignore[union-attr]
    current = assets.evals_path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    name = assets.evals_path.relative_to(skill_dir).as_posix()  # type: ignore[union-attr]
    report.diff = "".join(difflib.unified_diff(current.splitlines(keepends=True), text.splitlines(keepends=True),
                                               fromfile=f"a/{name}", tofile=f"b/{name}"))
    if report.changes and not dry_run:
        write_text(assets.evals_path, text)  # type: ignore[arg-type]
        report.written = True
    return report

